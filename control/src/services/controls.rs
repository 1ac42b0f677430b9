//! A person's hand on a running turn (§7.5): `/collegium stop` ends it at
//! the next boundary — no further tool calls, a running tool is not
//! interrupted — and `kill` also aborts the completion in flight. Each turn
//! registers here while it runs; the command route halts the turns of a
//! channel through it.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::{mpsc, watch};

use crate::status::StatusSlot;

/// Who halted a turn, and how hard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Halt {
    /// The person, by username.
    pub by: String,
    /// `kill` rather than `stop`.
    pub kill: bool,
}

/// A person's instruction to a running turn (§7.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steer {
    pub by: String,
    pub text: String,
}

/// Why a steer reached no turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SteerRefused {
    /// Nothing runs here (for that agent).
    NothingRunning,
    /// Several agents run here and none was named: never guessed.
    Several(Vec<String>),
    /// The turn waits on a person (§3.7, §3.7a): a steer is read before a
    /// completion, and a parked turn makes none until that person answers,
    /// so the invoker is told what it waits on instead (§7.5, §5.4).
    Parked { agent: String, turn_id: String },
}

struct Running {
    agent: String,
    channel_id: String,
    halt: watch::Sender<Option<Halt>>,
    steer: mpsc::UnboundedSender<Steer>,
    /// When the turn started or last stopped waiting on a person: the long
    /// turn's clock (§7.6). None while it waits.
    working_since: Option<std::time::Instant>,
    /// Whether it has called a tool yet.
    called: bool,
    status: StatusSlot,
}

/// A running turn as the stall sweep sees it (§7.6).
#[derive(Debug, Clone)]
pub struct RunningTurn {
    pub turn_id: String,
    pub agent: String,
    pub channel_id: String,
    /// Time held since it started or last waited on a person; none while
    /// it waits.
    pub working_for: Option<std::time::Duration>,
    pub called: bool,
    /// Its status post's id, which the sweep may fill by opening it.
    pub status: StatusSlot,
}

/// What a running turn listens to.
pub struct TurnSignals {
    pub halted: watch::Receiver<Option<Halt>>,
    pub steers: mpsc::UnboundedReceiver<Steer>,
    pub status: StatusSlot,
}

/// A turn that began waiting on a person (§3.7, §3.7a).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkedTurn {
    pub turn_id: String,
    pub agent: String,
    pub channel_id: String,
}

/// The turns running now, by turn id, and the framework-wide halt (§7.4).
#[derive(Default)]
pub struct Controls {
    running: Mutex<HashMap<String, Running>>,
    /// Where a turn parking on a person is told: its author has stopped
    /// acting, so the lanes release the hand-offs it deferred (§5.2).
    parks: Mutex<Option<mpsc::UnboundedSender<ParkedTurn>>>,
    /// Why every agent is halted, while it is.
    halted: Mutex<Option<String>>,
    /// When a person last resumed: the hourly count starts afresh there.
    resumed_at: std::sync::atomic::AtomicI64,
}

impl Controls {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a turn; what it returns says when a person halts or
    /// steers it.
    pub fn register(&self, turn_id: &str, agent: &str, channel_id: &str) -> TurnSignals {
        let (halt, halted) = watch::channel(None);
        let (steer, steers) = mpsc::unbounded_channel();
        let status = StatusSlot::default();
        self.lock().insert(
            turn_id.to_string(),
            Running {
                agent: agent.to_string(),
                channel_id: channel_id.to_string(),
                halt,
                steer,
                working_since: Some(std::time::Instant::now()),
                called: false,
                status: status.clone(),
            },
        );
        TurnSignals {
            halted,
            steers,
            status,
        }
    }

    /// Hands a steer to the turn running in the channel: the named agent's,
    /// or the only one running; the agent reached.
    pub fn steer(
        &self,
        channel_id: &str,
        agent: Option<&str>,
        steer: Steer,
    ) -> Result<String, SteerRefused> {
        let running = self.lock();
        let mut here: Vec<(&String, &Running)> = running
            .iter()
            .filter(|(_, r)| r.channel_id == channel_id)
            .filter(|(_, r)| agent.is_none_or(|a| r.agent == a))
            .collect();
        here.sort_by(|a, b| a.1.agent.cmp(&b.1.agent));
        match here.as_slice() {
            [] => Err(SteerRefused::NothingRunning),
            [(turn_id, one)] if one.working_since.is_none() => Err(SteerRefused::Parked {
                agent: one.agent.clone(),
                turn_id: (*turn_id).clone(),
            }),
            [(_, one)] => {
                let _ = one.steer.send(steer);
                Ok(one.agent.clone())
            }
            several => Err(SteerRefused::Several(
                several.iter().map(|(_, r)| r.agent.clone()).collect(),
            )),
        }
    }

    /// The turn waits on a person (true) or works again (false): time
    /// parked is not a long turn's (§7.6).
    pub fn parked(&self, turn_id: &str, parked: bool) {
        let mut turns = self.lock();
        let Some(running) = turns.get_mut(turn_id) else {
            return;
        };
        running.working_since = (!parked).then(std::time::Instant::now);
        if parked {
            let announced = ParkedTurn {
                turn_id: turn_id.to_string(),
                agent: running.agent.clone(),
                channel_id: running.channel_id.clone(),
            };
            drop(turns);
            if let Some(parks) = self
                .parks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .as_ref()
            {
                let _ = parks.send(announced);
            }
        }
    }

    /// Where turns parking on a person are announced from now on; one
    /// listener, the lanes (§5.2).
    pub fn announce_parks(&self) -> mpsc::UnboundedReceiver<ParkedTurn> {
        let (parks, announced) = mpsc::unbounded_channel();
        *self
            .parks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(parks);
        announced
    }

    /// The turn called a tool.
    pub fn called(&self, turn_id: &str) {
        if let Some(running) = self.lock().get_mut(turn_id) {
            running.called = true;
        }
    }

    /// Every running turn.
    pub fn running(&self) -> Vec<RunningTurn> {
        self.lock()
            .iter()
            .map(|(id, r)| RunningTurn {
                turn_id: id.clone(),
                agent: r.agent.clone(),
                channel_id: r.channel_id.clone(),
                working_for: r.working_since.map(|since| since.elapsed()),
                called: r.called,
                status: r.status.clone(),
            })
            .collect()
    }

    pub fn release(&self, turn_id: &str) {
        self.lock().remove(turn_id);
    }

    /// Halts every turn running in a channel; the agents reached, sorted.
    pub fn halt_channel(&self, channel_id: &str, halt: &Halt) -> Vec<String> {
        let mut reached: Vec<String> = self
            .lock()
            .values()
            .filter(|r| r.channel_id == channel_id)
            .map(|r| {
                let _ = r.halt.send(Some(halt.clone()));
                r.agent.clone()
            })
            .collect();
        reached.sort();
        reached
    }

    /// Halts every agent framework-wide; false when a halt already stands.
    pub fn halt_all(&self, reason: &str) -> bool {
        let mut halted = self
            .halted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if halted.is_some() {
            return false;
        }
        *halted = Some(reason.to_string());
        true
    }

    /// The standing halt's reason, if one stands.
    pub fn global_halt(&self) -> Option<String> {
        self.halted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Clears the halt on a person's authority (§7.4); the reason it had.
    pub fn resume(&self, now: i64) -> Option<String> {
        let cleared = self
            .halted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if cleared.is_some() {
            self.resumed_at
                .store(now, std::sync::atomic::Ordering::Relaxed);
        }
        cleared
    }

    /// Where the hourly count starts: an hour ago, or the last resume.
    pub fn count_from(&self, now: i64) -> i64 {
        (now - 3_600_000).max(self.resumed_at.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Halts every running turn, whatever its channel.
    pub fn halt_every(&self, halt: &Halt) {
        for running in self.lock().values() {
            let _ = running.halt.send(Some(halt.clone()));
        }
    }

    /// Whether `agent` has a turn running in the channel.
    pub fn is_running(&self, agent: &str, channel_id: &str) -> bool {
        self.lock()
            .values()
            .any(|r| r.agent == agent && r.channel_id == channel_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s5_2_a_turn_parking_on_a_person_is_announced_to_the_lanes() {
        let controls = Controls::default();
        let mut parks = controls.announce_parks();
        let _signals = controls.register("t1", "theo", "c1");
        controls.parked("t1", true);
        assert_eq!(
            parks.try_recv().ok(),
            Some(ParkedTurn {
                turn_id: "t1".into(),
                agent: "theo".into(),
                channel_id: "c1".into(),
            })
        );
        controls.parked("t1", false);
        assert!(parks.try_recv().is_err(), "working again is no park");
    }

    #[test]
    fn s7_5_a_halt_reaches_the_turns_of_its_channel_only() {
        let controls = Controls::default();
        let here = controls.register("t1", "mira", "c1").halted;
        let elsewhere = controls.register("t2", "theo", "c2").halted;
        let halt = Halt {
            by: "ana".into(),
            kill: false,
        };
        assert_eq!(controls.halt_channel("c1", &halt), ["mira"]);
        assert_eq!(*here.borrow(), Some(halt));
        assert_eq!(*elsewhere.borrow(), None);
        controls.release("t1");
        assert!(!controls.is_running("mira", "c1"));
        assert!(
            controls
                .halt_channel(
                    "c1",
                    &Halt {
                        by: "ana".into(),
                        kill: true
                    }
                )
                .is_empty()
        );
    }
}
