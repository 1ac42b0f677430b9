//! Rejected posts (§4.5): output the framework refuses to post is fed back
//! to the model once as a rejected post, spending one attempt; two in a row
//! end the turn with a deterministic notice. One count covers every cause,
//! because a model alternating between them is showing one behaviour, and a
//! tool call that runs between two rejections resets it.

use std::collections::BTreeSet;

use crate::inference::FinishReason;

/// Why a reply was not posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The reply addressed two or more agents present in the channel.
    SeveralAgents { agents: Vec<String> },
    /// The turn already addressed one colleague; this reply names another.
    SecondPeer { first: String, second: String },
    /// Longer than a post can carry; never truncated (A4).
    TooLong { limit: usize, length: usize },
    /// No letter or digit in any script outside markup tags.
    NoProse,
    /// One line repeated so often it makes up most of the reply.
    RepeatedLine { times: usize },
    /// A tool call written as text, recognised by the inference adapter.
    CallAsProse,
    /// The output stopped at its token or time limit (§7.1): never posted
    /// as if it were whole, and named by the limit that cut it.
    CutOff { length: usize, by: CutBy },
    /// The reply hands work to a colleague, and the work has reached the
    /// delegation (depth) or chain limit (§7.4).
    LimitReached { what: String },
    /// The reply reaches nobody while the turn's agent still holds a unit
    /// it was working in assigned: sent back once (§3.15). The words are
    /// the units module's, which names the unit and the ways on.
    UnitOpen {
        feedback: String,
        side: crate::units::reminder::Side,
    },
}

/// How many times one line may appear before a reply made mostly of it is
/// no message (§4.5).
pub const REPEATS: usize = 5;

impl Rejection {
    /// The text the model reads in place of its reply.
    pub fn feedback(&self) -> String {
        match self {
            Self::UnitOpen { feedback, .. } => feedback.clone(),
            Self::SeveralAgents { agents } => format!(
                "Your reply was not posted: it addressed {} agents ({}). Address at most one \
                 colleague per turn; to name one without addressing it, write its name without the @.",
                agents.len(),
                agents.join(", ")
            ),
            Self::SecondPeer { first, second } => format!(
                "Your reply was not posted: this turn already addressed {first}, and this reply \
                 addresses {second}. A turn addresses at most one colleague; name the other \
                 without the @, or leave it for a later turn."
            ),
            Self::TooLong { limit, length } => format!(
                "Your reply was not posted: it is {length} characters long, and a post holds at \
                 most {limit}. Answer more briefly, or reply with the first part and say what remains."
            ),
            Self::NoProse => {
                "Your reply was not posted: it holds no words. Write the reply in prose.".into()
            }
            Self::RepeatedLine { times } => format!(
                "Your reply was not posted: one line makes up most of it, repeated {times} times. \
                 Write the reply you mean to send."
            ),
            Self::CutOff { length, by } => cut_off(*length, *by),
            Self::LimitReached { what } => format!(
                "Your reply was not posted: it hands work to a colleague, and this work has \
                 reached {what}. Reply without addressing a colleague, and say that a person \
                 needs to pick this up."
            ),
            Self::CallAsProse => {
                "Your reply was not posted: it holds a tool call written as text, \
                 which runs nothing. Call the tool through the tool interface, or write prose."
                    .into()
            }
        }
    }
}

/// Which limit stopped a completion before the model finished (§7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutBy {
    /// The provider's output ceiling.
    Output,
    /// The agent's completion time limit, in seconds.
    Time { secs: u32 },
}

impl Rejection {
    /// The rejection a completion cut at a limit owes, naming which limit
    /// cut it; `None` for one the model finished (§7.1).
    pub fn of_cut(finish: &FinishReason, text: &str, time_limit_secs: u32) -> Option<Self> {
        let by = match finish {
            FinishReason::Length => CutBy::Output,
            FinishReason::TimeLimit => CutBy::Time {
                secs: time_limit_secs,
            },
            _ => return None,
        };
        Some(Self::CutOff {
            length: text.chars().count(),
            by,
        })
    }
}

/// What the model reads of a cut: which limit, and whether anything was
/// kept (§7.1).
fn cut_off(length: usize, by: CutBy) -> String {
    let (limit, advice) = match by {
        CutBy::Output => ("the output limit".to_string(), "Answer more briefly."),
        CutBy::Time { secs } => (
            format!("the completion time limit of {secs} seconds"),
            "Answer sooner, with less work in one completion.",
        ),
    };
    if length == 0 {
        format!("Your reply was not posted: {limit} cut it off before it held anything. {advice}")
    } else {
        format!(
            "Your reply was not posted: it was cut off at {limit} after {length} characters, \
             so it is incomplete. {advice}"
        )
    }
}

/// Checks a reply the turn means to post. `addressed` are the agents present
/// in the channel that the reply mentions (by the shared grammar), and
/// `earlier_peer` the colleague an earlier post of this turn addressed.
pub fn check_reply(
    text: &str,
    addressed: &BTreeSet<String>,
    earlier_peer: Option<&str>,
    post_limit: usize,
) -> Option<Rejection> {
    if addressed.len() >= 2 {
        return Some(Rejection::SeveralAgents {
            agents: addressed.iter().cloned().collect(),
        });
    }
    if let (Some(first), Some(second)) = (earlier_peer, addressed.iter().next())
        && first != second
    {
        return Some(Rejection::SecondPeer {
            first: first.to_string(),
            second: second.clone(),
        });
    }
    let length = text.chars().count();
    if length > post_limit {
        return Some(Rejection::TooLong {
            limit: post_limit,
            length,
        });
    }
    if !has_prose(text) {
        return Some(Rejection::NoProse);
    }
    if let Some(times) = mostly_one_line(text) {
        return Some(Rejection::RepeatedLine { times });
    }
    None
}

/// Whether any letter or digit, in any script, stands outside markup tags.
fn has_prose(text: &str) -> bool {
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag && c.is_alphanumeric() => return true,
            _ => {}
        }
    }
    false
}

/// The number of times the most repeated line appears, when that is at
/// least [`REPEATS`] and its copies make up most of the reply's text.
fn mostly_one_line(text: &str) -> Option<usize> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let total: usize = lines.iter().map(|l| l.chars().count()).sum();
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for line in &lines {
        *counts.entry(line).or_default() += 1;
    }
    let (line, times) = counts.into_iter().max_by_key(|(_, n)| *n)?;
    let share = times * line.chars().count();
    (times >= REPEATS && share * 2 > total).then_some(times)
}

/// The turn's count of rejected posts in a row.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RejectionCount {
    in_a_row: u32,
}

/// What the runner does after a rejection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterRejection {
    /// Feed the rejection back and let the model answer again.
    FeedBack,
    /// The second in a row: end the turn with the deterministic notice.
    EndTurn,
}

impl RejectionCount {
    pub fn rejected(&mut self) -> AfterRejection {
        self.in_a_row += 1;
        if self.in_a_row >= 2 {
            AfterRejection::EndTurn
        } else {
            AfterRejection::FeedBack
        }
    }

    /// A tool call ran: the model did something else between, so the count
    /// starts over.
    /// Whether one more rejection would end the turn: a reminder that
    /// would cost a valid reply is not sent then (§3.15).
    pub fn would_end(&self) -> bool {
        self.in_a_row + 1 >= 2
    }

    pub fn tool_ran(&mut self) {
        self.in_a_row = 0;
    }
}
