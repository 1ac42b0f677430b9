//! Inference (§3.8, §3.12, §7.1, §7.2): one provider interface the turn
//! runner calls, whatever the wire. A request goes in; a stream of events
//! comes out and ends in a [`Completion`] or a typed [`Failure`]. The vendors'
//! wire formats, their errors and their leaked markup stay behind this module.

mod anthropic;
mod assemble;
pub mod failure;
pub mod leaked;
mod openai;
pub mod provider;
pub mod request;
mod retry;
/// Public for the fuzz harness's chunking property (fuzz/harness) only.
#[doc(hidden)]
pub mod sse;
pub mod verify;

pub use failure::{Failure, TransportCause};
pub use leaked::{LeakForm, LeakedCall};
pub use provider::{CallLimits, Cancel, CancelHandle, Provider, ProviderConfig, decode};
pub use request::{
    AssistantMessage, CompletionRequest, Message, Reasoning, ReasoningReplay, ToolCall, ToolSpec,
};
pub use retry::RetryPolicy;

/// What a completion used, as the provider reported it (or as estimated).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    /// The part of the prompt a cache served.
    pub cached_prompt_tokens: u64,
    /// The part of the prompt written to a cache.
    pub cache_write_tokens: u64,
    pub completion_tokens: u64,
    pub reasoning_tokens: u64,
    /// The cost the provider reported, in millionths of a US dollar.
    pub cost_micro_usd: Option<i64>,
}

impl Usage {
    /// An estimate as an event records it: marked as one, since no total
    /// counts it (§7.2, §8.2).
    pub fn as_estimate(&self) -> serde_json::Value {
        serde_json::json!({
            "estimated": true,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        })
    }
}

/// Why a completion stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// The model finished.
    Stop,
    /// The model called tools.
    ToolCalls,
    /// The provider stopped it at its output ceiling (§7.1: output cut).
    Length,
    /// The agent's completion time limit cut it (§7.2); usage is an estimate.
    TimeLimit,
    /// Anything else the provider named.
    Other(String),
}

/// One event of a streaming completion, in the order it arrived. Its
/// `Debug` withholds reasoning (§3.12).
#[derive(Clone, PartialEq)]
pub enum StreamEvent {
    Text(String),
    ToolCallDelta {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    /// Private reasoning (§3.12): never logged, posted or shown.
    Reasoning(String),
    Usage(Usage),
    Upstream(String),
    Finish(FinishReason),
    /// The attempt so far was abandoned and is being made again (§7.2): an
    /// observer drops what it showed of it.
    Restart,
}

/// A finished completion.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    /// Stored beside the completion and handed back to the provider only
    /// (§3.12).
    pub reasoning: Option<Reasoning>,
    pub usage: Usage,
    /// True where `usage` is the framework's estimate of what streamed, not
    /// the provider's report (§7.2).
    pub usage_estimated: bool,
    pub finish: FinishReason,
    /// The upstream that served it, where the provider says (OpenRouter).
    pub upstream: Option<String>,
    /// A tool call the provider left in the text as markup (§4.5); the text
    /// must never be posted as a reply.
    pub leaked: Option<LeakedCall>,
    /// How many transport retries it took.
    pub retries: u32,
}

impl Completion {
    /// Neither text nor a call: the runner decides what that means (§7.2).
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.tool_calls.is_empty() && self.leaked.is_none()
    }
}

impl std::fmt::Debug for StreamEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Text(text) => f.debug_tuple("Text").field(text).finish(),
            Self::ToolCallDelta {
                index,
                id,
                name,
                arguments,
            } => f
                .debug_struct("ToolCallDelta")
                .field("index", index)
                .field("id", id)
                .field("name", name)
                .field("arguments", arguments)
                .finish(),
            Self::Reasoning(text) => {
                write!(f, "Reasoning([{} chars withheld])", text.chars().count())
            }
            Self::Usage(usage) => f.debug_tuple("Usage").field(usage).finish(),
            Self::Upstream(upstream) => f.debug_tuple("Upstream").field(upstream).finish(),
            Self::Finish(finish) => f.debug_tuple("Finish").field(finish).finish(),
            Self::Restart => f.write_str("Restart"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_formatting_never_prints_reasoning() {
        let secret = "PRIVATE-7f3a";
        let completion = Completion {
            text: "hi".into(),
            tool_calls: Vec::new(),
            reasoning: Some(Reasoning {
                text: secret.into(),
                replay: ReasoningReplay::ThinkingBlocks(vec![
                    serde_json::json!({"thinking": secret}),
                ]),
            }),
            usage: Usage::default(),
            usage_estimated: false,
            finish: FinishReason::Stop,
            upstream: None,
            leaked: None,
            retries: 0,
        };
        let shown = format!("{completion:?} {:?}", StreamEvent::Reasoning(secret.into()));
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains("withheld"));
    }
}
