//! Restart (§7.3): nothing resumes. At boot every turn another process left
//! running is abandoned: its status post closed as abandoned under the
//! agent's name, its pending prompts invalidated, its record ended. A turn
//! that changed nothing has its posts returned and its starting post queued
//! again, and the lanes drain them; one that had effects is not repeated.
//! The system bot says all of it in one boot notice in the main channel,
//! with the downtime window measured against the process.

use std::fmt::Write as _;

use mattermost_wire::model::Post;
use serde_json::json;
use tracing::{info, warn};

use crate::activation;
use crate::approvals::prompt;
use crate::chat::directory::framework_post;
use crate::context::window::local_time;
use crate::services::Services;
use crate::store::{AnnounceAgain, Millis, ProcessRun, StoreError, TurnEnd};

/// The line an abandoned turn's status post ends with.
pub const ABANDONED: &str = "⚠ Abandoned: the process restarted while this turn was running.";

/// What the sweep did, for the boot notice.
#[derive(Debug, Default)]
pub struct Swept {
    pub abandoned: usize,
    /// Lanes holding posts queued again: (agent, channel).
    pub requeued: Vec<(String, String)>,
    pub requeued_posts: usize,
    /// Hand-offs the abandoned turns deferred, queued for their colleagues.
    pub hand_offs: usize,
    /// Posts not queued again because their turn had effects, by id.
    pub not_requeued: Vec<String>,
    /// Posts not queued again because an unclean stop already returned
    /// them once (§7.3), by id.
    pub returned_before: Vec<String>,
    /// The work units turns that had effects left where they stood (§3.15).
    pub units: crate::units::boot::Left,
    /// Triggers sent back to be announced again: their turn was abandoned
    /// before it had any effect, or their announcement started none (§4.2).
    pub announced_again: usize,
    /// Triggers owed another announcement that already had the one more
    /// post §4.2 allows, by label.
    pub not_announced_again: Vec<String>,
}

/// Sweeps what the previous process left. `previous` is its run record;
/// `clean` whether it stopped cleanly.
pub async fn sweep(
    services: &Services,
    previous: Option<&ProcessRun>,
) -> Result<Swept, StoreError> {
    let boot = services.boot_id.clone();
    let abandoned = services
        .store
        .call(move |s| {
            s.recover_unrecorded_posts(&boot)?;
            s.recover_unrecorded_announcements()?;
            s.abandoned_turns(&boot)
        })
        .await?;
    let clean = previous.is_some_and(|p| p.stopped_at.is_some());
    let mut swept = Swept {
        abandoned: abandoned.len(),
        ..Swept::default()
    };
    let ended: Vec<String> = abandoned.iter().map(|t| t.id.clone()).collect();
    for turn in abandoned {
        let Some(seat) = services.seat(&turn.agent) else {
            continue;
        };
        if let Some(status) = &turn.status_post_id {
            close_status_post(&seat.rest, status).await;
        }
        let id = turn.id.clone();
        let prompts = services.store.call(move |s| s.open_prompts_of(&id)).await?;
        for (decision, post, shown) in prompts {
            let now = now();
            let by = String::from("the restart");
            let decided = decision.clone();
            services
                .store
                .call(move |s| s.decide(&decided, "invalidated", &by, None, now))
                .await?;
            if let Some(post) = post {
                let text = prompt::terminal(
                    &shown,
                    "⚠ Invalidated: the process restarted before anyone decided.",
                );
                if let Err(error) = seat.rest.replace_post(&post, &text, json!({})).await {
                    warn!(%error, "could not invalidate a prompt");
                }
            }
        }
        let returning = Returning::of(&turn, clean);
        let (id, agent, channel, start) = (
            turn.id.clone(),
            turn.agent.clone(),
            turn.channel_id.clone(),
            turn.answers_post_id.clone(),
        );
        let end = TurnEnd {
            exit_kind: "abandoned".into(),
            ended_at: now(),
            ended_by: None,
            context_reach_post_id: None,
        };
        let at = now();
        let (again, named, had_effects, left, announced) = services
            .store
            .call(move |s| {
                s.end_turn(&id, &end)?;
                let mut taken: Vec<String> = s.answers(&id)?.into_iter().map(|(p, _)| p).collect();
                if let Some(start) = &start
                    && !taken.contains(start)
                {
                    taken.push(start.clone());
                }
                // A trigger's announcement is never queued (§5.2): where its
                // turn had no effect, the trigger is announced once more
                // instead, and never a third time (§4.2, §7.3).
                let announcement = match &start {
                    Some(post) => s
                        .trigger_announced_by(post)?
                        .map(|trigger| (post.clone(), trigger.id)),
                    None => None,
                };
                if let Some((post, _)) = &announcement {
                    taken.retain(|p| p != post);
                }
                if returning == Returning::Nothing {
                    // §3.15: the notice names the units such a turn was on.
                    let left = crate::units::boot::left_by(s, &agent, &channel, &id, &taken)?;
                    s.consume_taken(&id)?;
                    return Ok((Vec::new(), taken, true, left, None));
                }
                s.return_taken(&id)?;
                let mut announced = None;
                match (&announcement, &start) {
                    (Some((post, trigger)), _) => {
                        announced = Some((*trigger, s.announce_again(post)?));
                    }
                    (None, Some(post)) => {
                        s.enqueue(&agent, &channel, post, at)?;
                    }
                    (None, None) => {}
                }
                if returning == Returning::Everything {
                    return Ok((taken, Vec::new(), false, Default::default(), announced));
                }
                let (mut again, mut named) = (Vec::new(), Vec::new());
                for post in taken {
                    if s.return_after_crash(&post, at)? {
                        again.push(post);
                    } else {
                        s.drop_queued(&agent, &channel, &post)?;
                        named.push(post);
                    }
                }
                Ok((again, named, false, Default::default(), announced))
            })
            .await?;
        swept.count_announcement(announced);
        if !again.is_empty() {
            swept.requeued_posts += again.len();
            swept
                .requeued
                .push((turn.agent.clone(), turn.channel_id.clone()));
        }
        swept.units.extend(left);
        if had_effects {
            swept.not_requeued.extend(named);
        } else {
            swept.returned_before.extend(named);
        }
    }
    for turn in &ended {
        requeue_hand_offs(services, turn, &mut swept).await?;
    }
    if let Some(previous) = previous {
        let since = previous.started_at;
        let unstarted = services
            .store
            .call(move |s| {
                let mut owed = Vec::new();
                for (trigger, post) in s.unstarted_announcements(since)? {
                    owed.push((trigger, s.announce_again(&post)?));
                }
                Ok(owed)
            })
            .await?;
        for owed in unstarted {
            swept.count_announcement(Some(owed));
        }
    }
    swept.requeued.sort();
    swept.requeued.dedup();
    info!(
        abandoned = swept.abandoned,
        requeued = swept.requeued_posts,
        "restart sweep done"
    );
    Ok(swept)
}

impl Swept {
    /// A trigger owed another announcement: sent back, or named where it
    /// had its one more post already (§4.2, §7.3).
    fn count_announcement(&mut self, owed: Option<(i64, AnnounceAgain)>) {
        match owed {
            Some((_, AnnounceAgain::Sent)) => self.announced_again += 1,
            Some((trigger, AnnounceAgain::HadItsOneMore)) => self
                .not_announced_again
                .push(crate::store::trigger_label(trigger)),
            Some((_, AnnounceAgain::NotOutstanding)) | None => {}
        }
    }
}

/// What an abandoned turn gives back to its queue (§7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Returning {
    /// It changed nothing: its posts are returned and its start queued.
    Everything,
    /// It changed nothing but had made a completion before an unclean
    /// stop, so it may be what took the process down: each post is
    /// returned at most once across restarts.
    AtMostOnce,
    /// It had effects: a fresh turn could not see what it did.
    Nothing,
}

impl Returning {
    fn of(turn: &crate::store::AbandonedTurn, clean: bool) -> Self {
        if turn.had_effects {
            Self::Nothing
        } else if clean || !turn.completed_once {
            Self::Everything
        } else {
            Self::AtMostOnce
        }
    }
}

/// The hand-offs an abandoned turn deferred, recomputed from the store
/// (§7.3): each post it wrote that addresses a colleague, by the rule the
/// running turn applied and never its prompts, is queued for that
/// colleague unless the colleague has started a turn in the channel since.
async fn requeue_hand_offs(
    services: &Services,
    turn_id: &str,
    swept: &mut Swept,
) -> Result<(), StoreError> {
    let turn = turn_id.to_string();
    let written = services
        .store
        .call(move |s| {
            let mut written = Vec::new();
            for post in s.posts_of_turn(&turn, &["reply", "unit_post", "notice"])? {
                let Some(channel) = s.channel(&post.channel_id)? else {
                    continue;
                };
                let members = s.members(&post.channel_id)?;
                written.push((post, channel, members));
            }
            Ok(written)
        })
        .await?;
    for (post, channel, members) in written {
        let served = |agent: &str| services.seats.contains_key(agent);
        let activation::Activation::Addressed(colleague) =
            activation::of_post(&post, &channel, &members, &served, &services.respond_to_all)
        else {
            continue;
        };
        if colleague == post.author_name {
            continue;
        }
        let (agent, at) = (colleague.clone(), now());
        let queued = services
            .store
            .call(move |s| {
                if s.started_since(&agent, &post.channel_id, post.created_at)? {
                    return Ok(false);
                }
                s.enqueue(&agent, &post.channel_id, &post.id, at)
            })
            .await?;
        if queued {
            swept.hand_offs += 1;
            swept.requeued.push((colleague, channel.id.clone()));
        }
    }
    Ok(())
}

/// The lanes a boot drains (§7.3, §7.1): every one holding rows nobody has
/// taken — what the sweep queued again and any queue a failure left
/// standing before the restart, since pending work drains once channels go
/// idle.
pub async fn lanes_to_drain(services: &Services, swept: &Swept) -> Vec<(String, String)> {
    let mut lanes = match services.store.call(|s| s.lanes_with_queued()).await {
        Ok(lanes) => lanes,
        Err(error) => {
            warn!(%error, "could not read the standing queues; only the swept lanes drain");
            Vec::new()
        }
    };
    lanes.extend(swept.requeued.iter().cloned());
    lanes.sort();
    lanes.dedup();
    lanes
}

/// The boot notice (§7.3), from the system bot in the main channel.
pub async fn post_notice(
    services: &Services,
    main_channel_id: &str,
    previous: Option<&ProcessRun>,
    started: Millis,
    swept: &Swept,
) {
    let Some(previous) = previous else {
        return;
    };
    let at = |t: Millis| local_time(t, services.timezone);
    let mut text = match previous.stopped_at {
        Some(stopped) => format!(
            "Collegium restarted. It was down from {} to {} (a clean stop).",
            at(stopped),
            at(started)
        ),
        None => format!(
            "Collegium restarted after an unclean stop. It was last known alive at {}, and is back since {}.",
            at(previous.last_alive_at),
            at(started)
        ),
    };
    if swept.abandoned == 0 {
        text.push_str(" No work was in flight.");
    } else {
        let _ = write!(
            text,
            " {} turn{} in flight {} abandoned; {} post{} queued again.",
            swept.abandoned,
            if swept.abandoned == 1 { "" } else { "s" },
            if swept.abandoned == 1 { "was" } else { "were" },
            swept.requeued_posts,
            if swept.requeued_posts == 1 {
                " was"
            } else {
                "s were"
            },
        );
        if swept.hand_offs > 0 {
            let _ = write!(
                text,
                " {} hand-off{} to a colleague {} queued too.",
                swept.hand_offs,
                if swept.hand_offs == 1 { "" } else { "s" },
                if swept.hand_offs == 1 { "was" } else { "were" },
            );
        }
        if !swept.not_requeued.is_empty() {
            let _ = write!(
                text,
                " Not queued again, because the work may have had effects: {}.",
                swept.not_requeued.join(", ")
            );
        }
        if !swept.returned_before.is_empty() {
            let _ = write!(
                text,
                " Not queued again, because an unclean stop had already returned them once and \
                 their turn may be what stopped the process: {}.",
                swept.returned_before.join(", ")
            );
        }
        if let Some(units) =
            crate::units::boot::sentence(&swept.units, |u| services.display_name(u).to_string())
        {
            text.push(' ');
            text.push_str(&units);
        }
    }
    if swept.announced_again > 0 {
        let _ = write!(
            text,
            " {} trigger{} will be announced again.",
            swept.announced_again,
            if swept.announced_again == 1 { "" } else { "s" },
        );
    }
    if !swept.not_announced_again.is_empty() {
        let _ = write!(
            text,
            " Not announced again, because already announced twice: {}.",
            swept.not_announced_again.join(", ")
        );
    }
    let notice = framework_post(main_channel_id.to_string(), text, "notice", None);
    if let Err(error) = services.system_bot.rest.create_post(&notice).await {
        warn!(%error, "could not post the boot notice");
    }
}

/// The abandoned turn's own post says which work the restart cost.
async fn close_status_post(rest: &crate::chat::Rest, post_id: &str) {
    let current: Result<Post, _> = rest.get(&format!("posts/{post_id}")).await;
    let body = match current {
        Ok(post) => format!("{}\n{ABANDONED}", post.message),
        Err(_) => ABANDONED.to_string(),
    };
    if let Err(error) = rest.edit_post(post_id, &body).await {
        warn!(%error, "could not close an abandoned status post");
    }
}

fn now() -> Millis {
    chrono::Utc::now().timestamp_millis()
}
