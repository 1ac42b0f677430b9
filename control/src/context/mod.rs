//! The context window (§3.8). Assembly lands with the turns work; what is here
//! now are the fixed shares the configuration is checked against, and what a
//! tool result costs when it is read again.

pub mod replay;
pub mod sizing;
