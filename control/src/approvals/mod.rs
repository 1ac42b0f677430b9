//! Approvals (§3.7, §6.2): a gated call stops for a person. The prompt is
//! posted under the agent's account with Approve, Deny and Deny with reason;
//! a click reaches the decision route (`callbacks/`), which checks the
//! approval's signature and the clicker, records one decision, and wakes the
//! turn parked here. There is no timeout. A question (§3.7a) rides the same
//! machinery and is resolved by a person's answer instead.

pub mod presence;
pub mod prompt;
pub mod question;
pub mod sign;

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::oneshot;

/// The callback route an approval's buttons call; the prompt names it, and
/// the callback server serves it.
pub const DECISION_ROUTE: &str = "/mattermost/decision";
/// The callback route the denial-reason dialog submits to.
pub const DIALOG_ROUTE: &str = "/mattermost/dialog";

/// How a person decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decided {
    Approved {
        by: String,
    },
    Denied {
        by: String,
    },
    DeniedWithReason {
        by: String,
        reason: String,
    },
    /// A question's answer (§3.7a): there is no denial, since there is no
    /// action to refuse.
    Answered {
        by: String,
        answer: String,
    },
}

impl Decided {
    pub fn outcome(&self) -> &'static str {
        match self {
            Self::Approved { .. } => "approved",
            Self::Denied { .. } => "denied",
            Self::DeniedWithReason { .. } => "denied_with_reason",
            Self::Answered { .. } => "answered",
        }
    }

    pub fn by(&self) -> &str {
        match self {
            Self::Approved { by }
            | Self::Denied { by }
            | Self::DeniedWithReason { by, .. }
            | Self::Answered { by, .. } => by,
        }
    }

    /// A denial's reason or a question's answer: the words the person wrote.
    pub fn words(&self) -> Option<&str> {
        match self {
            Self::DeniedWithReason { reason: words, .. } | Self::Answered { answer: words, .. } => {
                Some(words)
            }
            Self::Approved { .. } | Self::Denied { .. } => None,
        }
    }
}

/// The turns parked on a decision, by approval id.
#[derive(Default)]
pub struct Parked {
    waiting: Mutex<HashMap<String, oneshot::Sender<Decided>>>,
}

impl Parked {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Decided>>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Parks a turn on `approval`; the receiver answers when it is decided.
    pub fn park(&self, approval: &str) -> oneshot::Receiver<Decided> {
        let (send, receive) = oneshot::channel();
        self.lock().insert(approval.to_string(), send);
        receive
    }

    /// Forgets the turn parked on `approval` without a decision: its wait
    /// ends (a halt stops that turn anyway).
    pub fn wake_dropped(&self, approval: &str) {
        self.lock().remove(approval);
    }

    /// Wakes the turn parked on `approval`, if one is.
    pub fn wake(&self, approval: &str, decided: Decided) {
        if let Some(waiting) = self.lock().remove(approval) {
            let _ = waiting.send(decided);
        }
    }
}
