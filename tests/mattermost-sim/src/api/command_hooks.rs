//! A command's `response_url` (contract §D.3), as Mattermost serves it
//! (server/channels/app/command.go, `CreateCommandWebhook` and
//! `HandleCommandWebhook`; the web handler behind `/hooks/commands/{id}`):
//! every execution of a custom command gets a fresh hook bound to the
//! command, the invoker, the channel and the thread; a POST to it within 30
//! minutes (`CommandWebhookLifetime`) answers as the command's own response
//! would — ephemeral to the invoker, or in the channel as a post by the
//! invoker — at most 5 times (`TryUse(id, 5)`). An expired or unknown hook
//! is 404 `app.command_webhook.get.missing`, a sixth use 400
//! `app.command_webhook.try_use.invalid`, a body that does not parse 400
//! `web.command_webhook.parse.app_error`; success is 200 `ok` in plain text.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use mattermost_wire::model::{CommandResponse, ExecuteCommand};

use crate::error::ApiError;
use crate::state::AppState;

/// How long a hook answers, in milliseconds (`model.CommandWebhookLifetime`).
pub const LIFETIME_MS: i64 = 30 * 60 * 1000;

/// How many answers one hook takes (`TryUse(hook.Id, 5)`).
pub const MAX_USES: u32 = 5;

/// One execution's hook.
#[derive(Debug, Clone)]
pub struct CommandHook {
    pub command_id: String,
    pub user_id: String,
    pub channel_id: String,
    pub root_id: String,
    pub create_at: i64,
    pub use_count: u32,
}

pub fn routes() -> Router<AppState> {
    Router::new().route("/hooks/commands/{hook_id}", post(answer_later))
}

/// Records the hook of one execution under `id`.
pub fn record(sim: &AppState, id: &str, command_id: &str, user_id: &str, request: &ExecuteCommand) {
    let hook = CommandHook {
        command_id: command_id.to_string(),
        user_id: user_id.to_string(),
        channel_id: request.channel_id.clone(),
        root_id: request.root_id.clone(),
        create_at: sim.clock.now(),
        use_count: 0,
    };
    sim.transient().command_hooks.insert(id.to_string(), hook);
}

async fn answer_later(
    State(sim): State<AppState>,
    Path(hook_id): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    match handle(&sim, &hook_id, &headers, &body) {
        Ok(()) => (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], "ok").into_response(),
        Err(error) => error.into_response(),
    }
}

fn handle(sim: &AppState, hook_id: &str, headers: &HeaderMap, body: &str) -> Result<(), ApiError> {
    if !crate::ids::is_valid(hook_id) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.context.invalid_url_param.app_error",
            "Invalid or missing hook_id parameter in request URL.",
        ));
    }
    let response = parse(headers, body)?;
    let now = sim.clock.now();
    // Get, then TryUse, as the server does: an expired hook reads as one
    // that never existed; a used-up one is refused.
    let hook = {
        let mut transient = sim.transient();
        let Some(hook) = transient
            .command_hooks
            .get_mut(hook_id)
            .filter(|h| h.create_at > now - LIFETIME_MS)
        else {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "app.command_webhook.get.missing",
                "Unable to find the webhook.",
            ));
        };
        if hook.use_count >= MAX_USES {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "app.command_webhook.try_use.invalid",
                "Invalid webhook.",
            ));
        }
        hook.use_count += 1;
        hook.clone()
    };
    let command = sim
        .data()
        .commands
        .get(&hook.command_id)
        .filter(|c| c.delete_at == 0)
        .cloned()
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "web.command_webhook.command.app_error",
                "Couldn't find the command.",
            )
        })?;
    let request = ExecuteCommand {
        command: String::new(),
        channel_id: hook.channel_id.clone(),
        team_id: command.team_id.clone(),
        root_id: hook.root_id.clone(),
    };
    super::commands::answer_all(sim, &hook.user_id, &command, &request, &response)
}

/// The body as a CommandResponse: JSON where the content type says so,
/// else the whole body as an ephemeral text (`CommandResponseFromHTTPBody`).
fn parse(headers: &HeaderMap, body: &str) -> Result<CommandResponse, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if content_type.starts_with("application/json") {
        serde_json::from_str(body).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "web.command_webhook.parse.app_error",
                format!("Unable to parse incoming data: {e}"),
            )
        })
    } else {
        Ok(CommandResponse {
            text: body.to_string(),
            ..CommandResponse::default()
        })
    }
}
