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

use crate::approvals::prompt;
use crate::chat::directory::framework_post;
use crate::context::window::local_time;
use crate::store::{Millis, ProcessRun, StoreError, TurnEnd};
use crate::turns::services::Services;

/// The line an abandoned turn's status post ends with.
pub const ABANDONED: &str = "⚠ Abandoned: the process restarted while this turn was running.";

/// What the sweep did, for the boot notice.
#[derive(Debug, Default)]
pub struct Swept {
    pub abandoned: usize,
    /// Lanes holding posts queued again: (agent, channel).
    pub requeued: Vec<(String, String)>,
    pub requeued_posts: usize,
    /// Posts not queued again, by id.
    pub not_requeued: Vec<String>,
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
        .call(move |s| s.abandoned_turns(&boot))
        .await?;
    let clean = previous.is_some_and(|p| p.stopped_at.is_some());
    let mut swept = Swept {
        abandoned: abandoned.len(),
        ..Swept::default()
    };
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
        // A turn that changed nothing is queued again; where it had made a
        // completion and the process did not stop cleanly, it may be what
        // took the process down, so its posts are not queued again (§7.3).
        let requeue = !turn.had_effects && (clean || !turn.completed_once);
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
        let queued_at = now();
        let outcome = services
            .store
            .call(move |s| {
                s.end_turn(&id, &end)?;
                let taken: Vec<String> = s.answers(&id)?.into_iter().map(|(p, _)| p).collect();
                if requeue {
                    s.return_taken(&id)?;
                    if let Some(post) = &start {
                        s.enqueue(&agent, &channel, post, queued_at)?;
                    }
                    Ok((true, taken))
                } else {
                    s.consume_taken(&id)?;
                    Ok((false, taken))
                }
            })
            .await?;
        match outcome {
            (true, taken) => {
                swept.requeued_posts += taken.len().max(1);
                swept
                    .requeued
                    .push((turn.agent.clone(), turn.channel_id.clone()));
            }
            (false, taken) => swept.not_requeued.extend(taken),
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
        if !swept.not_requeued.is_empty() {
            let _ = write!(
                text,
                " Not queued again, because the work may have had effects: {}.",
                swept.not_requeued.join(", ")
            );
        }
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
