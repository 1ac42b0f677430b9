//! Posts this process wrote and recorded from Mattermost's answer before
//! any socket delivered them (§5.2, §8.2).
//!
//! A turn records its reply the moment Mattermost accepts it: the queue may
//! drain as soon as the turn ends, and the drained turn assembles its window
//! from the store, which must already end on that reply (§5.2). The feed
//! hands a post on to the lanes only when it records it first, so a post
//! recorded this way is remembered here until a socket delivers it, or a
//! reconnect's catch-up stands in for the socket: then it is handed on once,
//! as the feed would have (an agent's reply can address a colleague, §4.1).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a recorded post waits for its socket copy. A socket that drops
/// an event reconnects and catches up well within this, and the catch-up
/// takes what is waiting; what is older is forgotten so the set stays small.
const UNSEEN_FOR_AT_MOST: Duration = Duration::from_secs(600);

#[derive(Default)]
pub struct Posted {
    unseen: Mutex<HashMap<String, Instant>>,
}

impl Posted {
    /// Remembers a post about to be recorded from Mattermost's answer. It
    /// is remembered before the store records it, so a socket copy arriving
    /// between the two finds it here.
    pub fn expect(&self, post_id: &str) {
        let now = Instant::now();
        let mut unseen = self.lock();
        unseen.retain(|_, since| now.duration_since(*since) < UNSEEN_FOR_AT_MOST);
        unseen.insert(post_id.to_string(), now);
    }

    /// Whether the post was waiting for a socket (and is no longer): true
    /// once, for the copy that hands it on.
    pub fn arrived(&self, post_id: &str) -> bool {
        self.lock().remove(post_id).is_some()
    }

    /// Every post still waiting, for a reconnect's catch-up: the socket
    /// that should have delivered them dropped. Each is handed on by the
    /// `arrived` that takes it.
    pub fn waiting(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.unseen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s5_2_a_recorded_post_is_handed_on_once_whichever_copy_comes_first() {
        let posted = Posted::default();
        posted.expect("p1");
        assert!(posted.arrived("p1"), "the socket's copy hands it on");
        assert!(!posted.arrived("p1"), "a second copy does not");

        assert!(posted.waiting().is_empty());

        posted.expect("p2");
        assert_eq!(posted.waiting(), vec!["p2".to_string()]);
        assert!(posted.arrived("p2"), "the catch-up hands it on");
        assert!(!posted.arrived("p2"), "its late socket copy does not");
    }

    #[test]
    fn s5_2_a_post_never_recorded_here_is_not_waiting() {
        assert!(!Posted::default().arrived("someone-elses"));
    }
}
