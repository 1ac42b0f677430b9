//! What a tool body hands back (§3.14): plain text, or text beside a
//! disclosure, and the only two failures a plugin controls. No post is
//! returned: the framework writes the status post and the trace itself.

use collegium_proto::toolset::v1::{
    self as wire, InvalidArguments, Success, ToolResult, Unresolved, tool_result,
};

use crate::storage::StorageError;

/// A successful call's result: the text the model reads, the one line the
/// status post shows, and, for a call that made a durable record, what it
/// discloses (§3.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    text: String,
    summary: Option<String>,
    disclosure: Option<Disclosure>,
}

impl Reply {
    /// A result the model reads as `text`.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            summary: None,
            disclosure: None,
        }
    }

    /// The one line the status post shows for this call (§8.1); without
    /// it the line is the tool's full name.
    #[must_use]
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }

    /// Says what durable record the call made (§3.4): the framework puts it
    /// in the trace and the status post exactly as a framework tool's.
    #[must_use]
    pub fn disclose(mut self, disclosure: Disclosure) -> Self {
        self.disclosure = Some(disclosure);
        self
    }

    pub fn text_ref(&self) -> &str {
        &self.text
    }

    pub fn disclosure(&self) -> Option<&Disclosure> {
        self.disclosure.as_ref()
    }

    pub(crate) fn into_result(self, default_summary: &str) -> ToolResult {
        ToolResult {
            outcome: Some(tool_result::Outcome::Success(Success {
                text: self.text,
                disclosure: self.disclosure.map(Disclosure::into_wire),
                ..Success::default()
            })),
            summary: self.summary.unwrap_or_else(|| default_summary.to_string()),
            audit: None,
            captures: Vec::new(),
        }
    }
}

/// What a call that made a durable record discloses (§3.4, §3.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disclosure {
    pub description: String,
    pub body: String,
    pub reference: String,
    pub superseded: Vec<String>,
}

impl Disclosure {
    /// A record described as `description` (`the bookmark <url>`) holding
    /// `body`.
    pub fn new(description: impl Into<String>, body: impl Into<String>) -> Self {
        Self {
            description: description.into(),
            body: body.into(),
            reference: String::new(),
            superseded: Vec::new(),
        }
    }

    /// How the record is found again (its id).
    #[must_use]
    pub fn reference(mut self, reference: impl Into<String>) -> Self {
        self.reference = reference.into();
        self
    }

    /// An earlier record this one replaces.
    #[must_use]
    pub fn superseding(mut self, earlier: impl Into<String>) -> Self {
        self.superseded.push(earlier.into());
        self
    }

    fn into_wire(self) -> wire::Disclosure {
        wire::Disclosure {
            description: self.description,
            body: self.body,
            reference: self.reference,
            superseded: self.superseded,
        }
    }
}

/// The approval payload of a gated call (§3.7, §6.2): the exact text the
/// approver reads, and one line for the status post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub summary: String,
    pub payload: String,
}

impl Prompt {
    pub fn new(summary: impl Into<String>, payload: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            payload: payload.into(),
        }
    }
}

/// How a body fails (§3.14, §7.1). The first two are the failures a plugin
/// controls; anything else is a tool that threw.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// Arguments the tool's own checks refuse: a result the model reads,
    /// which should say what to do instead (§7.2).
    #[error("{0}")]
    InvalidArguments(String),
    /// The call may have acted and its outcome cannot be established: the
    /// turn ends as an unconfirmed side effect (§7.1).
    #[error("{0}")]
    Unresolved(String),
    /// Any other failure: the framework treats it as a tool that threw
    /// (§7.1), as it does a panic.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidArguments(message.into())
    }

    pub fn unresolved(message: impl Into<String>) -> Self {
        Self::Unresolved(message.into())
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    pub(crate) fn into_result(self, summary: &str) -> ToolResult {
        let outcome = match self {
            Self::InvalidArguments(message) => {
                tool_result::Outcome::InvalidArguments(InvalidArguments { message })
            }
            Self::Unresolved(message) => tool_result::Outcome::Unresolved(Unresolved { message }),
            Self::Failed(message) => tool_result::Outcome::Failure(wire::Failure { message }),
        };
        ToolResult {
            outcome: Some(outcome),
            summary: summary.to_string(),
            audit: None,
            captures: Vec::new(),
        }
    }
}

/// A storage failure a body does not handle is a tool that threw (§7.1);
/// a body that can say what to do instead matches on it first.
impl From<StorageError> for ToolError {
    fn from(error: StorageError) -> Self {
        Self::Failed(error.to_string())
    }
}
