//! Lanes (§5.1, §5.2, §4.4): one per agent and channel, each idle,
//! debouncing or running one turn. A post addressed to a busy agent is
//! queued as its id and acknowledged with 👀; a turn that ends on an exit
//! allowing progress drains the queue into one turn; a person's follow-up
//! fragments fold into the turn they belong to; an agent's post activates
//! its addressee only once the writing turn stops acting.
//!
//! One task owns every lane and reads one inbox, so lane state needs no
//! locks and the order of events is the order they arrived.

mod route;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::warn;

use crate::services::Services;
use crate::store::{ObservedPost, ObservedVia};
use crate::turns::fold::FoldGate;
use crate::turns::runner::TurnOutcome;

/// What reaches the lanes.
#[derive(Debug)]
pub enum LaneInput {
    /// A post recorded for the first time, live or recovered by a
    /// reconnect's catch-up (backfilled posts never come here, §8.2).
    Post {
        post: Box<ObservedPost>,
        via: ObservedVia,
    },
    TurnEnded(TurnOutcome),
    /// Drain the lane if it is idle: the boot sweep queued posts again
    /// (§7.3).
    Drain(LaneKey),
    DebounceDue {
        lane: LaneKey,
        generation: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LaneKey {
    pub agent: String,
    pub channel_id: String,
}

enum Lane {
    Idle,
    /// The §4.4 window before a turn: the person's posts so far.
    Debouncing {
        author: String,
        posts: Vec<(ObservedPost, &'static str)>,
        generation: u64,
        ceiling: Instant,
        /// Typing shows while this holds (§8.1).
        typing: Arc<std::sync::atomic::AtomicBool>,
    },
    Running {
        fold: Arc<FoldGate>,
        /// Posts this turn's agent wrote that address a colleague, held
        /// until the turn stops acting (§5.2): (addressee, post).
        deferred: Vec<(String, ObservedPost)>,
        /// A person's post queued behind this turn: the queue drains when
        /// it ends, whether or not it made progress (§7.1).
        person_waits: bool,
    },
}

/// The lanes' owner.
pub struct Lanes {
    services: Arc<Services>,
    lanes: HashMap<LaneKey, Lane>,
    inbox: mpsc::Sender<LaneInput>,
    generation: u64,
}

impl Lanes {
    /// Starts the task that owns the lanes; returns where to send to it.
    pub fn spawn(services: Arc<Services>) -> mpsc::Sender<LaneInput> {
        let (inbox, mut rx) = mpsc::channel(1024);
        let mut lanes = Self {
            services,
            lanes: HashMap::new(),
            inbox: inbox.clone(),
            generation: 0,
        };
        tokio::spawn(async move {
            while let Some(input) = rx.recv().await {
                lanes.handle(input).await;
            }
        });
        inbox
    }

    async fn handle(&mut self, input: LaneInput) {
        match input {
            LaneInput::Post { post, via } => self.post(*post, via).await,
            LaneInput::TurnEnded(outcome) => self.turn_ended(outcome).await,
            LaneInput::Drain(key) => self.drain(key).await,
            LaneInput::DebounceDue { lane, generation } => self.debounce_due(lane, generation),
        }
    }

    fn debounce(&self) -> Duration {
        Duration::from_millis(u64::from(self.services.limits.debounce_window_ms))
    }

    fn debounce_ceiling(&self) -> Duration {
        Duration::from_millis(u64::from(self.services.limits.debounce_ceiling_ms))
    }

    /// Arms (or re-arms) a lane's debounce timer.
    fn arm(&mut self, lane: &LaneKey, ceiling: Instant) -> u64 {
        self.generation += 1;
        let generation = self.generation;
        let due = (Instant::now() + self.debounce()).min(ceiling);
        let inbox = self.inbox.clone();
        let lane = lane.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(due).await;
            let _ = inbox
                .send(LaneInput::DebounceDue { lane, generation })
                .await;
        });
        generation
    }

    fn debounce_due(&mut self, key: LaneKey, generation: u64) {
        let due = matches!(
            self.lanes.get(&key),
            Some(Lane::Debouncing { generation: g, .. }) if *g == generation
        );
        if !due {
            return;
        }
        if let Some(Lane::Debouncing { posts, typing, .. }) = self.lanes.remove(&key) {
            typing.store(false, std::sync::atomic::Ordering::Relaxed);
            self.start_turn(key, posts, crate::store::TurnCause::Post, None);
        }
    }

    async fn turn_ended(&mut self, outcome: TurnOutcome) {
        tracing::debug!(turn = %outcome.turn_id, progress = outcome.progress, "lane freed");
        let key = LaneKey {
            agent: outcome.agent.clone(),
            channel_id: outcome.channel_id.clone(),
        };
        let (deferred, person_waits) = match self.lanes.remove(&key) {
            Some(Lane::Running {
                deferred,
                person_waits,
                ..
            }) => (deferred, person_waits),
            Some(other) => {
                warn!("a turn ended in a lane that was not running it");
                self.lanes.insert(key.clone(), other);
                (Vec::new(), false)
            }
            None => (Vec::new(), false),
        };
        // The agent stopped acting: what it addressed to a colleague now
        // reaches that colleague (§5.2).
        for (addressee, post) in deferred {
            self.addressed(&addressee, post, true).await;
        }
        // After a failure the queue stands, unless a person posted while the
        // turn ran: that post is the next one, and drains it once (§7.1).
        if outcome.progress || person_waits {
            self.drain(key).await;
        }
    }

    fn state(&self, key: &LaneKey) -> &Lane {
        self.lanes.get(key).unwrap_or(&Lane::Idle)
    }
}
