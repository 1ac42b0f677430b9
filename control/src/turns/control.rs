//! A person's hand on a running turn (§7.5): `/collegium stop` ends it at
//! the next boundary — no further tool calls, a running tool is not
//! interrupted — and `kill` also aborts the completion in flight. Each turn
//! registers here while it runs; the command route halts the turns of a
//! channel through it.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

/// Who halted a turn, and how hard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Halt {
    /// The person, by username.
    pub by: String,
    /// `kill` rather than `stop`.
    pub kill: bool,
}

struct Running {
    agent: String,
    channel_id: String,
    halt: watch::Sender<Option<Halt>>,
}

/// The turns running now, by turn id.
#[derive(Default)]
pub struct Controls {
    running: Mutex<HashMap<String, Running>>,
}

impl Controls {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a turn; the receiver says when a person halts it.
    pub fn register(
        &self,
        turn_id: &str,
        agent: &str,
        channel_id: &str,
    ) -> watch::Receiver<Option<Halt>> {
        let (halt, halted) = watch::channel(None);
        self.lock().insert(
            turn_id.to_string(),
            Running {
                agent: agent.to_string(),
                channel_id: channel_id.to_string(),
                halt,
            },
        );
        halted
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
    fn s7_5_a_halt_reaches_the_turns_of_its_channel_only() {
        let controls = Controls::default();
        let here = controls.register("t1", "mira", "c1");
        let elsewhere = controls.register("t2", "theo", "c2");
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
