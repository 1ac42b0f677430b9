//! The context window (§3.8): the system prompt, the channel window walked
//! backwards under the budget with the agent's own trace interleaved, and
//! the framework's message after it; what a tool result costs when read
//! again, and the fixed shares the configuration is checked against.

pub mod message;
pub mod prompt;
pub mod relief;
pub mod replay;
pub mod sizing;
pub mod tokens;
pub mod window;
