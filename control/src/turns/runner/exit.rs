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
    /// The provider's completion was still malformed once its transport
    /// retries were spent (§7.2): a semantic error.
    MalformedCompletion {
        attempts: u32,
    },
    /// The context is over its ceiling with every result read reduced to a
    /// line (§3.8): what the notice says of its size.
    CeilingExceeded(Exhaustion),
    CutAtTimeLimit,
    /// A tool failed in a way it did not return as a result (§7.2).
    ToolFailed {
        tool: String,
        reason: String,
    },
    /// A call that is not retryable did not answer in time (§7.1).
    Unconfirmed {
        tool: String,
    },
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
            Self::MalformedCompletion { .. } => "malformed_completion",
            Self::CeilingExceeded(_) => "context_ceiling",
            Self::CutAtTimeLimit => "time_limit",
            Self::ToolFailed { .. } => "tool_failed",
            Self::Unconfirmed { .. } => "side_effect_unconfirmed",
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
    /// failure does not (§7.1): posts refused twice and arguments unparsed
    /// twice are semantic errors, and a fresh turn would inherit them.
    pub(super) fn allows_progress(&self) -> bool {
        matches!(
            self,
            Self::Completed
                | Self::BudgetExhausted
                | Self::CeilingExceeded(_)
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
            Self::Rejected => Some(format!(
                "This turn ended: two replies in a row could not be posted{}.",
                crate::commands::pointer("trace")
                    .map(|trace| format!(" (see {trace} for why)"))
                    .unwrap_or_default()
            )),
            Self::BudgetExhausted => {
                Some("This turn ended: its action budget is spent. Ask again to continue.".into())
            }
            Self::MalformedCall => Some(
                "This turn ended: the model sent tool arguments that were not valid JSON twice."
                    .into(),
            ),
            Self::CeilingExceeded(exhaustion) => Some(exhaustion.notice()),
            Self::MalformedCompletion { attempts } => Some(format!(
                "This turn ended: the provider's completion was still malformed after {attempts} attempts."
            )),
            Self::ToolFailed { tool, reason } => Some(format!(
                "This turn ended: {tool} failed ({reason}), and whether it acted before failing is unknown."
            )),
            Self::Unconfirmed { tool } => Some(format!(
                "This turn ended: {tool} did not answer in time, and whether it completed cannot be confirmed. Check before asking for it again."
            )),
            Self::CutAtTimeLimit => {
                Some("This turn ended: the model was cut off at its time limit twice.".into())
            }
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

/// How far over its ceiling a turn's context ran (§7.1), in estimated
/// tokens, with its largest parts by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Exhaustion {
    pub used: u64,
    /// The turn's ceiling; none where the provider measured the request
    /// against the model's window and refused it.
    pub ceiling: Option<u64>,
    /// The starting context alone did not fit: the context budget and the
    /// ceiling disagree, which is configuration, not the turn's doing.
    pub at_start: bool,
    pub largest: Vec<(String, u64)>,
}

impl Exhaustion {
    fn notice(&self) -> String {
        let parts: Vec<String> = self
            .largest
            .iter()
            .map(|(part, tokens)| format!("{part} (about {tokens})"))
            .collect();
        let parts = parts.join(", ");
        match self.ceiling {
            Some(ceiling) if self.at_start => format!(
                "This turn ended: its starting context (about {} tokens) is over its ceiling of {ceiling} tokens, so the context budget and the ceiling disagree. That is configuration, not anything this turn did.",
                self.used
            ),
            Some(ceiling) => format!(
                "This turn ended: its context is about {} tokens against a ceiling of {ceiling}, even with every result it read reduced to a line. Largest parts: {parts}. The trace shows each of them.",
                self.used
            ),
            None => format!(
                "This turn ended: the model's provider said its context (about {} tokens by this count) is longer than the model's window. Largest parts: {parts}. The trace shows each of them.",
                self.used
            ),
        }
    }
}
