//! `/collegium clear [--memories]` (§8.5), in its order: the command opens
//! a confirmation dialog; the dialog's submission, from a person in the
//! channel with a state that verifies and has not been used, takes every
//! agent's lane here, posts the notice that is the boundary (nothing
//! changes if it cannot), cuts the store in one transaction, gives the
//! lanes back, then deletes the posts from Mattermost and, where some
//! remain, says how many on the notice. Refused while any turn runs here,
//! parked on a person included, at the command and again at confirmation.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use mattermost_wire::model::{OpenDialogRequest, Post, SubmitDialogRequest};
use serde_json::{Value, json};
use tracing::{info, warn};

use super::notice::notice_post;
use super::{CommandRequest, agents_here, ephemeral};
use crate::chat::rest::Rest;
use crate::clearing::{Taken, delete, dialog};
use crate::services::Services;
use crate::store::ClearDialog;

/// Where the confirmation dialog submits.
pub const ROUTE: &str = "/mattermost/clear";

/// The command: checks, then opens the confirmation dialog.
pub async fn clear(services: &Services, request: &CommandRequest, words: &[&str]) -> Json<Value> {
    let memories = match words {
        [] => false,
        [flag] if flag.eq_ignore_ascii_case("--memories") => true,
        _ => {
            return ephemeral(
                "Use `/collegium clear` or `/collegium clear --memories`; a confirmation follows.",
            );
        }
    };
    if let Err(refusal) = may_clear(services, &request.channel_id, &request.user_id).await {
        return ephemeral(&refusal);
    }
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let opened = ClearDialog {
        channel_id: request.channel_id.clone(),
        invoker_id: request.user_id.clone(),
        memories,
        opened_at: chrono::Utc::now().timestamp_millis(),
    };
    let (recorded_nonce, recorded) = (nonce.clone(), opened.clone());
    if let Err(error) = services
        .store
        .call(move |s| s.open_clear_dialog(&recorded_nonce, &recorded))
        .await
    {
        return ephemeral(&format!(
            "The confirmation could not be prepared ({error}); nothing changed."
        ));
    }
    let state = dialog::state(
        services.decision_key.expose(),
        &nonce,
        &request.channel_id,
        &request.user_id,
        memories,
    );
    let open = OpenDialogRequest {
        trigger_id: request.trigger_id.clone(),
        url: format!("{}{ROUTE}", services.callback_url),
        dialog: dialog::dialog(state, memories),
    };
    let sent: Result<Value, _> = services
        .system_bot
        .rest
        .post("actions/dialogs/open", &open)
        .await;
    match sent {
        Ok(_) => Json(json!({})),
        Err(error) => ephemeral(&format!(
            "The confirmation could not be opened ({error}); nothing changed. Try `/collegium clear` again."
        )),
    }
}

/// Whether `user_id` may clear the channel now: a person in it, with no
/// turn running there; else the line they read.
async fn may_clear(services: &Services, channel_id: &str, user_id: &str) -> Result<(), String> {
    super::person_in(services, channel_id, user_id, "clear it").await?;
    let mut running: Vec<String> = services
        .controls
        .running()
        .into_iter()
        .filter(|r| r.channel_id == channel_id)
        .map(|r| {
            let name = services.display_name(&r.agent).to_string();
            if r.working_for.is_none() {
                format!("{name} (waiting on a person)")
            } else {
                name
            }
        })
        .collect();
    if running.is_empty() {
        return Ok(());
    }
    running.sort();
    Err(busy(&running.join(", ")))
}

fn busy(who: &str) -> String {
    format!(
        "A turn is running here ({who}), and a clear waits for none: nothing changed. Let it finish, answer what it waits on, or end it with `/collegium stop` or `/collegium kill`, then clear again."
    )
}

fn refused(text: &str) -> Json<Value> {
    Json(json!({"error": text}))
}

/// The dialog's submission.
pub async fn submitted(
    State(routes): State<super::super::Routes>,
    Json(submission): Json<SubmitDialogRequest>,
) -> Result<Json<Value>, StatusCode> {
    let services = &routes.services;
    let Some((nonce, memories)) = dialog::verified(
        services.decision_key.expose(),
        &submission.state,
        &submission.channel_id,
        &submission.user_id,
    ) else {
        warn!(channel = %submission.channel_id, "a clear confirmation whose state does not check out");
        return Err(StatusCode::FORBIDDEN);
    };
    let now = chrono::Utc::now().timestamp_millis();
    let settled = services
        .store
        .call(move |s| s.settle_clear_dialog(&nonce, now))
        .await;
    let opened = match settled {
        Ok(Some(opened)) => opened,
        Ok(None) => {
            return Ok(refused(
                "This confirmation was already used; nothing changed. Run `/collegium clear` again to clear the channel.",
            ));
        }
        Err(error) => {
            return Ok(refused(&format!(
                "The confirmation could not be checked ({error}); nothing changed."
            )));
        }
    };
    if submission.cancelled {
        return Ok(Json(json!({})));
    }
    if opened.channel_id != submission.channel_id
        || opened.invoker_id != submission.user_id
        || opened.memories != memories
    {
        return Err(StatusCode::FORBIDDEN);
    }
    if now - opened.opened_at > dialog::LIFETIME_MS {
        return Ok(refused(
            "This confirmation stood open too long; nothing changed. Run `/collegium clear` again.",
        ));
    }
    // In a task of its own: Mattermost gives up on a slow answer and drops
    // the request's future, and a clear stopped between its notice and the
    // store's cut, or between the cut and the deletions, would leave the
    // channel saying one thing and holding another (§8.5, A4).
    let (services, lanes) = (Arc::clone(services), routes.lanes.clone());
    let outcome = tokio::spawn(async move { confirmed(&services, &lanes, &opened).await }).await;
    Ok(match outcome {
        Ok(Ok(())) => Json(json!({})),
        Ok(Err(refusal)) => refused(&refusal),
        Err(error) => refused(&format!("The clear stopped unexpectedly ({error}).")),
    })
}

/// The clear itself, once confirmed.
async fn confirmed(
    services: &Arc<Services>,
    lanes: &tokio::sync::mpsc::Sender<crate::lanes::LaneInput>,
    opened: &ClearDialog,
) -> Result<(), String> {
    let channel_id = &opened.channel_id;
    may_clear(services, channel_id, &opened.invoker_id).await?;
    let Some(taken) = Taken::take(lanes, channel_id).await else {
        return Err(busy("a turn starting or an announcement on its way"));
    };
    let (channel, user) = (channel_id.clone(), opened.invoker_id.clone());
    let by = services
        .store
        .call(move |s| s.member(&channel, &user))
        .await
        .ok()
        .flatten()
        .map(|m| m.username)
        .unwrap_or_default();
    let text = notice_text(&by, opened.memories);
    let voices = agents_here(services, channel_id).await;
    let (notice, rest) = notice_post(services, channel_id, &voices, text.clone())
        .await
        .map_err(|error| {
            format!("The clear's notice could not be posted ({error}), so nothing changed.")
        })?;
    let (channel, before, memories) = (channel_id.clone(), notice.create_at, opened.memories);
    let cut = services
        .store
        .call(move |s| s.clear_channel(&channel, before, memories))
        .await;
    drop(taken);
    let cut = match cut {
        Ok(cut) => cut,
        Err(error) => {
            let said = format!(
                "The store could not be cut ({error}), so nothing changed: every post and every agent's record of it stand. Run `/collegium clear` again."
            );
            amend(&rest, &notice, &text, &said).await;
            return Err(said);
        }
    };
    info!(channel = %channel_id, ?cut, by = %by, "channel cleared in the store");
    // Mattermost's deletions may take longer than a dialog's answer may
    // wait (30 s); the store is cut, so the rest is stated on the notice.
    let channel = channel_id.clone();
    tokio::spawn(async move {
        let deleted = delete::older_than(&rest, &channel, &notice).await;
        info!(channel = %channel, deleted = deleted.deleted, remaining = deleted.remaining, "cleared posts deleted from Mattermost");
        if let Some(said) = remains(&deleted) {
            amend(&rest, &notice, &text, &said).await;
        }
    });
    Ok(())
}

/// The notice: the boundary (§8.5).
fn notice_text(by: &str, memories: bool) -> String {
    let memories = if memories {
        " Memories their turns here wrote are deleted too."
    } else {
        " Memories are kept."
    };
    format!(
        "🧹 This channel was cleared at @{by}'s command: every post before this notice is deleted from Mattermost, and every agent's record of it from the store.{memories}"
    )
}

/// What the notice adds where posts remain after the deletions.
fn remains(deleted: &delete::Deleted) -> Option<String> {
    let error = deleted.first_error.as_deref().unwrap_or("no reason given");
    if deleted.unlisted {
        return Some(format!(
            "⚠️ The posts before this notice could not be listed for deletion ({error}), so they remain in Mattermost. Agents have already forgotten them; `/collegium clear` again removes what remains."
        ));
    }
    match deleted.remaining {
        0 => None,
        1 => Some(format!(
            "⚠️ 1 post before this notice could not be deleted from Mattermost ({error}) and remains. Agents have already forgotten it; `/collegium clear` again removes it."
        )),
        n => Some(format!(
            "⚠️ {n} posts before this notice could not be deleted from Mattermost ({error}) and remain. Agents have already forgotten them; `/collegium clear` again removes what remains."
        )),
    }
}

/// Adds `said` to the notice; where the edit fails, the log keeps it.
async fn amend(rest: &Rest, notice: &Post, text: &str, said: &str) {
    let props = serde_json::to_value(&notice.props).unwrap_or_else(|_| json!({}));
    if let Err(error) = rest
        .replace_post(&notice.id, &format!("{text}\n\n{said}"), props)
        .await
    {
        warn!(%error, %said, "could not amend the clear's notice");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s8_5_the_notice_counts_what_remains() {
        let none = delete::Deleted::default();
        assert_eq!(remains(&none), None);
        let some = delete::Deleted {
            deleted: 3,
            remaining: 4,
            first_error: Some("Mattermost answered 500".into()),
            unlisted: false,
        };
        let said = remains(&some).expect("said");
        assert!(said.contains("4 posts") && said.contains("500") && said.contains("clear` again"));
        assert!(notice_text("ana", false).contains("Memories are kept"));
    }
}
