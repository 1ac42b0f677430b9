//! The global halt (§7.4): every agent stops, pending prompts are
//! invalidated, and the system bot says so prominently in the main channel.
//! While it stands no turn opens, no queue drains and no stall is
//! announced; `/collegium resume` clears it on a person's authority. The
//! hourly ceiling raises it, and so does a respond-to-all channel that
//! membership gives a second agent (§3.10).

use serde_json::json;
use tracing::warn;

use crate::approvals::prompt;
use crate::chat::directory::framework_post;
use crate::services::{Halt, Services};

/// Why every agent stops: who the halt is attributed to on status posts
/// and prompts, the reason it keeps, and the notice that announces it.
pub struct GlobalHalt {
    pub by: String,
    pub reason: String,
    pub notice: String,
}

/// Raises the halt; false, and nothing said, when one already stands.
pub async fn raise(services: &Services, halt: &GlobalHalt) -> bool {
    if !services.controls.halt_all(&halt.reason) {
        return false;
    }
    services.controls.halt_every(&Halt {
        by: halt.by.clone(),
        kill: false,
    });
    invalidate_prompts(services, &halt.by).await;
    post_in_main_channel(services, &halt.notice).await;
    true
}

/// Pending prompts die with a halt, as with a restart (§7.4).
async fn invalidate_prompts(services: &Services, by: &str) {
    let open = services
        .store
        .call(|s| s.open_decisions(None))
        .await
        .unwrap_or_default();
    for (decision, _) in open {
        let (id, now, who) = (
            decision.id.clone(),
            chrono::Utc::now().timestamp_millis(),
            by.to_string(),
        );
        let invalidated = services
            .store
            .call(move |s| s.decide(&id, "invalidated", &who, None, now))
            .await;
        // A person's decision recorded first (a click racing the halt)
        // stands, and its own answer rewrote the prompt: saying
        // "Invalidated" over it would contradict the record.
        if matches!(invalidated, Ok(false)) {
            continue;
        }
        services.parked.wake_dropped(&decision.id);
        if let (Some(post), Some(seat)) = (&decision.prompt_post_id, services.seat(&decision.agent))
        {
            let text = prompt::terminal(
                &decision.payload,
                &format!("⚠ Invalidated: every agent was halted by {by}."),
            );
            if let Err(error) = seat.rest.replace_post(post, &text, json!({})).await {
                warn!(%error, "could not invalidate a prompt");
            }
        }
    }
}

/// A notice from the system bot in the main channel.
pub async fn post_in_main_channel(services: &Services, text: &str) {
    let Some(channel) = services.main_channel_id.get() else {
        warn!("no main channel to post in");
        return;
    };
    let notice = framework_post(channel.clone(), text.to_string(), "notice", None);
    if let Err(error) = services.system_bot.rest.create_post(&notice).await {
        warn!(%error, "could not post in the main channel");
    }
}
