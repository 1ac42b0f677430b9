//! `GET /api/v4/websocket` (contract §B): authentication by header at the
//! upgrade or by challenge after it; `hello` as event 0 on every new
//! connection, with a fresh `connection_id` (this server never resumes);
//! responses marked by `seq_reply`; `ping` and `user_typing` actions.

use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::HeaderMap;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use mattermost_wire::model::{AppError, JsonMap, WebSocketRequest, WebSocketResponse};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::hub;
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
    let token = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    ws.on_upgrade(move |socket| run(sim, socket, token))
}

struct Session {
    user_id: String,
}

async fn run(sim: AppState, socket: WebSocket, header_token: Option<String>) {
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
    let writer = tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            let closing = matches!(message, Message::Close(_));
            if sink.send(message).await.is_err() || closing {
                break;
            }
        }
    });
    let connection_id = new_id();
    let mut session = None;
    if let Some(token) = header_token {
        match authenticate(&sim, &token, &connection_id, &tx) {
            Some(found) => session = Some(found),
            None => {
                let _ = tx.send(Message::Close(None));
            }
        }
    }
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
            Some(response) => {
                if let Ok(text) = serde_json::to_string(&response) {
                    let _ = tx.send(Message::Text(text.into()));
                }
            }
            None => {
                // A failed challenge: the server closes without an error frame.
                let _ = tx.send(Message::Close(None));
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
    tx: &mpsc::UnboundedSender<Message>,
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

fn fail(seq: i64, id: &str, message: &str) -> WebSocketResponse {
    WebSocketResponse {
        status: "FAIL".into(),
        seq_reply: seq,
        data: None,
        error: Some(AppError {
            id: id.to_string(),
            message: message.to_string(),
            status_code: 400,
            ..AppError::default()
        }),
    }
}

/// Answers one request; `None` means close the socket.
fn handle(
    sim: &AppState,
    request: &WebSocketRequest,
    session: &mut Option<Session>,
    connection_id: &str,
    tx: &mpsc::UnboundedSender<Message>,
) -> Option<WebSocketResponse> {
    let seq = request.seq;
    if request.action == "authentication_challenge" {
        if session.is_some() {
            return Some(ok(seq, None));
        }
        let token = request
            .data
            .get("token")
            .and_then(Value::as_str)
            .unwrap_or_default();
        *session = Some(authenticate(sim, token, connection_id, tx)?);
        return Some(ok(seq, None));
    }
    let Some(active) = session.as_ref() else {
        return Some(fail(
            seq,
            "api.web_socket_router.not_authenticated.app_error",
            "The websocket connection is not authenticated.",
        ));
    };
    let response = match request.action.as_str() {
        "ping" => {
            let mut data = JsonMap::new();
            data.insert("text".into(), Value::String("pong".into()));
            data.insert("version".into(), Value::String(SERVER_VERSION.into()));
            data.insert("server_time".into(), Value::from(sim.clock.now()));
            data.insert("node_id".into(), Value::String(String::new()));
            ok(seq, Some(data))
        }
        "user_typing" => {
            let channel_id = request
                .data
                .get("channel_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let parent_id = request
                .data
                .get("parent_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if channel_id.is_empty() {
                fail(
                    seq,
                    "api.websocket_handler.invalid_param.app_error",
                    "Invalid channel_id parameter.",
                )
            } else {
                match crate::api::system::publish_typing(
                    sim,
                    &active.user_id,
                    channel_id,
                    parent_id,
                ) {
                    Ok(()) => ok(seq, None),
                    Err(error) => fail(seq, error.id, &error.message),
                }
            }
        }
        "get_statuses"
        | "get_statuses_by_ids"
        | "presence"
        | "user_update_active_status"
        | "posted_notify_ack" => ok(seq, Some(JsonMap::new())),
        _ => fail(
            seq,
            "api.web_socket_router.bad_action.app_error",
            "Unknown action.",
        ),
    };
    Some(response)
}
