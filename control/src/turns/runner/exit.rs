//! How a turn ends (§7.1): one exit per row, with its record's kind,
//! whether the queue drains, and the notice it owes.

use super::Halt;

/// Why a turn ended (§7.1), in its record's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Exit {
    Completed,
    /// Two rejected posts in a row (§4.5).
    Rejected,
    BudgetExhausted,
    MalformedCall,
    CeilingExceeded,
    CutAtTimeLimit,
    Provider(String),
    Store(String),
    /// A person denied a call (§5.4): the turn ends and asks how to proceed.
    Denied {
        by: String,
        tool: String,
    },
    /// Mattermost refused a post the turn owed.
    Delivery(String),
    /// A person stopped or killed the turn (§7.5).
    Halted(Halt),
    /// The chain is at its limit: the turn is not opened (§7.4).
    NotAdmitted {
        chain_limit: u32,
    },
    /// Opening it would breach the hourly ceiling (§7.4).
    CeilingReached {
        count: u64,
    },
    /// Every agent is halted: nothing opens until a person resumes.
    HaltStands,
    /// A person declined to extend the budget (§5.3).
    BudgetDenied {
        by: String,
    },
}

impl Exit {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Rejected => "rejected_posts",
            Self::BudgetExhausted => "budget_exhausted",
            Self::MalformedCall => "malformed_call",
            Self::CeilingExceeded => "context_ceiling",
            Self::CutAtTimeLimit => "time_limit",
            Self::Provider(_) => "provider_failure",
            Self::Store(_) => "store_failure",
            Self::Denied { .. } => "denied",
            Self::Delivery(_) => "delivery_failure",
            Self::Halted(Halt { kill: false, .. }) => "stopped",
            Self::Halted(Halt { kill: true, .. }) => "killed",
            Self::NotAdmitted { .. } => "not_admitted",
            Self::CeilingReached { .. } => "hourly_ceiling",
            Self::HaltStands => "halted",
            Self::BudgetDenied { .. } => "budget_exhausted",
        }
    }

    /// A completion, an exhaustion or a person's act allows progress; a
    /// failure does not (§7.1).
    pub(super) fn allows_progress(&self) -> bool {
        matches!(
            self,
            Self::Completed
                | Self::Rejected
                | Self::BudgetExhausted
                | Self::Denied { .. }
                | Self::BudgetDenied { .. }
                | Self::Halted(_)
        )
    }

    /// The notice posted for an exit that is not a reply.
    pub(super) fn notice(&self) -> Option<String> {
        match self {
            // The command's own notice names the agents it reached.
            Self::Completed
            | Self::Halted(_)
            | Self::NotAdmitted { .. }
            | Self::CeilingReached { .. }
            | Self::HaltStands => None,
            Self::Rejected => Some(
                "This turn ended: two replies in a row could not be posted (see /collegium trace for why).".into(),
            ),
            Self::BudgetExhausted => Some(
                "This turn ended: its action budget is spent. Ask again to continue.".into(),
            ),
            Self::MalformedCall => Some(
                "This turn ended: the model sent tool arguments that were not valid JSON twice.".into(),
            ),
            Self::CeilingExceeded => Some(
                "This turn ended: its context is over its ceiling even with every result it read reduced to a line.".into(),
            ),
            Self::CutAtTimeLimit => Some(
                "This turn ended: the model was cut off at its time limit twice.".into(),
            ),
            Self::Provider(phrase) => Some(format!("This turn ended: {phrase}.")),
            Self::Store(reason) => Some(format!("This turn ended: the store failed ({reason}).")),
            Self::Denied { by, tool } => Some(format!(
                "@{by} denied {tool}, so I stopped there. How would you like me to proceed?"
            )),
            Self::BudgetDenied { by } => Some(format!(
                "@{by} did not extend my action budget, so I stopped here. How would you like me to proceed?"
            )),
            Self::Delivery(reason) => Some(format!(
                "This turn ended: Mattermost refused a post ({reason})."
            )),
        }
    }
}
