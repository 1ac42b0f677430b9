//! Stalls are announced (§7.6): a queue standing with no turn running, and
//! a turn holding its channel long past a threshold (time parked on a
//! person not counted). The system bot names each once per episode, in the
//! channel, and never acts: the person reading it decides. Nothing is said
//! while a global halt stands.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tracing::warn;

use crate::chat::directory::framework_post;
use crate::services::{RunningTurn, Services};
use crate::store::ChannelKind;

/// How often the sweep looks.
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Runs the sweep until `stop`.
pub async fn watch(services: Arc<Services>, mut stop: watch::Receiver<bool>) {
    let mut queues: HashSet<(String, String)> = HashSet::new();
    // Turn id → queued rows behind it when announced, and whether the
    // second notice (work now waiting) was given.
    let mut turns: HashMap<String, (u32, bool)> = HashMap::new();
    let mut every = tokio::time::interval(SWEEP_EVERY);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.changed() => return,
        }
        if services.controls.global_halt().is_some() {
            continue;
        }
        sweep(&services, &mut queues, &mut turns).await;
    }
}

async fn sweep(
    services: &Services,
    announced_queues: &mut HashSet<(String, String)>,
    announced_turns: &mut HashMap<String, (u32, bool)>,
) {
    let standing = services
        .store
        .call(|s| s.standing_queues())
        .await
        .unwrap_or_default();
    let now = chrono::Utc::now().timestamp_millis();
    let running = services.controls.running();
    let queue_threshold = i64::from(services.limits.stall_queue_secs) * 1000;
    let mut still: HashSet<(String, String)> = HashSet::new();
    for (agent, channel, count, idle_since) in &standing {
        let busy = running
            .iter()
            .any(|r| &r.agent == agent && &r.channel_id == channel);
        if busy || now - idle_since < queue_threshold {
            continue;
        }
        let lane = (agent.clone(), channel.clone());
        still.insert(lane.clone());
        if announced_queues.insert(lane) {
            let name = display(services, agent);
            let minutes = (now - idle_since) / 60_000;
            let text = format!(
                "{name} has had {count} post{} waiting here for {} with no turn running. A post \
                 addressing {name} starts one; `/collegium queue {agent}` shows what waits.",
                if *count == 1 { "" } else { "s" },
                since_words(minutes)
            );
            announce(services, agent, channel, &text).await;
        }
    }
    // Re-armed once the condition clears.
    announced_queues.retain(|lane| still.contains(lane));

    let turn_threshold = Duration::from_secs(u64::from(services.limits.stall_turn_secs));
    for turn in &running {
        let behind = standing
            .iter()
            .find(|(a, c, ..)| *a == turn.agent && *c == turn.channel_id)
            .map_or(0, |(_, _, n, _)| *n);
        let prior = announced_turns.get(&turn.turn_id).copied();
        let held = turn.working_for.unwrap_or_default();
        let name = display(services, &turn.agent);
        let minutes = i64::try_from(held.as_secs() / 60).unwrap_or(i64::MAX);
        match long_turn(prior, turn.working_for, turn_threshold, behind) {
            LongTurn::Quiet => {}
            LongTurn::Cleared => {
                announced_turns.remove(&turn.turn_id);
            }
            LongTurn::First => {
                open_status_post(services, turn).await;
                let text = format!(
                    "{name}'s turn here has run for {}{}. If its status post shows no progress, \
                     `/collegium kill` ends it.",
                    since_words(minutes),
                    if turn.called {
                        ""
                    } else {
                        " without calling a tool yet"
                    }
                );
                announce(services, &turn.agent, &turn.channel_id, &text).await;
                announced_turns.insert(turn.turn_id.clone(), (behind, false));
            }
            LongTurn::WorkWaiting => {
                let text = format!(
                    "{name}'s long turn here is still running, and {behind} post{} now wait{} behind it.",
                    if behind == 1 { "" } else { "s" },
                    if behind == 1 { "s" } else { "" }
                );
                announce(services, &turn.agent, &turn.channel_id, &text).await;
                announced_turns.insert(turn.turn_id.clone(), (behind, true));
            }
        }
    }
    announced_turns.retain(|id, _| running.iter().any(|r| &r.turn_id == id));
}

/// What the sweep owes a running turn (§7.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LongTurn {
    /// Nothing to say, or said already.
    Quiet,
    /// Its episode ended: it waits on a person, or has worked under the
    /// threshold since it last did, so the notice is re-armed.
    Cleared,
    /// The episode's notice.
    First,
    /// The one further notice: a post queued behind it since.
    WorkWaiting,
}

/// The long-turn rule (§7.6). `prior` is what was said this episode (rows
/// behind it then, whether work waiting was said); `working_for` the time
/// held since it started or last waited on a person, none while it waits;
/// `behind` the rows queued behind it now.
fn long_turn(
    prior: Option<(u32, bool)>,
    working_for: Option<Duration>,
    threshold: Duration,
    behind: u32,
) -> LongTurn {
    let over = working_for.is_some_and(|held| held >= threshold);
    match prior {
        // Time parked is not counted: a wait on a person ends the episode,
        // and the clock starts again when it works again.
        Some(_) if !over => LongTurn::Cleared,
        None if over => LongTurn::First,
        // A post queued behind it is a new fact about an old episode.
        Some((at_notice, false)) if behind > at_notice => LongTurn::WorkWaiting,
        _ => LongTurn::Quiet,
    }
}

/// A long turn with no status post gets one before it is named (§7.6), so
/// the notice's "its status post" points at something; the turn edits it
/// from then on.
async fn open_status_post(services: &Services, turn: &RunningTurn) {
    let Some(seat) = services.seat(&turn.agent) else {
        return;
    };
    let mut slot = turn.status.lock().await;
    if slot.is_none() {
        let body = "⏳ _working; no tool called yet_".to_string();
        *slot = crate::turns::status_post::open(
            &seat.rest,
            &services.store,
            &turn.channel_id,
            &turn.turn_id,
            body,
        )
        .await;
    }
}

fn since_words(minutes: i64) -> String {
    match minutes {
        0 => "under a minute".into(),
        1 => "a minute".into(),
        n => format!("{n} minutes"),
    }
}

fn display(services: &Services, agent: &str) -> String {
    services.display_name(agent).to_string()
}

/// From the system bot, or under the agent's own account in a direct
/// message (§3.2).
async fn announce(services: &Services, agent: &str, channel_id: &str, text: &str) {
    let channel = channel_id.to_string();
    let kind = services
        .store
        .call(move |s| s.channel(&channel))
        .await
        .ok()
        .flatten()
        .map(|c| c.kind);
    let rest = match (kind, services.seat(agent)) {
        (Some(ChannelKind::Direct | ChannelKind::Group), Some(seat)) => &seat.rest,
        _ => &services.system_bot.rest,
    };
    let notice = framework_post(channel_id.to_string(), text.to_string(), "notice", None);
    if let Err(error) = rest.create_post(&notice).await {
        warn!(%error, "could not announce a stall");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THRESHOLD: Duration = Duration::from_secs(60);

    #[test]
    fn s7_6_a_long_turn_is_announced_again_after_it_waited_on_a_person() {
        let long = Some(Duration::from_secs(90));
        assert_eq!(long_turn(None, long, THRESHOLD, 0), LongTurn::First);
        assert_eq!(
            long_turn(Some((0, false)), long, THRESHOLD, 0),
            LongTurn::Quiet
        );
        // It parks on a person: the episode ends and the notice re-arms.
        assert_eq!(
            long_turn(Some((0, false)), None, THRESHOLD, 0),
            LongTurn::Cleared
        );
        // Working again, its clock starts from the wait's end.
        let again = Some(Duration::from_secs(5));
        assert_eq!(long_turn(None, again, THRESHOLD, 0), LongTurn::Quiet);
        assert_eq!(long_turn(None, long, THRESHOLD, 0), LongTurn::First);
    }

    #[test]
    fn s7_6_a_long_turn_is_re_armed_once_when_work_queues_behind_it() {
        let long = Some(Duration::from_secs(90));
        assert_eq!(
            long_turn(Some((0, false)), long, THRESHOLD, 1),
            LongTurn::WorkWaiting
        );
        assert_eq!(
            long_turn(Some((1, true)), long, THRESHOLD, 2),
            LongTurn::Quiet
        );
    }
}
