//! Triggers (§4.1–§4.3): deterministic code deciding that work has arrived
//! for an agent — a schedule coming due, mail arriving, a webhook — records a
//! trigger in the store, and the system bot announces it when its channel is
//! idle. Nothing runs because a row exists; a turn follows the post (A1).
//!
//! - `schedule`: when a declared recurrence comes due.
//! - `intake`: where a trigger may go: never a DM, never a channel without
//!   its agent.
//! - `announce`: the post's fixed template.
//! - `scheduler`: the loop that records each schedule's firings.
//! - `mail_poll`: the inbound poll of each agent's mailbox (§3.13).
//! - `resolve`: `triggers::resolve`, the agent marking one handled.
//!
//! The idle gate that decides when a recorded trigger is posted lives with
//! the lanes, which alone know whether a channel is idle (`lanes/triggers.rs`).

pub mod announce;
pub mod intake;
pub mod mail_poll;
pub mod resolve;
pub mod schedule;
pub mod scheduler;

pub use schedule::{Recurrence, RecurrenceError};
