//! WebSocket connections and event delivery (contract §B). Each connection
//! numbers its own events: `hello` is 0, then strictly consecutive, unless a
//! test asks for a gap.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::ws::Message;
use mattermost_wire::model::{Broadcast, JsonMap, WebSocketEvent};
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

/// A frame on its way to a socket, held until `not_before` where a test
/// delays it. The writer sends frames in order, so a held event holds back
/// everything after it, as a slow link would.
#[derive(Debug)]
pub struct Outgoing {
    pub message: Message,
    pub not_before: Option<Instant>,
}

impl Outgoing {
    pub fn now(message: Message) -> Self {
        Self {
            message,
            not_before: None,
        }
    }
}

/// A test's instruction to hold a connection's next events (contract §F.1
/// item 26: an event arriving after the REST response that caused it).
#[derive(Debug, Clone, Copy)]
struct Delay {
    by: Duration,
    events: u32,
}

#[derive(Debug)]
struct Connection {
    user_id: String,
    token: String,
    next_seq: i64,
    skip_next: bool,
    /// Leave `ping` unanswered, as a stalled server would.
    stall_pongs: bool,
    delay: Option<Delay>,
    tx: UnboundedSender<Outgoing>,
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
        tx: UnboundedSender<Outgoing>,
        hello: WebSocketEvent,
    ) {
        let mut connections = self.lock();
        let mut connection = Connection {
            user_id: user_id.to_string(),
            token: token.to_string(),
            next_seq: 0,
            skip_next: false,
            stall_pongs: false,
            delay: None,
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
        let not_before = connection.delay.take().map(|delay| {
            if delay.events > 1 {
                connection.delay = Some(Delay {
                    events: delay.events - 1,
                    ..delay
                });
            }
            Instant::now() + delay.by
        });
        if let Ok(text) = serde_json::to_string(&event) {
            // A closed receiver means the socket is going away; nothing to do.
            let _ = connection.tx.send(Outgoing {
                message: Message::Text(text.into()),
                not_before,
            });
        }
    }

    /// Sends `event` to every connection of `user_id`.
    pub fn to_user(&self, user_id: &str, event: &WebSocketEvent) {
        for connection in self.lock().values_mut().filter(|c| c.user_id == user_id) {
            Self::deliver(connection, event.clone());
        }
    }

    /// Sends `event` to every connection there is.
    pub fn to_everyone(&self, event: &WebSocketEvent) {
        for connection in self.lock().values_mut() {
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
                let _ = connection.tx.send(Outgoing::now(Message::Close(None)));
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

    /// Stops (or resumes) answering `ping` on each of a user's connections.
    pub fn stall_pongs(&self, user_id: &str, stalled: bool) -> usize {
        let mut count = 0;
        for connection in self.lock().values_mut().filter(|c| c.user_id == user_id) {
            connection.stall_pongs = stalled;
            count += 1;
        }
        count
    }

    pub fn pongs_stalled(&self, connection_id: &str) -> bool {
        self.lock()
            .get(connection_id)
            .is_some_and(|c| c.stall_pongs)
    }

    /// Holds the next `events` events to each of a user's connections for
    /// `by`, keeping their numbering.
    pub fn delay_events(&self, user_id: &str, by: Duration, events: u32) -> usize {
        let mut count = 0;
        for connection in self.lock().values_mut().filter(|c| c.user_id == user_id) {
            connection.delay = (events > 0).then_some(Delay { by, events });
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

/// A broadcast aimed at a channel. Mattermost builds every channel-scoped
/// event (`posted`, `post_edited`, `reaction_added`, `user_added`,
/// `user_removed`, `typing`, …) with an empty `team_id` in the broadcast; the
/// team, where an event names it, is in `data` (contract §B.6a).
pub fn to_channel(channel_id: &str) -> Broadcast {
    Broadcast {
        channel_id: channel_id.to_string(),
        ..Broadcast::default()
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
