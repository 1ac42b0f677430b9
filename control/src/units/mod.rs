//! Work units (§3.15): one thing one agent handed to another, in one
//! channel, moved by `tasks::assign`, `tasks::report`, `tasks::close` and
//! read by `tasks::read`. Every change is a post under the acting agent's
//! account, from a fixed template, and only then a record pointing at it;
//! authority is read off the record (the assignee reports, the creator
//! closes) and nothing reopens a unit. Assignment, report and close are
//! ungated: a hand-off is no more consequential than the mention it
//! replaces.

pub mod assign;
pub mod boot;
pub mod call;
pub mod close;
pub mod exhausted;
pub(crate) mod find;
pub mod notice;
pub mod owes;
mod publish;
pub mod read;
pub mod reminder;
pub mod render;
pub mod report;
pub mod standing;
pub mod status;
pub mod template;
mod when;

#[cfg(test)]
pub(crate) mod test_unit;

use crate::services::{Seat, Services};

/// What a verb answers: done, refused before its post (nothing changed),
/// or failed after its post (the post is up and carries no record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Done(String),
    Refused(String),
    Failed(String),
}

/// Where a verb is called.
pub struct Caller<'a> {
    pub services: &'a Services,
    pub seat: &'a Seat,
    pub channel_id: &'a str,
    pub turn_id: &'a str,
}

impl Caller<'_> {
    pub fn agent(&self) -> &str {
        &self.seat.agent.username
    }

    /// An agent as the results name it: its display name (§3.1, §3.15).
    pub fn name<'b>(&'b self, username: &'b str) -> &'b str {
        self.services.display_name(username)
    }
}

/// The words every verb's result and the Open work section end on: nothing
/// wakes an agent on its own (§3.15, A3).
pub const NOTHING_WAKES: &str = "Nothing starts another turn of yours here until a person posts, a colleague mentions you, or a trigger fires.";
