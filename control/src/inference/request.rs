//! What the turn runner asks of a provider: the system prompt, the tools,
//! the conversation, and how to reason and cache (§3.8, §3.12).

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompletionRequest {
    pub system: String,
    pub tools: Vec<ToolSpec>,
    pub messages: Vec<Message>,
    /// In the provider's own vocabulary (§3.12); unset, its default stands.
    pub reasoning_effort: Option<String>,
    /// Upstreams to prefer, in order, where the provider routes (§3.8).
    pub preferred_upstreams: Vec<String>,
    /// Indices into `messages` after which a cache breakpoint goes: the end
    /// of the window's stable prefix, and the end of the window (§3.8).
    pub cache_breakpoints: Vec<usize>,
    pub max_output_tokens: Option<u32>,
}

/// A tool as the model sees it: its model-form name (`mail__send`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments, size bounds removed (§7.2).
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(String),
    Assistant(AssistantMessage),
    ToolResult {
        call_id: String,
        name: String,
        content: String,
    },
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct AssistantMessage {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    /// Handed back only for rounds of the turn in progress (§3.12); the runner
    /// leaves it out of earlier turns.
    pub reasoning: Option<Reasoning>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    /// The name as the model wrote it.
    pub name: String,
    /// The argument text exactly as it arrived.
    pub arguments: String,
}

/// Private reasoning and what the provider needs to continue from it. Its
/// `Debug` shows sizes only, so no `{:?}` in a log line or a panic can print
/// it (§3.12).
#[derive(Clone, PartialEq)]
pub struct Reasoning {
    pub text: String,
    pub replay: ReasoningReplay,
}

/// How a provider wants reasoning handed back, unaltered.
#[derive(Clone, PartialEq)]
pub enum ReasoningReplay {
    /// As `reasoning_content` on the assistant message (thinking-mode
    /// OpenAI-compatible providers).
    Content,
    /// As OpenRouter's `reasoning_details`, exactly as received.
    Details(Vec<Value>),
    /// As Anthropic thinking blocks with their signatures, exactly as
    /// received.
    ThinkingBlocks(Vec<Value>),
}

impl Reasoning {
    /// The form stored beside its completion (§3.12): the text and what the
    /// provider needs to continue from it, exactly as received. It goes to
    /// the store's private column and nowhere else.
    pub fn stored(&self) -> String {
        let replay = match &self.replay {
            ReasoningReplay::Content => serde_json::json!({"content": true}),
            ReasoningReplay::Details(details) => serde_json::json!({"details": details}),
            ReasoningReplay::ThinkingBlocks(blocks) => {
                serde_json::json!({"thinking_blocks": blocks})
            }
        };
        serde_json::json!({"text": self.text, "replay": replay}).to_string()
    }
}

impl std::fmt::Debug for Reasoning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Reasoning([{} chars withheld], {:?})",
            self.text.chars().count(),
            self.replay
        )
    }
}

impl std::fmt::Debug for ReasoningReplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Content => f.write_str("Content"),
            Self::Details(details) => write!(f, "Details([{} withheld])", details.len()),
            Self::ThinkingBlocks(blocks) => {
                write!(f, "ThinkingBlocks([{} withheld])", blocks.len())
            }
        }
    }
}
