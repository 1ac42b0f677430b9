//! WebSocket connections and event delivery (contract §B). Each connection
//! numbers its own events: `hello` is 0, then strictly consecutive, unless a
//! test asks for a gap.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use axum::extract::ws::Message;
use mattermost_wire::model::{Broadcast, JsonMap, WebSocketEvent};
use tokio::sync::mpsc::UnboundedSender;

#[derive(Debug)]
struct Connection {
    user_id: String,
    token: String,
    next_seq: i64,
    skip_next: bool,
    tx: UnboundedSender<Message>,
}

#[derive(Debug, Default)]
pub struct Hub {
    connections: Mutex<HashMap<String, Connection>>,
}

/// A connection as tests see it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConnectionInfo {
    pub connection_id: String,
    pub user_id: String,
    pub next_seq: i64,
}

/// Builds an event with its broadcast fields.
pub fn event(name: &str, data: JsonMap, broadcast: Broadcast) -> WebSocketEvent {
    WebSocketEvent {
        event: name.to_string(),
        data,
        broadcast,
        seq: 0,
    }
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Connection>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a connection and sends it `hello` as event 0.
    pub fn register(
        &self,
        connection_id: &str,
        user_id: &str,
        token: &str,
        tx: UnboundedSender<Message>,
        hello: WebSocketEvent,
    ) {
        let mut connections = self.lock();
        let mut connection = Connection {
            user_id: user_id.to_string(),
            token: token.to_string(),
            next_seq: 0,
            skip_next: false,
            tx,
        };
        Self::deliver(&mut connection, hello);
        connections.insert(connection_id.to_string(), connection);
    }

    pub fn unregister(&self, connection_id: &str) {
        self.lock().remove(connection_id);
    }

    fn deliver(connection: &mut Connection, mut event: WebSocketEvent) {
        if connection.skip_next {
            connection.next_seq += 1;
            connection.skip_next = false;
        }
        event.seq = connection.next_seq;
        connection.next_seq += 1;
        if let Ok(text) = serde_json::to_string(&event) {
            // A closed receiver means the socket is going away; nothing to do.
            let _ = connection.tx.send(Message::Text(text.into()));
        }
    }

    /// Sends `event` to every connection of `user_id`.
    pub fn to_user(&self, user_id: &str, event: &WebSocketEvent) {
        for connection in self.lock().values_mut().filter(|c| c.user_id == user_id) {
            Self::deliver(connection, event.clone());
        }
    }

    /// Sends each member its own copy (`make` may tailor it per recipient),
    /// leaving out `omit`.
    pub fn to_members(
        &self,
        members: &[String],
        omit: Option<&str>,
        make: impl Fn(&str) -> WebSocketEvent,
    ) {
        let mut connections = self.lock();
        for member in members.iter().filter(|m| Some(m.as_str()) != omit) {
            let event = make(member);
            for connection in connections.values_mut().filter(|c| &c.user_id == member) {
                Self::deliver(connection, event.clone());
            }
        }
    }

    /// Closes every connection matching `which`.
    pub fn close_where(&self, which: impl Fn(&str, &str, &str) -> bool) -> usize {
        let mut connections = self.lock();
        let doomed: Vec<String> = connections
            .iter()
            .filter(|(id, c)| which(id, &c.user_id, &c.token))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &doomed {
            if let Some(connection) = connections.remove(id) {
                let _ = connection.tx.send(Message::Close(None));
            }
        }
        doomed.len()
    }

    /// Makes the next event to each of a user's connections skip a number.
    pub fn skip_seq(&self, user_id: &str) -> usize {
        let mut count = 0;
        for connection in self.lock().values_mut().filter(|c| c.user_id == user_id) {
            connection.skip_next = true;
            count += 1;
        }
        count
    }

    pub fn connections(&self) -> Vec<ConnectionInfo> {
        let mut list: Vec<ConnectionInfo> = self
            .lock()
            .iter()
            .map(|(id, c)| ConnectionInfo {
                connection_id: id.clone(),
                user_id: c.user_id.clone(),
                next_seq: c.next_seq,
            })
            .collect();
        list.sort_by(|a, b| a.connection_id.cmp(&b.connection_id));
        list
    }
}

/// A broadcast aimed at a channel.
pub fn to_channel(channel_id: &str, team_id: &str) -> Broadcast {
    Broadcast {
        omit_users: None,
        user_id: String::new(),
        channel_id: channel_id.to_string(),
        team_id: team_id.to_string(),
        connection_id: String::new(),
        omit_connection_id: String::new(),
    }
}

/// A broadcast aimed at one user.
pub fn to_user(user_id: &str) -> Broadcast {
    Broadcast {
        user_id: user_id.to_string(),
        ..Broadcast::default()
    }
}

/// A broadcast aimed at a channel but leaving one user out.
pub fn to_channel_omitting(channel_id: &str, omit: &str) -> Broadcast {
    let mut omit_users = BTreeMap::new();
    omit_users.insert(omit.to_string(), true);
    Broadcast {
        omit_users: Some(omit_users),
        channel_id: channel_id.to_string(),
        ..Broadcast::default()
    }
}
