//! `GET /api/v4/websocket` (contract §B): authentication by header at the
//! upgrade or by challenge after it; `hello` as event 0 on every new
//! connection, with a fresh `connection_id` (this server never resumes);
//! responses marked by `seq_reply`; `ping` and `user_typing` actions.

use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use mattermost_wire::model::{AppError, JsonMap, WebSocketRequest, WebSocketResponse};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::error::ApiError;
use crate::hub::{self, Outgoing};
use crate::ids::new_id;
use crate::state::AppState;
use crate::state::settings::SERVER_VERSION;

/// How long a connection may stay unauthenticated.
const AUTH_GRACE: Duration = Duration::from_secs(5);

pub async fn upgrade(
    State(sim): State<AppState>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let token = crate::auth::token_of(&headers);
    ws.on_upgrade(move |socket| run(sim, socket, token))
}

struct Session {
    user_id: String,
}

/// What the server does with one request.
enum Reply {
    Send(WebSocketResponse),
    /// Nothing at all: a repeated challenge, or a ping while pongs stall.
    Silent,
    /// Close without an error frame: a failed challenge.
    Close,
}

async fn run(sim: AppState, socket: WebSocket, header_token: Option<String>) {
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Outgoing>();
    let writer = tokio::spawn(async move {
        while let Some(outgoing) = rx.recv().await {
            if let Some(when) = outgoing.not_before {
                tokio::time::sleep_until(when).await;
            }
            let closing = matches!(outgoing.message, Message::Close(_));
            if sink.send(outgoing.message).await.is_err() || closing {
                break;
            }
        }
    });
    let connection_id = new_id();
    // A token at the upgrade that names no session leaves the connection
    // unauthenticated, not closed: Mattermost's websocket route does not
    // require a session, so the client may still answer the challenge.
    let mut session =
        header_token.and_then(|token| authenticate(&sim, &token, &connection_id, &tx));
    loop {
        let next = if session.is_some() {
            stream.next().await
        } else {
            match tokio::time::timeout(AUTH_GRACE, stream.next()).await {
                Ok(next) => next,
                Err(_) => break,
            }
        };
        let Some(Ok(message)) = next else { break };
        let text = match message {
            Message::Text(text) => text.to_string(),
            Message::Close(_) => break,
            _ => continue,
        };
        let Ok(request) = serde_json::from_str::<WebSocketRequest>(&text) else {
            continue;
        };
        match handle(&sim, &request, &mut session, &connection_id, &tx) {
            Reply::Send(response) => {
                if let Ok(text) = serde_json::to_string(&response) {
                    let _ = tx.send(Outgoing::now(Message::Text(text.into())));
                }
            }
            Reply::Silent => {}
            Reply::Close => {
                let _ = tx.send(Outgoing::now(Message::Close(None)));
                break;
            }
        }
    }
    sim.hub.unregister(&connection_id);
    drop(tx);
    let _ = writer.await;
}

/// Registers the connection for the token's user and sends `hello`.
fn authenticate(
    sim: &AppState,
    token: &str,
    connection_id: &str,
    tx: &mpsc::UnboundedSender<Outgoing>,
) -> Option<Session> {
    let user_id = sim.data().authenticate(token).map(|u| u.user.id.clone())?;
    let mut data = JsonMap::new();
    data.insert(
        "server_version".into(),
        Value::String(SERVER_VERSION.into()),
    );
    data.insert(
        "connection_id".into(),
        Value::String(connection_id.to_string()),
    );
    data.insert(
        "server_hostname".into(),
        Value::String("mattermost-sim".into()),
    );
    let hello = hub::event("hello", data, hub::to_user(&user_id));
    sim.hub
        .register(connection_id, &user_id, token, tx.clone(), hello);
    Some(Session { user_id })
}

fn ok(seq: i64, data: Option<JsonMap>) -> WebSocketResponse {
    WebSocketResponse {
        status: "OK".into(),
        seq_reply: seq,
        data,
        error: None,
    }
}

/// A `FAIL` response carrying an app error with its HTTP-style status.
fn fail(seq: i64, error: &ApiError) -> WebSocketResponse {
    WebSocketResponse {
        status: "FAIL".into(),
        seq_reply: seq,
        data: None,
        error: Some(AppError {
            id: error.id.to_string(),
            message: error.message.clone(),
            status_code: error.status.as_u16(),
            ..AppError::default()
        }),
    }
}

/// Mattermost's `NewInvalidWebSocketParamError`: a bad or unusable parameter.
fn invalid_param(name: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "api.websocket_handler.invalid_param.app_error",
        format!("Invalid {name} parameter."),
    )
}

/// Answers one request in the order of Mattermost's websocket router: the
/// request's form, the challenge, authentication, then the action.
fn handle(
    sim: &AppState,
    request: &WebSocketRequest,
    session: &mut Option<Session>,
    connection_id: &str,
    tx: &mpsc::UnboundedSender<Outgoing>,
) -> Reply {
    let seq = request.seq;
    if request.action.is_empty() {
        return Reply::Send(fail(
            seq,
            &ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.web_socket_router.no_action.app_error",
                "No websocket action.",
            ),
        ));
    }
    if seq <= 0 {
        return Reply::Send(fail(
            seq,
            &ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.web_socket_router.bad_seq.app_error",
                "Invalid sequence for websocket message.",
            ),
        ));
    }
    if request.action == "authentication_challenge" {
        // An authenticated connection ignores a second challenge.
        if session.is_some() {
            return Reply::Silent;
        }
        let token = request
            .data
            .get("token")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return match authenticate(sim, token, connection_id, tx) {
            Some(found) => {
                *session = Some(found);
                Reply::Send(ok(seq, None))
            }
            None => Reply::Close,
        };
    }
    let Some(active) = session.as_ref() else {
        return Reply::Send(fail(
            seq,
            &ApiError::new(
                StatusCode::UNAUTHORIZED,
                "api.web_socket_router.not_authenticated.app_error",
                "The websocket connection is not authenticated.",
            ),
        ));
    };
    let response = match request.action.as_str() {
        "ping" if sim.hub.pongs_stalled(connection_id) => return Reply::Silent,
        "ping" => {
            let mut data = JsonMap::new();
            data.insert("text".into(), Value::String("pong".into()));
            data.insert("version".into(), Value::String(SERVER_VERSION.into()));
            data.insert("server_time".into(), Value::from(sim.clock.now()));
            data.insert("node_id".into(), Value::String(String::new()));
            ok(seq, Some(data))
        }
        "user_typing" => match user_typing(sim, &active.user_id, &request.data) {
            Ok(()) => ok(seq, None),
            Err(error) => fail(seq, &error),
        },
        "get_statuses"
        | "get_statuses_by_ids"
        | "presence"
        | "user_update_active_status"
        | "posted_notify_ack" => ok(seq, Some(JsonMap::new())),
        _ => fail(
            seq,
            &ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "api.web_socket_router.bad_action.app_error",
                "Unknown action.",
            ),
        ),
    };
    Reply::Send(response)
}

/// The `user_typing` action (contract §B.5): a valid id of a channel the user
/// may post in, else Mattermost's invalid-parameter failure for either.
fn user_typing(sim: &AppState, user_id: &str, data: &JsonMap) -> Result<(), ApiError> {
    let channel_id = data
        .get("channel_id")
        .and_then(Value::as_str)
        .filter(|id| crate::ids::is_valid(id))
        .ok_or_else(|| invalid_param("channel_id"))?;
    let parent_id = data
        .get("parent_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    crate::api::system::publish_typing(sim, user_id, channel_id, parent_id)
        .map_err(|_| invalid_param("channel_id"))
}
