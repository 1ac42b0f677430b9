//! Relief under pressure (§3.8): a turn's context over its ceiling gives
//! back room without cutting anything silently. Results the model has
//! already read become one-line stand-ins, largest first, until the context
//! is well under the ceiling; the batch just received, which the model has
//! not read, is only ever shortened together, each view keeping its
//! reference (A4).

use crate::context::tokens::estimate;
use crate::context::window::message_cost;
use crate::inference::Message;
use crate::tools::core::{ResultViews, STAND_IN_MARK};

/// The share of the ceiling relief brings a context down to, so one
/// rewrite buys room for many completions (§3.8).
const RELIEF_TARGET_PERCENT: u64 = 70;

/// What relief acts on: the turn's own messages, its kept results and
/// what the rest of the context costs.
pub struct Pressure<'a> {
    /// The turn's own messages, after the window.
    pub own: &'a mut [Message],
    pub views: &'a mut ResultViews,
    /// What precedes the turn's own messages, in estimated tokens.
    pub fixed: u64,
    pub ceiling: u64,
    /// When a result the turn did not keep is kept for its stand-in.
    pub now: i64,
    pub timezone: chrono_tz::Tz,
}

/// What relief did, so the turn can forget which results it still shows.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Relieved {
    /// Calls whose results became stand-ins.
    pub stood_in: Vec<String>,
    /// Calls whose fresh results were shortened.
    pub shortened: Vec<String>,
}

impl Pressure<'_> {
    /// The context as the next completion would send it, in estimated tokens.
    pub fn used(&self) -> u64 {
        self.fixed + self.own.iter().map(message_cost).sum::<u64>()
    }

    /// Relieves the context if it is over the ceiling; a context still over
    /// it afterwards is the caller's to end (§3.8, §7.1).
    pub fn relieve(&mut self) -> Relieved {
        let mut relieved = Relieved::default();
        if self.used() <= self.ceiling {
            return relieved;
        }
        relieved.stood_in = self.stand_in_read_results();
        if self.used() > self.ceiling {
            relieved.shortened = self.shorten_fresh_batch();
        }
        relieved
    }

    /// Results the model has read — those a later completion was made
    /// with — become stand-ins, largest first, until the context is well
    /// under the ceiling.
    fn stand_in_read_results(&mut self) -> Vec<String> {
        let target = self.ceiling * RELIEF_TARGET_PERCENT / 100;
        let fresh_from = fresh_batch_start(self.own);
        let mut read: Vec<(usize, u64)> = self.own[..fresh_from]
            .iter()
            .enumerate()
            .filter_map(|(index, message)| match message {
                Message::ToolResult { content, .. } if !content.starts_with(STAND_IN_MARK) => {
                    Some((index, estimate(content)))
                }
                _ => None,
            })
            .collect();
        read.sort_by_key(|&(index, cost)| (std::cmp::Reverse(cost), index));
        let mut stood_in = Vec::new();
        for (index, _) in read {
            if self.used() <= target {
                break;
            }
            if let Message::ToolResult {
                call_id,
                name,
                content,
            } = &mut self.own[index]
            {
                *content = self
                    .views
                    .stand_in(call_id, name, content, self.now, self.timezone);
                stood_in.push(call_id.clone());
            }
        }
        stood_in
    }

    /// The results received since the last completion, shortened together
    /// to the longest common view that fits under the ceiling; below the
    /// floor each shows only its size and its reference.
    fn shorten_fresh_batch(&mut self) -> Vec<String> {
        let fresh_from = fresh_batch_start(self.own);
        let fresh: Vec<usize> = (fresh_from..self.own.len())
            .filter(|&index| self.is_kept_result(index))
            .collect();
        let longest = fresh
            .iter()
            .map(|&index| match &self.own[index] {
                Message::ToolResult { content, .. } => content.chars().count(),
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        let (mut fits, mut over) = (0, longest);
        while fits + 1 < over {
            let limit = fits + (over - fits) / 2;
            if self.cost_with_fresh_at(&fresh, limit) <= self.ceiling {
                fits = limit;
            } else {
                over = limit;
            }
        }
        let mut shortened = Vec::new();
        for index in fresh {
            if let Message::ToolResult {
                call_id, content, ..
            } = &mut self.own[index]
                && let Some(view) = self.views.view(call_id, fits, self.timezone)
                && view.text != *content
            {
                *content = view.text;
                shortened.push(call_id.clone());
            }
        }
        shortened
    }

    fn is_kept_result(&self, index: usize) -> bool {
        matches!(&self.own[index], Message::ToolResult { call_id, .. } if self.views.holds(call_id))
    }

    /// What the context would cost with every fresh result viewed in at
    /// most `limit` characters.
    fn cost_with_fresh_at(&mut self, fresh: &[usize], limit: usize) -> u64 {
        let mut cost = self.used();
        for &index in fresh {
            if let Message::ToolResult {
                call_id, content, ..
            } = &self.own[index]
                && let Some(view) = self.views.view(call_id, limit, self.timezone)
            {
                cost = cost - estimate(content) + estimate(&view.text);
            }
        }
        cost
    }
}

/// Where the batch the model has not read yet begins: just after the last
/// of the turn's own completions. Everything before it was in the context
/// of a completion the model made.
fn fresh_batch_start(own: &[Message]) -> usize {
    own.iter()
        .rposition(|message| matches!(message, Message::Assistant(_)))
        .map_or(0, |last| last + 1)
}

#[cfg(test)]
mod tests;
