//! The trigger route (§4.2, §6.4): a webhook announcing an item to an
//! agent. It carries a secret of its own, separate from Mattermost's: a
//! sender holding it can announce work and cannot approve an action or stop
//! a turn, and Mattermost's command token does not open this route. No
//! secret configured closes the route (404). Every answer says what it
//! refused, and a refused request leaves nothing behind.

use axum::body::{Body, to_bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tracing::{info, warn};

use crate::lanes::LaneInput;
use crate::store::{NewTrigger, TriggerSource, WebhookRecorded, trigger_label};
use crate::triggers::intake;

pub const ROUTE: &str = "/triggers";

/// The largest body the route reads; a larger one is answered 413 unread.
pub const BODY_MAX_BYTES: usize = 1024 * 1024;

/// What a sender posts.
#[derive(Debug)]
pub struct WebhookItem {
    /// The agent's username.
    pub agent: String,
    /// The channel's name (its URL handle).
    pub channel: String,
    /// Who the item is from, as the sender names itself.
    pub sender: String,
    pub subject: String,
    /// The sender's own id for the item; shown, never accepted by
    /// `triggers::resolve`.
    pub reference: String,
    pub body: String,
}

fn answer(status: StatusCode, error: impl Into<String>) -> Response {
    (status, axum::Json(json!({"error": error.into()}))).into_response()
}

pub async fn receive(
    State(routes): State<super::Routes>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let services = &routes.services;
    let Some(secret) = services
        .trigger_secret
        .as_ref()
        .map(|s| s.expose().as_str())
    else {
        return answer(
            StatusCode::NOT_FOUND,
            "the trigger route is closed: this deployment configures no callbacks.trigger_secret",
        );
    };
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !super::same_secret(presented, secret) {
        warn!("a trigger request without the trigger secret");
        return answer(
            StatusCode::UNAUTHORIZED,
            "give the trigger secret as `Authorization: Bearer SECRET`",
        );
    }
    let Ok(bytes) = to_bytes(body, BODY_MAX_BYTES).await else {
        return answer(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is larger than {BODY_MAX_BYTES} bytes"),
        );
    };
    let item = match parse(&bytes) {
        Ok(item) => item,
        Err(why) => return answer(StatusCode::BAD_REQUEST, why),
    };
    let channel_id = match intake::target(services, &item.agent, &item.channel).await {
        Ok(id) => id,
        Err(refusal) if refusal.is_target() => {
            return answer(StatusCode::UNPROCESSABLE_ENTITY, refusal.to_string());
        }
        Err(refusal) => return answer(StatusCode::SERVICE_UNAVAILABLE, refusal.to_string()),
    };
    let trigger = NewTrigger {
        source: TriggerSource::Webhook,
        agent: item.agent.clone(),
        channel_id: channel_id.clone(),
        sender: item.sender,
        subject: item.subject,
        reference: item.reference,
        body: Some(item.body),
        detail: json!({}),
    };
    let now = chrono::Utc::now().timestamp_millis();
    let most = services.trigger_outstanding_max;
    let id = match services
        .store
        .call(move |s| s.record_webhook(&trigger, most, now))
        .await
    {
        Ok(WebhookRecorded::Recorded(id)) => id,
        Ok(WebhookRecorded::Again(id)) => {
            info!(trigger = id, agent = %item.agent, "a webhook item already outstanding, sent again");
            return (
                StatusCode::OK,
                axum::Json(json!({"trigger": trigger_label(id), "recorded": "already"})),
            )
                .into_response();
        }
        Ok(WebhookRecorded::Full(outstanding)) => {
            warn!(agent = %item.agent, outstanding, "a webhook item refused: too many outstanding");
            return answer(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "@{} has {outstanding} webhook triggers outstanding, the most callbacks.trigger_outstanding_max allows; another is taken once the agent marks one done",
                    item.agent
                ),
            );
        }
        Err(error) => {
            warn!(%error, "could not record a webhook's trigger");
            return answer(
                StatusCode::SERVICE_UNAVAILABLE,
                "the trigger could not be recorded",
            );
        }
    };
    info!(trigger = id, agent = %item.agent, "webhook trigger recorded");
    let _ = routes
        .lanes
        .send(LaneInput::TriggerRecorded(channel_id))
        .await;
    (
        StatusCode::ACCEPTED,
        axum::Json(json!({"trigger": trigger_label(id)})),
    )
        .into_response()
}

/// The fields an item may carry.
const FIELDS: [&str; 6] = ["agent", "channel", "sender", "subject", "reference", "body"];

/// The item, or why it is not one, naming the field (§6.4, A4). Read by
/// hand rather than by serde's derive, whose type errors name a line and
/// a column but not the field.
pub fn parse(bytes: &[u8]) -> Result<WebhookItem, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|error| format!("the body is not JSON: {error}"))?;
    let serde_json::Value::Object(fields) = value else {
        return Err("the body is not a JSON object".into());
    };
    if let Some(unknown) = fields.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "`{unknown}` is not a field of a trigger item (its fields: {})",
            FIELDS.join(", ")
        ));
    }
    let text = |name: &str, required: bool| match fields.get(name) {
        Some(serde_json::Value::String(text)) if required && text.trim().is_empty() => {
            Err(format!("`{name}` is empty"))
        }
        Some(serde_json::Value::String(text)) => Ok(text.clone()),
        Some(_) => Err(format!("`{name}` must be a string")),
        None if required => Err(format!("`{name}` is missing")),
        None => Ok(String::new()),
    };
    Ok(WebhookItem {
        agent: text("agent", true)?,
        channel: text("channel", true)?,
        sender: text("sender", true)?,
        subject: text("subject", true)?,
        reference: text("reference", false)?,
        body: text("body", false)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_4_a_body_names_what_is_wrong_with_it() {
        let missing =
            parse(br#"{"agent":"mira","channel":"ops","sender":"ci"}"#).expect_err("missing");
        assert_eq!(missing, "`subject` is missing");
        let unknown =
            parse(br#"{"agent":"mira","channel":"ops","sender":"ci","subject":"x","bcc":"eve"}"#)
                .expect_err("unknown");
        assert!(unknown.starts_with("`bcc` is not a field"), "{unknown}");
        let empty = parse(br#"{"agent":"mira","channel":" ","sender":"ci","subject":"x"}"#)
            .expect_err("empty");
        assert_eq!(empty, "`channel` is empty");
        let not_json = parse(b"agent=mira").expect_err("not json");
        assert!(not_json.starts_with("the body is not JSON"), "{not_json}");
        let typed = parse(br#"{"agent":7,"channel":"ops","sender":"ci","subject":"x"}"#)
            .expect_err("typed");
        assert_eq!(typed, "`agent` must be a string");
        assert_eq!(
            parse(b"[1]").expect_err("array"),
            "the body is not a JSON object"
        );
    }

    #[test]
    fn s4_2_an_item_reads_whole() {
        let item = parse(
            br#"{"agent":"mira","channel":"ops","sender":"ci","subject":"Build 7","reference":"b7","body":"failed"}"#,
        )
        .expect("an item");
        assert_eq!(
            (
                item.agent.as_str(),
                item.reference.as_str(),
                item.body.as_str()
            ),
            ("mira", "b7", "failed")
        );
    }
}
