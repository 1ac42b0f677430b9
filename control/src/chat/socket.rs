//! One WebSocket per bot account (§8.2, contract §B): authenticated at the
//! upgrade with the bot's own token, reconnecting with backoff, and checking
//! the event sequence. A gap in `seq`, or a `hello` naming a connection other
//! than the one before, means events may have been missed: the socket says
//! so with [`SocketEvent::Resync`], and the reader catches up over REST.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use mattermost_wire::model::WebSocketEvent;
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tracing::{debug, info, warn};

/// What a bot's socket reports.
#[derive(Debug, Clone)]
pub enum SocketEvent {
    /// A server event, in sequence.
    Event {
        bot: String,
        event: Box<WebSocketEvent>,
    },
    /// The socket is (re)connected and may have missed events: the first
    /// connection of a boot, a new `connection_id`, or a `seq` gap.
    Resync { bot: String, first: bool },
}

/// A bot's socket, as the daemon runs it.
#[derive(Clone)]
pub struct BotSocket {
    pub username: String,
    pub token: collegium_worker_kit::redact::Redacted<String>,
    /// `ws://host/api/v4/websocket`.
    pub url: String,
}

/// How long the client waits before reconnecting: contract §B.4's 3 s base,
/// shortened (a bot is not a browser tab, and a mention made during a blip
/// should reach its turn quickly), growing with consecutive failures.
fn backoff(failures: u32) -> Duration {
    let base = Duration::from_millis(250);
    base.saturating_mul(failures.saturating_mul(failures).max(1))
        .min(Duration::from_secs(30))
}

/// The socket URL for a server's base URL.
pub fn url_for(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    let ws = if let Some(rest) = base.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = base.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        base.to_string()
    };
    format!("{ws}/api/v4/websocket")
}

/// Runs the bot's socket until `stop` turns true, sending what it sees to
/// `events`.
pub async fn run(
    bot: BotSocket,
    events: mpsc::Sender<SocketEvent>,
    mut stop: watch::Receiver<bool>,
) {
    let mut failures = 0u32;
    let mut connection_id = String::new();
    let mut first = true;
    loop {
        if *stop.borrow() {
            return;
        }
        let ended = tokio::select! {
            ended = session(&bot, &events, &mut connection_id, &mut first) => ended,
            _ = stop.changed() => return,
        };
        match ended {
            Ok(()) => failures = 0,
            Err(reason) => {
                failures += 1;
                warn!(bot = %bot.username, %reason, failures, "the Mattermost socket dropped; reconnecting");
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff(failures)) => {}
            _ = stop.changed() => return,
        }
    }
}

/// One connection: returns when it ends.
async fn session(
    bot: &BotSocket,
    events: &mpsc::Sender<SocketEvent>,
    connection_id: &mut String,
    first: &mut bool,
) -> Result<(), String> {
    let mut request = bot
        .url
        .as_str()
        .into_client_request()
        .map_err(|e| e.to_string())?;
    let header = format!("Bearer {}", bot.token.expose())
        .parse()
        .map_err(|_| "the token is not a valid header value".to_string())?;
    request.headers_mut().insert("Authorization", header);
    let (socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sink, mut stream) = socket.split();
    let mut expected: i64 = 0;
    let mut ping = tokio::time::interval(Duration::from_secs(30));
    let mut request_seq: i64 = 0;
    loop {
        tokio::select! {
            frame = stream.next() => {
                let Some(frame) = frame else { return Err("the server closed the socket".into()) };
                let text = match frame.map_err(|e| e.to_string())? {
                    Message::Text(text) => text,
                    Message::Close(_) => return Err("the server closed the socket".into()),
                    _ => continue,
                };
                let value: serde_json::Value = match serde_json::from_str(&text) {
                    Ok(value) => value,
                    Err(error) => { debug!(%error, "a frame that is not JSON"); continue; }
                };
                // Responses are told from events by a truthy seq_reply (§B.2).
                if value.get("seq_reply").and_then(serde_json::Value::as_i64).unwrap_or(0) != 0 {
                    continue;
                }
                let Ok(event) = serde_json::from_value::<WebSocketEvent>(value) else { continue };
                if event.event == "hello" {
                    let id = event.str("connection_id").unwrap_or_default().to_string();
                    expected = event.seq + 1;
                    if id != *connection_id || *first {
                        info!(bot = %bot.username, connection = %id, "Mattermost socket connected");
                        *connection_id = id;
                        let was_first = std::mem::replace(first, false);
                        send(events, SocketEvent::Resync { bot: bot.username.clone(), first: was_first }).await?;
                    }
                    continue;
                }
                if event.seq != expected {
                    // Events were lost: reconnect, and the new hello resyncs
                    // (contract §B.3).
                    connection_id.clear();
                    let _ = sink.send(Message::Close(None)).await;
                    return Err(format!("sequence gap: expected {expected}, got {}", event.seq));
                }
                expected += 1;
                send(events, SocketEvent::Event { bot: bot.username.clone(), event: Box::new(event) }).await?;
            }
            _ = ping.tick() => {
                request_seq += 1;
                let ping = serde_json::json!({"seq": request_seq, "action": "ping"});
                sink.send(Message::text(ping.to_string())).await.map_err(|e| e.to_string())?;
            }
        }
    }
}

async fn send(events: &mpsc::Sender<SocketEvent>, event: SocketEvent) -> Result<(), String> {
    events
        .send(event)
        .await
        .map_err(|_| "the daemon stopped reading".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_url_follows_the_scheme() {
        assert_eq!(url_for("http://mm:8065/"), "ws://mm:8065/api/v4/websocket");
        assert_eq!(
            url_for("https://mm.example"),
            "wss://mm.example/api/v4/websocket"
        );
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert!(backoff(1) < backoff(4));
        assert_eq!(backoff(1000), Duration::from_secs(30));
    }
}
