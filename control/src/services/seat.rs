//! An agent at runtime, and the system bot.

use crate::chat::Rest;
use crate::config::resolved::ResolvedAgent;
use crate::inference::{Provider, ToolSpec};
use crate::tools::ToolRef;

/// One agent at runtime.
pub struct Seat {
    pub agent: ResolvedAgent,
    pub expertise: String,
    pub user_id: String,
    /// The agent's own session: it posts, reacts and reads as itself.
    pub rest: Rest,
    pub provider: Provider,
    pub system_prompt: String,
    /// What the model is offered, in the order offered.
    pub tools: Vec<ToolSpec>,
    /// Every tool the agent may call this boot: granted tools whose host is
    /// running, and the core tools this daemon serves (§3.4).
    pub held: Vec<ToolRef>,
}

/// The system bot at runtime.
pub struct SystemBot {
    pub username: String,
    pub user_id: String,
    pub rest: Rest,
}
