//! The hourly ceiling (§7.4): turn starts are counted from the store over
//! the trailing hour (from the last resume, which grants a fresh
//! allowance); a breach halts every agent, invalidates pending prompts and
//! says so prominently in the main channel. While the halt stands no turn
//! opens and no queue drains; `/collegium resume` clears it.

use mattermost_wire::model::NewPost;
use serde_json::json;
use tracing::warn;

use crate::approvals::prompt;
use crate::chat::directory::ROLE_PROP;
use crate::turns::control::Halt;
use crate::turns::services::Services;

/// Raises the halt; does nothing when one already stands.
pub async fn raise(services: &Services, count: u64) {
    let ceiling = services.limits.hourly_turn_ceiling;
    let reason =
        format!("{count} turns would have started within the hour; the ceiling is {ceiling}");
    if !services.controls.halt_all(&reason) {
        return;
    }
    services.controls.halt_every(&Halt {
        by: "the hourly ceiling".into(),
        kill: false,
    });
    invalidate_prompts(services).await;
    let text = format!(
        "⛔ **Every agent is halted.** {reason} (§7.4). Pending approvals are invalidated, and \
         nothing queued will run. A person who has looked at what was running can clear the \
         halt with `/collegium resume`, which grants a fresh allowance."
    );
    post_in_main_channel(services, &text).await;
}

/// Pending prompts die with a halt, as with a restart (§7.4).
async fn invalidate_prompts(services: &Services) {
    let open = services
        .store
        .call(|s| s.open_decisions(None))
        .await
        .unwrap_or_default();
    for (decision, _) in open {
        let (id, now) = (decision.id.clone(), chrono::Utc::now().timestamp_millis());
        let _ = services
            .store
            .call(move |s| s.decide(&id, "invalidated", "the hourly ceiling", None, now))
            .await;
        services.parked.wake_dropped(&decision.id);
        if let (Some(post), Some(seat)) = (&decision.prompt_post_id, services.seat(&decision.agent))
        {
            let text = prompt::terminal(
                &decision.payload,
                "⚠ Invalidated: every agent was halted at the hourly ceiling.",
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
    let notice = NewPost {
        channel_id: channel.clone(),
        message: text.to_string(),
        props: json!({ROLE_PROP: "notice"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..NewPost::default()
    };
    if let Err(error) = services.system_bot.rest.create_post(&notice).await {
        warn!(%error, "could not post in the main channel");
    }
}
