//! Token usage over turns that ended since a moment (§8.4 `usage`, §3.8,
//! §7.2): the turns' recorded totals per agent and model, in any channel
//! and whatever their exit — an abandoned turn's row carries what it spent,
//! since usage is added after each completion — and, apart, the
//! completions a time limit, a steer or a fold cut short, whose tokens are
//! estimates no total includes. Both read the turns' accounting, never
//! their trace events, which a clear deletes (§8.5).

use rusqlite::params;

use super::{Millis, Store, StoreError};

/// One agent's usage on one model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageRow {
    pub agent: String,
    pub model: String,
    pub turns: u64,
    pub prompt_tokens: u64,
    pub cached_prompt_tokens: u64,
    pub completion_tokens: u64,
    pub reasoning_tokens: u64,
    /// The cost the provider reported, summed over the turns that reported
    /// one; `None` where none did.
    pub cost_micro_usd: Option<i64>,
    /// How many of the turns carried a reported cost.
    pub turns_with_cost: u64,
}

/// What cut a completion short, its tokens unreported (§7.2, §7.5, §4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CutBy {
    TimeLimit,
    Steer,
    Fold,
}

/// The completions one cause cut short for an agent on a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutRow {
    pub agent: String,
    pub model: String,
    pub by: CutBy,
    pub completions: u64,
    /// Estimated, never in a total.
    pub estimated_tokens: u64,
}

/// Everything `usage` reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageReport {
    pub rows: Vec<UsageRow>,
    pub cut: Vec<CutRow>,
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl Store {
    /// Usage over the turns that ended at or after `since`.
    pub fn usage_since(&self, since: Millis) -> Result<UsageReport, StoreError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT agent, model, COUNT(*), SUM(prompt_tokens), SUM(cached_prompt_tokens),
                    SUM(completion_tokens), SUM(reasoning_tokens), SUM(cost_micro_usd),
                    COUNT(cost_micro_usd)
             FROM turns INDEXED BY turns_usage
             WHERE ended_at >= ?1 AND ended_at IS NOT NULL
             GROUP BY agent, model ORDER BY agent, model",
        )?;
        let rows = statement
            .query_map(params![since], |row| {
                Ok(UsageRow {
                    agent: row.get(0)?,
                    model: row.get(1)?,
                    turns: count(row.get(2)?),
                    prompt_tokens: count(row.get(3)?),
                    cached_prompt_tokens: count(row.get(4)?),
                    completion_tokens: count(row.get(5)?),
                    reasoning_tokens: count(row.get(6)?),
                    cost_micro_usd: row.get(7)?,
                    turns_with_cost: count(row.get(8)?),
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        // The cut completions, from the turns' own accounting: a clear
        // deletes the trace events and keeps this (§8.5), so usage reads
        // the same before and after it.
        let mut statement = self.conn.prepare_cached(
            "SELECT t.agent, t.model, c.cut_by, SUM(c.completions), SUM(c.estimated_tokens)
             FROM turn_cuts c
             CROSS JOIN turns t ON t.id = c.turn_id
             WHERE t.ended_at >= ?1
             GROUP BY t.agent, t.model, c.cut_by ORDER BY t.agent, t.model, c.cut_by",
        )?;
        let cut = statement
            .query_map(params![since], |row| {
                let kind: String = row.get(2)?;
                Ok(CutRow {
                    agent: row.get(0)?,
                    model: row.get(1)?,
                    by: match kind.as_str() {
                        "steer" => CutBy::Steer,
                        "fold" => CutBy::Fold,
                        // The table's CHECK admits only these three.
                        _ => CutBy::TimeLimit,
                    },
                    completions: count(row.get(3)?),
                    estimated_tokens: count(row.get(4)?),
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut cut = cut;
        cut.sort_by(|a, b| (&a.agent, &a.model, a.by).cmp(&(&b.agent, &b.model, b.by)));
        Ok(UsageReport { rows, cut })
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
