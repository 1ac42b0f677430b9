//! The decision route (§3.7, §3.7a, §6.4): a click on Approve or Deny or on
//! a question's offered answer, or the dialog submitting a denial's reason
//! or a written answer. Any person in the channel may decide; a click from
//! outside it, from a bot, or on a decided prompt is answered with an
//! ephemeral line and changes nothing. Two concurrent clicks record exactly
//! one decision.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use mattermost_wire::model::{Dialog, DialogElement, OpenDialogRequest, SubmitDialogRequest};
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::{info, warn};

use super::DIALOG_ROUTE;
use crate::approvals::presence::{Presence, presence};
use crate::approvals::{Decided, prompt, question, sign};
use crate::services::Services;
use crate::store::decisions::DecisionRecord;

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Click {
    user_id: String,
    channel_id: String,
    post_id: String,
    trigger_id: String,
    context: ClickContext,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ClickContext {
    action: String,
    approval: String,
    signature: String,
    /// Which offered answer a question's button gives (§3.7a).
    choice: Option<usize>,
}

fn ephemeral(text: &str) -> Json<Value> {
    Json(json!({"ephemeral_text": text}))
}

/// A click on one of the prompt's buttons.
pub async fn click(
    State(services): State<Arc<Services>>,
    Json(click): Json<Click>,
) -> Result<Json<Value>, StatusCode> {
    let context = &click.context;
    let button = sign::button(&context.approval, &context.action, context.choice);
    if !sign::verify(services.decision_key.expose(), &button, &context.signature) {
        warn!(post = %click.post_id, "a decision whose signature does not check out");
        return Err(StatusCode::FORBIDDEN);
    }
    let (decision, by) = match checked(
        &services,
        &context.approval,
        &click.channel_id,
        &click.user_id,
    )
    .await
    {
        Ok(checked) => checked,
        Err(refusal) => return Ok(ephemeral(&refusal)),
    };
    // The dialog's state is signed for this decision and this clicker: what
    // the clicker's client sees can submit as no one else.
    let state = sign::sign(
        services.decision_key.expose(),
        &dialog_subject(&decision.id, &click.user_id),
    );
    let trigger = (click.trigger_id.as_str(), state.as_str());
    match (decision.is_question(), context.action.as_str()) {
        (false, "approve") => Ok(decide(&services, &decision, Decided::Approved { by }).await),
        (false, "deny") => Ok(decide(&services, &decision, Decided::Denied { by }).await),
        (false, "reason") => {
            open_dialog(&services, &decision, trigger, reason_dialog(&decision)).await;
            Ok(Json(json!({})))
        }
        // The answer recorded is the text the store kept for the index, so
        // a click can only give an answer the prompt offered.
        (true, question::CHOOSE) => match context.choice.and_then(|i| decision.choices.get(i)) {
            Some(answer) => {
                let answer = answer.clone();
                Ok(decide(&services, &decision, Decided::Answered { by, answer }).await)
            }
            None => Ok(ephemeral(
                "That answer was not offered; nothing was recorded.",
            )),
        },
        (true, question::WRITE) => {
            open_dialog(&services, &decision, trigger, answer_dialog()).await;
            Ok(Json(json!({})))
        }
        _ => Ok(ephemeral("That button does nothing.")),
    }
}

/// The dialog's submission: a denial with its reason, or a question's
/// written answer.
pub async fn submitted(
    State(services): State<Arc<Services>>,
    Json(submission): Json<SubmitDialogRequest>,
) -> Result<Json<Value>, StatusCode> {
    if !sign::verify(
        services.decision_key.expose(),
        &dialog_subject(&submission.callback_id, &submission.user_id),
        &submission.state,
    ) {
        return Err(StatusCode::FORBIDDEN);
    }
    if submission.cancelled {
        return Ok(Json(json!({})));
    }
    let (decision, by) = match checked(
        &services,
        &submission.callback_id,
        &submission.channel_id,
        &submission.user_id,
    )
    .await
    {
        Ok(checked) => checked,
        Err(refusal) => return Ok(Json(json!({"error": refusal}))),
    };
    let field = if decision.is_question() {
        "answer"
    } else {
        "reason"
    };
    let words = submission
        .submission
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_string();
    if words.is_empty() {
        let hint = if decision.is_question() {
            "Write an answer, or pick one of the offered ones."
        } else {
            "Say why, or press Deny instead."
        };
        return Ok(Json(json!({"errors": {field: hint}})));
    }
    let decided = if decision.is_question() {
        Decided::Answered { by, answer: words }
    } else {
        Decided::DeniedWithReason { by, reason: words }
    };
    let answered = decide(&services, &decision, decided).await;
    // A dialog's answer cannot update the prompt: the agent edits it.
    if let Some(text) = answered.0.get("ephemeral_text").and_then(Value::as_str) {
        return Ok(Json(json!({"error": text})));
    }
    // In a task of its own, as the decision was: a dropped request must
    // not leave the decided prompt showing its buttons.
    if let Some(update) = answered.0.get("update") {
        let message = update["message"].as_str().unwrap_or_default().to_string();
        let services = Arc::clone(&services);
        tokio::spawn(async move { rewrite_prompt(&services, &decision, message).await });
    }
    Ok(Json(json!({})))
}

/// What a dialog's state signs: the decision and the one person it was
/// opened for.
fn dialog_subject(decision: &str, user_id: &str) -> String {
    format!("dialog:{decision}:{user_id}")
}

/// The approval, once the clicker may decide on it, with the clicker's
/// username from the store; else the line they read.
async fn checked(
    services: &Services,
    approval: &str,
    channel_id: &str,
    user_id: &str,
) -> Result<(DecisionRecord, String), String> {
    let (id, channel, user) = (
        approval.to_string(),
        channel_id.to_string(),
        user_id.to_string(),
    );
    let found = services
        .store
        .call(move |s| {
            let decision = s.decision(&id)?;
            Ok((decision, presence(s, &channel, &user)?))
        })
        .await
        .map_err(|e| format!("The decision could not be read: {e}"))?;
    let (Some(decision), standing) = found else {
        return Err("There is no such approval or question.".into());
    };
    let (noun, verb) = if decision.is_question() {
        ("question", "answer")
    } else {
        ("approval", "decide")
    };
    if decision.channel_id != channel_id {
        return Err(format!(
            "This {noun} belongs to another channel; nothing was recorded."
        ));
    }
    // Who decided is the member the store knows by that id, never a name
    // the request carries.
    let by = match standing {
        Presence::Person(username) => username,
        Presence::NotAPerson => return Err(format!("Only a person may {verb} this {noun}.")),
        Presence::Absent => {
            return Err(format!(
                "Only a person in this channel may {verb} this {noun}."
            ));
        }
    };
    if let (Some(outcome), Some(by)) = (&decision.outcome, &decision.decided_by) {
        return Err(format!(
            "Already decided: {} by @{by}.",
            outcome.replace('_', " ")
        ));
    }
    Ok((decision, by))
}

/// Records the decision if it is the first; wakes the turn; rewrites the
/// prompt to its terminal state without buttons.
async fn decide(
    services: &Arc<Services>,
    decision: &DecisionRecord,
    decided: Decided,
) -> Json<Value> {
    let Some(won) = record_and_wake(services, decision, decided.clone()).await else {
        return ephemeral("The decision could not be recorded: its task stopped unexpectedly.");
    };
    match won {
        Ok(true) => {}
        Ok(false) => {
            let id = decision.id.clone();
            let first = services
                .store
                .call(move |s| s.decision(&id))
                .await
                .ok()
                .flatten();
            let said = first
                .and_then(|d| {
                    Some(format!(
                        "Already decided: {} by @{}.",
                        d.outcome?.replace('_', " "),
                        d.decided_by?
                    ))
                })
                .unwrap_or_else(|| "Already decided.".into());
            return ephemeral(&said);
        }
        Err(error) => return ephemeral(&format!("The decision could not be recorded: {error}")),
    }
    Json(json!({"update": {"message": terminal(decision, &decided), "props": {}}}))
}

/// The decided prompt: its payload and who decided what, no buttons.
fn terminal(decision: &DecisionRecord, decided: &Decided) -> String {
    let line = match decided {
        Decided::Approved { by } => format!("✅ Approved by @{by}."),
        Decided::Denied { by } => format!("🚫 Denied by @{by}."),
        Decided::DeniedWithReason { by, reason } => {
            format!(
                "🚫 Denied by @{by}, who said: “{}”",
                prompt::escaped(reason)
            )
        }
        Decided::Answered { by, answer } => question::answered_line(by, answer),
    };
    prompt::terminal(&decision.payload, &line)
}

/// The decision recorded and, where it was the first, its turn woken, in a
/// task of its own: Mattermost gives up on a slow answer and a client may
/// hang up, and either drops the request's future. Dropped between the two
/// steps, the store would say "approved" while the turn waited on a wake
/// that never came and a second click read "Already decided" (§3.7, A4).
/// Where the request is gone by then, no answer will rewrite the prompt,
/// so the task rewrites it itself.
async fn record_and_wake(
    services: &Arc<Services>,
    decision: &DecisionRecord,
    decided: Decided,
) -> Option<Result<bool, String>> {
    let (told, answer) = tokio::sync::oneshot::channel();
    let (services, decision) = (Arc::clone(services), decision.clone());
    tokio::spawn(async move {
        let (id, outcome, by) = (
            decision.id.clone(),
            decided.outcome(),
            decided.by().to_string(),
        );
        let reason = decided.words().map(str::to_string);
        let now = chrono::Utc::now().timestamp_millis();
        let won = services
            .store
            .call(move |s| s.decide(&id, outcome, &by, reason.as_deref(), now))
            .await
            .map_err(|e| e.to_string());
        if won == Ok(true) {
            info!(approval = %decision.id, outcome, by = decided.by(), "approval decided");
            #[cfg(feature = "test-hooks")]
            wait_before_waking().await;
            services.parked.wake(&decision.id, decided.clone());
        }
        if told.send(won) == Err(Ok(true)) {
            warn!(approval = %decision.id, "the decided click's request was gone; the prompt is rewritten here");
            rewrite_prompt(&services, &decision, terminal(&decision, &decided)).await;
        }
    });
    answer.await.ok()
}

/// The environment variable giving the `test-hooks` build's wait, in
/// milliseconds, between recording a decision and waking its turn: the
/// window in which Mattermost, giving up on a slow answer, drops the request.
#[cfg(feature = "test-hooks")]
pub const DECIDE_DELAY_MS: &str = "COLLEGIUM_TEST_DECIDE_DELAY_MS";

/// A test hook, built only with the `test-hooks` feature the end-to-end
/// tests enable (a release build carries none, issue 21 item 8).
#[cfg(feature = "test-hooks")]
async fn wait_before_waking() {
    let Some(ms) = std::env::var(DECIDE_DELAY_MS)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return;
    };
    warn!(
        ms,
        "test hook: waiting between a decision's record and its wake"
    );
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}

/// Replaces the prompt's text by `message`, its buttons gone, through the
/// agent's own account (the prompt is its post).
async fn rewrite_prompt(services: &Services, decision: &DecisionRecord, message: String) {
    let (Some(post), Some(seat)) = (&decision.prompt_post_id, services.seat(&decision.agent))
    else {
        return;
    };
    if let Err(error) = seat.rest.replace_post(post, &message, json!({})).await {
        warn!(%error, "could not rewrite the decided prompt");
    }
}

/// The dialog a denial's reason is written in.
fn reason_dialog(decision: &DecisionRecord) -> Dialog {
    Dialog {
        title: "Deny with reason".into(),
        introduction_text: format!(
            "Say why you deny {}; the agent reads your reason.",
            decision.tool.as_deref().unwrap_or("this call")
        ),
        elements: vec![DialogElement {
            display_name: "Reason".into(),
            name: "reason".into(),
            kind: "textarea".into(),
            ..DialogElement::default()
        }],
        submit_label: "Deny".into(),
        ..Dialog::default()
    }
}

/// The dialog a question's free answer is written in (§3.7a).
fn answer_dialog() -> Dialog {
    Dialog {
        title: "Answer".into(),
        introduction_text: "The agent reads your answer as the result of its question.".into(),
        elements: vec![DialogElement {
            display_name: "Answer".into(),
            name: "answer".into(),
            kind: "textarea".into(),
            ..DialogElement::default()
        }],
        submit_label: "Answer".into(),
        ..Dialog::default()
    }
}

/// Opens `dialog` inside the click handler, before the trigger id expires
/// (contract §A.10). Its state carries the prompt's signature, so the
/// submission is checked as the click was.
async fn open_dialog(
    services: &Services,
    decision: &DecisionRecord,
    (trigger_id, signature): (&str, &str),
    dialog: Dialog,
) {
    let Some(seat) = services.seat(&decision.agent) else {
        return;
    };
    let request = OpenDialogRequest {
        trigger_id: trigger_id.to_string(),
        url: format!("{}{DIALOG_ROUTE}", services.callback_url),
        dialog: Dialog {
            callback_id: decision.id.clone(),
            state: signature.to_string(),
            ..dialog
        },
    };
    let opened: Result<Value, _> = seat.rest.post("actions/dialogs/open", &request).await;
    if let Err(error) = opened {
        warn!(%error, "could not open the dialog");
    }
}
