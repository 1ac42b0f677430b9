//! Interactive buttons and dialogs (contract §A.10, §C): a click is sent to
//! the action's stored integration with the clicker's identity and a fresh
//! trigger id; the answer may update the post or tell the clicker something;
//! a dialog opened with a trigger id reaches only that trigger's user.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use mattermost_wire::model::{
    JsonMap, OpenDialogRequest, Post, PostActionIntegrationRequest, PostActionResponse, StatusOk,
    SubmitDialogRequest,
};
use serde::Deserialize;
use serde_json::Value;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, JsonBody};
use crate::hub;
use crate::outgoing::{self, Body};
use crate::posting::{self, Outbound, deliver};
use crate::state::AppState;

fn integration_failed(detail: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "api.post.do_action.action_integration.app_error",
        format!("Action integration error: {detail}"),
    )
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ClickBody {
    selected_option: String,
}

/// The stored action of a post, integration included.
fn find_action(post: &Post, action_id: &str) -> Option<JsonMap> {
    post.props
        .get("attachments")?
        .as_array()?
        .iter()
        .filter_map(|a| a.get("actions")?.as_array())
        .flatten()
        .filter_map(Value::as_object)
        .find(|a| a.get("id").and_then(Value::as_str) == Some(action_id))
        .cloned()
}

/// Clicks a button as `user_id`: the whole flow of contract §C.2.
pub async fn click(
    sim: &AppState,
    user_id: &str,
    post_id: &str,
    action_id: &str,
    selected_option: &str,
) -> ApiResult<PostActionResponse> {
    let not_found = || ApiError::not_found("api.post.do_action.action_id.app_error", "action");
    let (request, url) = {
        let data = sim.data();
        let post = data.post(post_id).map_err(|_| not_found())?.clone();
        let channel = data.readable_channel(&post.channel_id, user_id)?.clone();
        let action = find_action(&post, action_id).ok_or_else(not_found)?;
        let integration = action
            .get("integration")
            .and_then(Value::as_object)
            .ok_or_else(not_found)?;
        let url = integration
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let mut context = integration
            .get("context")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let kind = action
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("button")
            .to_string();
        if kind == "select" {
            context.insert(
                "selected_option".into(),
                Value::String(selected_option.to_string()),
            );
        }
        let team = data.teams.get(&channel.team_id);
        let request = PostActionIntegrationRequest {
            user_id: user_id.to_string(),
            user_name: data.user(user_id)?.user.username.clone(),
            channel_id: channel.id.clone(),
            channel_name: channel.name.clone(),
            team_id: channel.team_id.clone(),
            team_domain: team.map(|t| t.name.clone()).unwrap_or_default(),
            post_id: post.id.clone(),
            trigger_id: String::new(),
            kind,
            data_source: action
                .get("data_source")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            context,
        };
        (request, url)
    };
    let trigger_id = outgoing::issue_trigger(sim, user_id);
    let request = PostActionIntegrationRequest {
        trigger_id: trigger_id.clone(),
        ..request
    };
    let body = serde_json::to_value(&request).map_err(integration_failed)?;
    // Mattermost signs nothing: no authentication header goes with a click.
    let reply = outgoing::send(sim, "action", &url, Body::Json(body), &[])
        .await
        .map_err(integration_failed)?;
    if reply.status != 200 {
        return Err(integration_failed(format!("status={}", reply.status)));
    }
    // An empty body is a silent success; anything else must be a JSON object.
    let answer: JsonMap = if reply.body.trim().is_empty() {
        JsonMap::new()
    } else {
        serde_json::from_str(&reply.body).map_err(integration_failed)?
    };
    apply_answer(sim, user_id, post_id, &answer)?;
    Ok(PostActionResponse {
        status: "OK".into(),
        trigger_id,
    })
}

/// Props of the clicked post that an action's answer cannot change: kept
/// where the post had them, removed where it did not
/// (`PostActionRetainPropKeys`).
const RETAINED_PROPS: &[&str] = &["from_webhook", "override_username", "override_icon_url"];

/// Applies an integration's `update` and `ephemeral_text` (contract §C.3).
fn apply_answer(sim: &AppState, user_id: &str, post_id: &str, answer: &JsonMap) -> ApiResult<()> {
    let now = sim.clock.now();
    let mut outbound: Vec<Outbound> = Vec::new();
    let mut data = sim.data();
    let original = data.post(post_id)?.clone();
    let retained: JsonMap = RETAINED_PROPS
        .iter()
        .filter_map(|key| {
            original
                .props
                .get(*key)
                .map(|v| ((*key).to_string(), v.clone()))
        })
        .collect();
    if let Some(update) = answer.get("update").and_then(Value::as_object) {
        let (_, events) = posting::update(&mut data, post_id, now, |post| {
            apply_update(post, update, &retained);
            Ok(())
        })?;
        outbound.extend(events);
    }
    if let Some(text) = answer
        .get("ephemeral_text")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        // Threaded under the clicked post's thread: its root, or itself.
        let root = if original.root_id.is_empty() {
            original.id.clone()
        } else {
            original.root_id.clone()
        };
        let mut notice = posting::ephemeral_post(user_id, &original.channel_id, &root, text, now);
        notice.props = retained;
        outbound.push(Outbound::Ephemeral {
            to: user_id.to_string(),
            post: Box::new(notice),
        });
    }
    drop(data);
    deliver(sim, outbound);
    Ok(())
}

/// An `update` replaces the post as a full update does: its message and files
/// (absent ones become empty); its props only when present and not null —
/// otherwise the old props, buttons included, stay — with the retained props
/// restored. The pin and reactions are the post's own.
fn apply_update(post: &mut Post, update: &JsonMap, retained: &JsonMap) {
    post.message = update
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    post.file_ids = update
        .get("file_ids")
        .and_then(|ids| serde_json::from_value(ids.clone()).ok())
        .unwrap_or_default();
    if let Some(props) = update.get("props").and_then(Value::as_object) {
        let mut replaced = props.clone();
        for key in RETAINED_PROPS {
            replaced.remove(*key);
        }
        replaced.extend(retained.clone());
        post.props = replaced;
    }
}

pub async fn do_action(
    State(sim): State<AppState>,
    caller: Caller,
    Path((post_id, action_id)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> ApiResult<Json<PostActionResponse>> {
    // The route matches letters and digits only, as Mattermost's does.
    if action_id.is_empty() || !action_id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "api.context.404.app_error",
            "Sorry, we could not find the page.",
        ));
    }
    // The body is optional: `{}`, `{selected_option, cookie}` or nothing.
    let selected = serde_json::from_slice::<ClickBody>(&body)
        .map(|b| b.selected_option)
        .unwrap_or_default();
    Ok(Json(
        click(&sim, &caller.user_id, &post_id, &action_id, &selected).await?,
    ))
}

fn trigger_error(id: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, id, message)
}

/// `POST /actions/dialogs/open`: no session needed; the trigger id is the
/// credential, and it expires.
pub async fn open_dialog(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<OpenDialogRequest>,
) -> ApiResult<Json<StatusOk>> {
    if request.url.is_empty() {
        return Err(ApiError::invalid_param("url"));
    }
    let trigger = sim
        .transient()
        .triggers
        .get(&request.trigger_id)
        .cloned()
        .ok_or_else(|| {
            trigger_error(
                "interactive_message.decode_trigger_id.missing_data",
                "Trigger ID missing required data.",
            )
        })?;
    let lifetime = sim.data().settings.trigger_id_lifetime_ms;
    if sim.clock.now() - trigger.issued_at > lifetime {
        return Err(trigger_error(
            "interactive_message.decode_trigger_id.expired",
            "Trigger ID for interactive dialog is expired.",
        ));
    }
    if request.dialog.title.chars().count() > 24 {
        tracing::warn!(title = %request.dialog.title, "dialog title longer than 24 characters; a real client may refuse it");
    }
    let mut data = JsonMap::new();
    data.insert(
        "dialog".into(),
        Value::String(posting::json_string(&request)),
    );
    let event = hub::event("open_dialog", data, hub::to_user(&trigger.user_id));
    sim.transient()
        .dialogs
        .entry(trigger.user_id.clone())
        .or_default()
        .push(request);
    sim.hub.to_user(&trigger.user_id, &event);
    Ok(Json(StatusOk::ok()))
}

/// The fields of an integration's answer to a submission that Mattermost
/// decodes and passes on; anything else is dropped.
const SUBMIT_RESPONSE_FIELDS: &[&str] = &["error", "errors", "type", "form"];

/// Submits (or cancels) a dialog as `user_id` (contract §C.4): the user is the
/// session's whatever the client sent, the channel must be readable, and the
/// request to the integration goes without the URL, through the same guarded
/// client as a click — so its failures are a click's 400.
pub async fn submit(
    sim: &AppState,
    user_id: &str,
    mut request: SubmitDialogRequest,
) -> ApiResult<Value> {
    if request.url.is_empty() {
        return Err(ApiError::invalid_param("url"));
    }
    {
        let data = sim.data();
        let channel = data
            .channel(&request.channel_id)
            .map_err(|_| ApiError::forbidden())?;
        if !data.can_read(channel, user_id) {
            return Err(ApiError::forbidden());
        }
        if !channel.team_id.is_empty()
            && !data.is_team_member(&channel.team_id, user_id)
            && !data.is_admin(user_id)
        {
            return Err(ApiError::forbidden());
        }
    }
    request.user_id = user_id.to_string();
    request.kind = "dialog_submission".into();
    let url = std::mem::take(&mut request.url);
    let mut body = serde_json::to_value(&request).map_err(integration_failed)?;
    if let Some(fields) = body.as_object_mut() {
        fields.remove("url");
    }
    let reply = outgoing::send(sim, "dialog", &url, Body::Json(body), &[])
        .await
        .map_err(integration_failed)?;
    if reply.status != 200 {
        return Err(integration_failed(format!("status={}", reply.status)));
    }
    if reply.body.trim().is_empty() {
        return Ok(Value::Object(JsonMap::new()));
    }
    let answer: JsonMap = serde_json::from_str(&reply.body).map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "app.submit_interactive_dialog.decode_json_error",
            e.to_string(),
        )
    })?;
    Ok(Value::Object(
        answer
            .into_iter()
            .filter(|(key, value)| {
                SUBMIT_RESPONSE_FIELDS.contains(&key.as_str()) && !is_empty_value(value)
            })
            .collect(),
    ))
}

/// Go's `omitempty`: empty strings, maps and nulls are not written.
fn is_empty_value(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

pub async fn submit_dialog(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(request): JsonBody<SubmitDialogRequest>,
) -> ApiResult<Json<Value>> {
    Ok(Json(submit(&sim, &caller.user_id, request).await?))
}
