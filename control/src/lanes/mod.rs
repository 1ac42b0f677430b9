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
mod taken;
mod triggers;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::warn;

use crate::services::{ParkedTurn, Services};
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
    /// A turn began waiting on a person: its author stopped acting (§5.2).
    Parked(ParkedTurn),
    /// A trigger was recorded for this channel: post it if the channel is
    /// idle (§4.2).
    TriggerRecorded(String),
    /// Look for triggers waiting on idle channels.
    SweepTriggers,
    /// `/collegium clear` takes every lane in the channel (§8.5, §5.1):
    /// answered false while any of them is busy; else nothing starts there
    /// until [`LaneInput::Release`].
    Take {
        channel_id: String,
        taken: tokio::sync::oneshot::Sender<bool>,
    },
    /// The clear's store cut is done: what arrived meanwhile is handled now.
    Release(String),
    /// A bot's socket said hello: from here a post in its channels reaches
    /// the lanes live, so a trigger for it can be announced (§4.2, §8.2).
    Listening(String),
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
        turn_id: String,
        fold: Arc<FoldGate>,
        /// Posts this turn's agent wrote that address a colleague, held
        /// until the turn stops acting (§5.2): (addressee, post).
        deferred: Vec<(String, ObservedPost)>,
        /// A person's post queued behind this turn: the queue drains when
        /// it ends, whether or not it made progress (§7.1).
        person_waits: bool,
    },
}

impl Lane {
    /// The hand-offs `turn_id` deferred, taken as it parks on a person; none
    /// when the lane runs another turn or none (§5.2).
    fn release_on_park(&mut self, turn_id: &str) -> Vec<(String, ObservedPost)> {
        match self {
            Self::Running {
                turn_id: running,
                deferred,
                ..
            } if running == turn_id => std::mem::take(deferred),
            _ => Vec::new(),
        }
    }
}

/// Hands each announcement of a turn parking on a person to the lanes'
/// inbox, so it is ordered with everything else they handle.
fn forward_parks(mut parks: mpsc::UnboundedReceiver<ParkedTurn>, inbox: mpsc::Sender<LaneInput>) {
    tokio::spawn(async move {
        while let Some(parked) = parks.recv().await {
            if inbox.send(LaneInput::Parked(parked)).await.is_err() {
                return;
            }
        }
    });
}

/// Asks the lanes to look for triggers waiting on idle channels, from the
/// first moment and then every `every`, until the lanes stop.
fn sweep_triggers_every(every: Duration, inbox: mpsc::Sender<LaneInput>) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        loop {
            ticks.tick().await;
            if inbox.send(LaneInput::SweepTriggers).await.is_err() {
                return;
            }
        }
    });
}

/// The lanes' owner.
pub struct Lanes {
    services: Arc<Services>,
    lanes: HashMap<LaneKey, Lane>,
    inbox: mpsc::Sender<LaneInput>,
    generation: u64,
    /// Per channel, the trigger announcement posted and not yet seen
    /// starting its turn (§4.2).
    announcing: HashMap<String, triggers::Announcing>,
    /// Channels a clear holds (§8.5), with what arrived for them meanwhile.
    taken: HashMap<String, Vec<LaneInput>>,
    /// Agents whose socket has said hello. An announcement posted before
    /// then would be recorded by the socket's first catch-up, which starts
    /// nothing (§8.2): the trigger would be posted and answered by no one.
    listening: HashSet<String>,
}

impl Lanes {
    /// Starts the task that owns the lanes; returns where to send to it.
    pub fn spawn(services: Arc<Services>) -> mpsc::Sender<LaneInput> {
        let (inbox, mut rx) = mpsc::channel(1024);
        forward_parks(services.controls.announce_parks(), inbox.clone());
        let mut lanes = Self {
            services,
            lanes: HashMap::new(),
            inbox: inbox.clone(),
            generation: 0,
            announcing: HashMap::new(),
            listening: HashSet::new(),
            taken: HashMap::new(),
        };
        sweep_triggers_every(triggers::SWEEP_EVERY, inbox.clone());
        tokio::spawn(async move {
            while let Some(input) = rx.recv().await {
                lanes.handle(input).await;
            }
        });
        inbox
    }

    async fn handle(&mut self, input: LaneInput) {
        let input = match self.hold(input) {
            Some(input) => input,
            None => return,
        };
        match input {
            LaneInput::Post { post, via } => self.post(*post, via).await,
            LaneInput::TurnEnded(outcome) => self.turn_ended(outcome).await,
            LaneInput::Drain(key) => self.drain(key).await,
            LaneInput::DebounceDue { lane, generation } => self.debounce_due(lane, generation),
            LaneInput::Parked(parked) => self.parked(&parked).await,
            LaneInput::TriggerRecorded(channel_id) => self.deliver(&channel_id).await,
            LaneInput::SweepTriggers => self.sweep_triggers().await,
            LaneInput::Listening(agent) => {
                self.listening.insert(agent);
                self.sweep_triggers().await;
            }
            LaneInput::Take { channel_id, taken } => {
                let _ = taken.send(self.take(channel_id));
            }
            LaneInput::Release(channel_id) => self.release(&channel_id).await,
        }
    }

    /// The turn waits on a person, so its author has stopped acting: what
    /// it addressed to a colleague reaches that colleague now (§5.2). What
    /// it writes once it acts again is held anew until it ends or parks.
    async fn parked(&mut self, parked: &ParkedTurn) {
        let key = LaneKey {
            agent: parked.agent.clone(),
            channel_id: parked.channel_id.clone(),
        };
        let released = self
            .lanes
            .get_mut(&key)
            .map(|lane| lane.release_on_park(&parked.turn_id))
            .unwrap_or_default();
        for (addressee, post) in released {
            self.addressed(&addressee, post, true).await;
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
            let Some(cause) = posts.first().map(|(first, _)| route::cause_of(first)) else {
                return;
            };
            self.start_turn(key, posts, cause, None);
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
            self.drain(key.clone()).await;
        }
        // The channel may be idle now: a trigger waiting for it goes next
        // (§4.2).
        self.deliver(&key.channel_id).await;
    }

    fn state(&self, key: &LaneKey) -> &Lane {
        self.lanes.get(key).unwrap_or(&Lane::Idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{AuthorKind, PostRole};

    fn hand_off(id: &str) -> ObservedPost {
        ObservedPost {
            id: id.into(),
            channel_id: "c".into(),
            author_id: "u-theo".into(),
            author_name: "theo".into(),
            author_kind: AuthorKind::Agent,
            created_at: 1,
            message: "@mira please look".into(),
            props: None,
            role: PostRole::Post,
            turn_id: Some("t1".into()),
            pinned: false,
            observed_at: 1,
            observed_via: ObservedVia::Live,
            files: Vec::new(),
        }
    }

    fn running(turn_id: &str) -> Lane {
        Lane::Running {
            turn_id: turn_id.into(),
            fold: Arc::new(FoldGate::new("ana", 0)),
            deferred: vec![("mira".into(), hand_off("p1"))],
            person_waits: false,
        }
    }

    #[test]
    fn s5_2_hand_off_is_released_when_its_author_parks() {
        let mut lane = running("t1");
        let released = lane.release_on_park("t1");
        assert_eq!(released.len(), 1);
        assert_eq!(released[0].0, "mira");
        assert!(
            lane.release_on_park("t1").is_empty(),
            "released once; what it writes after acting again is held anew"
        );
        assert!(
            matches!(lane, Lane::Running { .. }),
            "the turn still holds its lane while it waits"
        );
        let mut other = running("t2");
        assert!(
            other.release_on_park("t1").is_empty(),
            "a park of an earlier turn releases nothing of the next"
        );
    }
}
