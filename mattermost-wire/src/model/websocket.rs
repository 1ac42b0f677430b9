//! WebSocket frames (contract §B). Several `data` values are JSON documents
//! serialised into strings (`post`, `reaction`, `dialog`, `mentions`) and are
//! decoded a second time with [`WebSocketEvent::decode`].

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{AppError, JsonMap};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Broadcast {
    pub omit_users: Option<std::collections::BTreeMap<String, bool>>,
    pub user_id: String,
    pub channel_id: String,
    pub team_id: String,
    pub connection_id: String,
    pub omit_connection_id: String,
}

/// A server event: `{event, data, broadcast, seq}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WebSocketEvent {
    pub event: String,
    pub data: JsonMap,
    pub broadcast: Broadcast,
    pub seq: i64,
}

impl WebSocketEvent {
    /// A string field of `data`.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.data.get(key).and_then(serde_json::Value::as_str)
    }

    /// A field of `data` that carries JSON serialised into a string.
    pub fn decode<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        serde_json::from_str(self.str(key)?).ok()
    }
}

/// A client request: `{action, seq, data}`. Its `Debug` withholds a `token`
/// in `data` (`withheld.rs`).
#[derive(Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WebSocketRequest {
    pub seq: i64,
    pub action: String,
    pub data: JsonMap,
}

impl std::fmt::Debug for WebSocketRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketRequest")
            .field("seq", &self.seq)
            .field("action", &self.action)
            .field("data", &super::withheld::TokenWithheld(&self.data))
            .finish()
    }
}

/// The server's answer to a request; told from an event by a non-zero
/// `seq_reply`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WebSocketResponse {
    pub status: String,
    pub seq_reply: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<JsonMap>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<AppError>,
}

/// A frame from the server, which is either an event or a response.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerFrame {
    Event(WebSocketEvent),
    Response(WebSocketResponse),
}

impl ServerFrame {
    /// Parses a text frame: a truthy `seq_reply` makes it a response, as the
    /// official client decides.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        let is_response = value
            .get("seq_reply")
            .and_then(serde_json::Value::as_i64)
            .is_some_and(|s| s != 0);
        if is_response {
            Ok(Self::Response(serde_json::from_value(value)?))
        } else {
            Ok(Self::Event(serde_json::from_value(value)?))
        }
    }
}
