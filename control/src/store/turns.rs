//! Turn records (§8.2) and the rolling window the hourly ceiling counts (§7.4).

use rusqlite::{OptionalExtension, params};

use super::kinds::{TraceKind, TurnCause};
use super::{Millis, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTurn {
    pub id: String,
    pub agent: String,
    pub channel_id: String,
    pub boot_id: String,
    pub started_at: Millis,
    pub cause: TurnCause,
    pub answers_post_id: Option<String>,
    pub depth: u32,
    /// The root turn's id; a turn with no recorded root is its own (§7.4).
    pub chain_root: String,
    pub chain_length: u32,
    pub model: String,
}

/// Counts the event `(turn_id, seq)` in `turn_cuts` where it records a
/// completion cut short: a time limit's completion, whose usage is the
/// estimate, or a steer or fold that aborted one (§7.2, §7.5, §4.4).
const CUT_ACCOUNTING: &str = "
    INSERT INTO turn_cuts (turn_id, cut_by, completions, estimated_tokens)
    SELECT turn_id,
           CASE kind WHEN 'completion' THEN 'time_limit' ELSE kind END,
           1,
           COALESCE(
               CASE WHEN kind = 'completion'
                    THEN json_extract(detail, '$.usage.prompt_tokens')
                         + json_extract(detail, '$.usage.completion_tokens')
                    ELSE json_extract(detail, '$.aborted_completion.prompt_tokens')
                         + json_extract(detail, '$.aborted_completion.completion_tokens')
               END, 0)
    FROM turn_events
    WHERE turn_id = ?1 AND seq = ?2
      AND (kind = 'completion' AND json_extract(detail, '$.finish') = 'TimeLimit'
           OR kind IN ('steer', 'fold') AND json_extract(detail, '$.aborted_completion') IS NOT NULL)
    ON CONFLICT (turn_id, cut_by) DO UPDATE SET
        completions = completions + 1,
        estimated_tokens = estimated_tokens + excluded.estimated_tokens";

impl Store {
    pub fn open_turn(&self, turn: &NewTurn) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO turns (id, agent, channel_id, boot_id, started_at, cause, answers_post_id,
                                depth, chain_root, chain_length, model)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                turn.id,
                turn.agent,
                turn.channel_id,
                turn.boot_id,
                turn.started_at,
                turn.cause,
                turn.answers_post_id,
                turn.depth,
                turn.chain_root,
                turn.chain_length,
                turn.model,
            ],
        )?;
        Ok(())
    }

    /// Turns started at or after `since`, framework-wide (§7.4).
    pub fn turns_started_since(&self, since: Millis) -> Result<u64, StoreError> {
        let count: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM turns WHERE started_at >= ?1",
            params![since],
            |row| row.get(0),
        )?;
        // COUNT(*) is never negative.
        Ok(u64::try_from(count).unwrap_or_default())
    }
}

/// One entry of a turn's trace (§8.3), as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEvent {
    pub turn_id: String,
    pub seq: i64,
    pub at: Millis,
    pub kind: TraceKind,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    pub arguments: Option<String>,
    pub content: Option<String>,
    pub detail: Option<String>,
}

/// What a turn record says when the turn ends (§7.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEnd {
    pub exit_kind: String,
    pub ended_at: Millis,
    pub ended_by: Option<String>,
    pub context_reach_post_id: Option<String>,
}

/// A turn as the window and the lanes read it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRecord {
    pub id: String,
    pub agent: String,
    pub channel_id: String,
    pub started_at: Millis,
    pub ended_at: Option<Millis>,
    pub exit_kind: Option<String>,
    pub context_reach_post_id: Option<String>,
    /// The post the turn answers (§5.2).
    pub answers_post_id: Option<String>,
    /// What started it (§8.2): `post`, `drain`, `handoff`, `reconnect`, …
    pub cause: String,
    /// For a drain, the oldest post it took when it began (§5.2).
    pub drain_from_post_id: Option<String>,
    /// A person steered it at least once (§7.5).
    pub steered: bool,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cached_prompt_tokens: i64,
}

impl Store {
    /// Adds one completion's usage to the turn's totals, at once, so an
    /// abandoned turn still counts what it spent (§8.2).
    pub fn add_usage(
        &self,
        turn_id: &str,
        usage: &crate::inference::Usage,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE turns SET prompt_tokens = prompt_tokens + ?2,
                    cached_prompt_tokens = cached_prompt_tokens + ?3,
                    cache_write_tokens = cache_write_tokens + ?4,
                    completion_tokens = completion_tokens + ?5,
                    reasoning_tokens = reasoning_tokens + ?6,
                    cost_micro_usd = CASE WHEN ?7 IS NULL THEN cost_micro_usd
                                          ELSE COALESCE(cost_micro_usd, 0) + ?7 END
             WHERE id = ?1",
            params![
                turn_id,
                clamp(usage.prompt_tokens),
                clamp(usage.cached_prompt_tokens),
                clamp(usage.cache_write_tokens),
                clamp(usage.completion_tokens),
                clamp(usage.reasoning_tokens),
                usage.cost_micro_usd,
            ],
        )?;
        Ok(())
    }

    /// Appends an entry to the turn's trace; its `seq` is the next.
    pub fn append_event(&self, event: &TurnEvent) -> Result<i64, StoreError> {
        self.append_event_with_reasoning(event, None)
    }

    /// Appends an event with the private reasoning of the completion it
    /// records, kept beside it and read by nothing that shows it (§3.12).
    pub fn append_event_with_reasoning(
        &self,
        event: &TurnEvent,
        reasoning: Option<&str>,
    ) -> Result<i64, StoreError> {
        // One transaction: the event, and the accounting it implies on the
        // turn's record, land together or not at all. Inside a caller's
        // transaction (`Store::bulk`) that one already holds them together.
        let tx = if self.conn.is_autocommit() {
            Some(self.conn.unchecked_transaction()?)
        } else {
            None
        };
        let seq: i64 = self.conn.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM turn_events WHERE turn_id = ?1",
            params![event.turn_id],
            |row| row.get(0),
        )?;
        self.conn.execute(
            "INSERT INTO turn_events (turn_id, seq, at, kind, call_id, tool, arguments, content, detail, reasoning)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                event.turn_id,
                seq,
                event.at,
                event.kind,
                event.call_id,
                event.tool,
                event.arguments,
                event.content,
                event.detail,
                reasoning,
            ],
        )?;
        if event.kind == TraceKind::Steer {
            // The turn's own row says a person steered it (§7.5), beside
            // the trace that keeps the text.
            self.conn.execute(
                "UPDATE turns SET steered = 1 WHERE id = ?1",
                params![event.turn_id],
            )?;
        }
        // A completion cut short is counted on the turn's accounting, which
        // a clear keeps while it deletes the event (§8.5, §8.4 `usage`).
        self.conn
            .execute(CUT_ACCOUNTING, params![event.turn_id, seq])?;
        if let Some(tx) = tx {
            tx.commit()?;
        }
        Ok(seq)
    }

    /// The stored reasoning of a turn's completions, in order: for checking
    /// that it is kept beside its completion (§3.12), never for showing.
    pub fn completion_reasoning(&self, turn_id: &str) -> Result<Vec<Option<String>>, StoreError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT reasoning FROM turn_events WHERE turn_id = ?1 AND kind = 'completion' ORDER BY seq",
        )?;
        let rows = statement
            .query_map(params![turn_id], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// A turn's trace, in order.
    pub fn turn_events(&self, turn_id: &str) -> Result<Vec<TurnEvent>, StoreError> {
        self.events_where("turn_id = ?1 ORDER BY seq", params![turn_id])
    }

    /// The trace of an agent's own turns in a channel between two times,
    /// oldest first: what the window interleaves with the posts (§3.8).
    pub fn own_trace(
        &self,
        agent: &str,
        channel_id: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<TurnEvent>, StoreError> {
        self.events_where(
            "turn_id IN (SELECT id FROM turns WHERE agent = ?1 AND channel_id = ?2)
               AND at >= ?3 AND at < ?4 AND kind IN ('completion', 'result')
             ORDER BY at, turn_id, seq",
            params![agent, channel_id, from, to],
        )
    }

    fn events_where(
        &self,
        clause: &str,
        values: impl rusqlite::Params,
    ) -> Result<Vec<TurnEvent>, StoreError> {
        let mut statement = self.conn.prepare_cached(&format!(
            "SELECT turn_id, seq, at, kind, call_id, tool, arguments, content, detail
             FROM turn_events WHERE {clause}"
        ))?;
        let rows = statement
            .query_map(values, |row| {
                Ok(TurnEvent {
                    turn_id: row.get(0)?,
                    seq: row.get(1)?,
                    at: row.get(2)?,
                    kind: row.get(3)?,
                    call_id: row.get(4)?,
                    tool: row.get(5)?,
                    arguments: row.get(6)?,
                    content: row.get(7)?,
                    detail: row.get(8)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    pub fn record_answer(&self, turn_id: &str, post_id: &str, how: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO turn_answers (turn_id, post_id, how) VALUES (?1, ?2, ?3)
             ON CONFLICT DO NOTHING",
            params![turn_id, post_id, how],
        )?;
        Ok(())
    }

    /// The posts a turn answers, with how each came to it (§5.2).
    pub fn answers(&self, turn_id: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT post_id, how FROM turn_answers WHERE turn_id = ?1 ORDER BY rowid",
        )?;
        let rows = statement
            .query_map(params![turn_id], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    pub fn set_status_post(&self, turn_id: &str, post_id: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE turns SET status_post_id = ?2 WHERE id = ?1",
            params![turn_id, post_id],
        )?;
        Ok(())
    }

    /// Records what the turn last assembled (§8.2): when, how far back, and
    /// what the budget charged.
    pub fn record_assembly(
        &self,
        turn_id: &str,
        at: Millis,
        reach_post_id: Option<&str>,
        charged_tokens: u64,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE turns SET context_assembled_at = ?2, context_reach_post_id = ?3,
                    context_charged_tokens = ?4
             WHERE id = ?1",
            params![turn_id, at, reach_post_id, clamp(charged_tokens)],
        )?;
        Ok(())
    }

    pub fn end_turn(&self, turn_id: &str, end: &TurnEnd) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE turns SET ended_at = ?2, exit_kind = ?3, ended_by = ?4 WHERE id = ?1",
            params![turn_id, end.ended_at, end.exit_kind, end.ended_by],
        )?;
        Ok(())
    }

    /// Adds action attempts to the turn's count as the budget spends them
    /// (§5.3, §8.2), so the record and the prompt's "action N of M" agree.
    pub fn add_actions(&self, turn_id: &str, count: u32) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE turns SET action_count = action_count + ?2 WHERE id = ?1",
            params![turn_id, count],
        )?;
        Ok(())
    }

    /// The turn's action count as recorded (§8.2); none for no such turn.
    pub fn action_count(&self, turn_id: &str) -> Result<Option<u32>, StoreError> {
        let mut statement = self
            .conn
            .prepare("SELECT action_count FROM turns WHERE id = ?1")?;
        let mut rows = statement.query_map(params![turn_id], |row| row.get(0))?;
        Ok(rows.next().transpose()?)
    }

    /// The turn's status post, once it has one (§8.1).
    pub fn status_post_id(&self, turn_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT status_post_id FROM turns WHERE id = ?1",
                params![turn_id],
                |row| row.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }

    /// The agent's latest turn in the channel, ended or not.
    pub fn last_turn(
        &self,
        agent: &str,
        channel_id: &str,
    ) -> Result<Option<TurnRecord>, StoreError> {
        self.turns_where(
            "agent = ?1 AND channel_id = ?2 ORDER BY started_at DESC, id DESC LIMIT 1",
            params![agent, channel_id],
        )
        .map(|mut turns| turns.pop())
    }

    pub fn turn(&self, id: &str) -> Result<Option<TurnRecord>, StoreError> {
        self.turns_where("id = ?1", params![id])
            .map(|mut turns| turns.pop())
    }

    /// Every turn an agent took in a channel, oldest first.
    pub fn turns_of(&self, agent: &str, channel_id: &str) -> Result<Vec<TurnRecord>, StoreError> {
        self.turns_where(
            "agent = ?1 AND channel_id = ?2 ORDER BY started_at, id",
            params![agent, channel_id],
        )
    }

    fn turns_where(
        &self,
        clause: &str,
        values: impl rusqlite::Params,
    ) -> Result<Vec<TurnRecord>, StoreError> {
        let mut statement = self.conn.prepare_cached(&format!(
            "SELECT id, agent, channel_id, started_at, ended_at, exit_kind, context_reach_post_id,
                    prompt_tokens, completion_tokens, cached_prompt_tokens, answers_post_id,
                    cause, drain_from_post_id, steered
             FROM turns WHERE {clause}"
        ))?;
        let rows = statement
            .query_map(values, |row| {
                Ok(TurnRecord {
                    id: row.get(0)?,
                    agent: row.get(1)?,
                    channel_id: row.get(2)?,
                    started_at: row.get(3)?,
                    ended_at: row.get(4)?,
                    exit_kind: row.get(5)?,
                    context_reach_post_id: row.get(6)?,
                    prompt_tokens: row.get(7)?,
                    completion_tokens: row.get(8)?,
                    cached_prompt_tokens: row.get(9)?,
                    answers_post_id: row.get(10)?,
                    cause: row.get(11)?,
                    drain_from_post_id: row.get(12)?,
                    steered: row.get::<_, i64>(13)? != 0,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

/// Token counts are far below `i64::MAX`; a report beyond it is clamped, not
/// wrapped.
fn clamp(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}

/// What the boot sweep needs to know of a turn a restart cut off (§7.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbandonedTurn {
    pub id: String,
    pub agent: String,
    pub channel_id: String,
    pub answers_post_id: Option<String>,
    pub status_post_id: Option<String>,
    /// It posted a reply, parked on a person, or dispatched a call that is
    /// not safe to run again.
    pub had_effects: bool,
    /// It made at least one completion.
    pub completed_once: bool,
}

impl Store {
    /// Turns another boot left without an end.
    pub fn abandoned_turns(&self, boot_id: &str) -> Result<Vec<AbandonedTurn>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT t.id, t.agent, t.channel_id, t.answers_post_id, t.status_post_id,
                    EXISTS (SELECT 1 FROM posts p WHERE p.turn_id = t.id AND p.role IN ('reply', 'unit_post'))
                    OR EXISTS (SELECT 1 FROM decisions d WHERE d.turn_id = t.id)
                    OR EXISTS (SELECT 1 FROM worker_calls w WHERE w.turn_id = t.id AND w.retryable = 0
                               AND (w.outcome IS NULL OR w.outcome <> 'not_sent')),
                    EXISTS (SELECT 1 FROM turn_events e WHERE e.turn_id = t.id AND e.kind = 'completion')
             FROM turns t WHERE t.ended_at IS NULL AND t.boot_id <> ?1
             ORDER BY t.started_at",
        )?;
        let rows = statement
            .query_map(params![boot_id], |row| {
                Ok(AbandonedTurn {
                    id: row.get(0)?,
                    agent: row.get(1)?,
                    channel_id: row.get(2)?,
                    answers_post_id: row.get(3)?,
                    status_post_id: row.get(4)?,
                    had_effects: row.get(5)?,
                    completed_once: row.get(6)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Records the status posts and prompts of turns another process left
    /// running that it created but died before recording (§7.3): the boot's
    /// catch-up has read them from the channel by then (§8.2), each known
    /// by the turn and, for a prompt, the decision its props carry. Without
    /// this the sweep could neither close such a status post nor
    /// invalidate such a prompt, and its buttons would stay live.
    pub fn recover_unrecorded_posts(&self, boot_id: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE turns SET status_post_id = (
                 SELECT p.id FROM posts p
                 WHERE p.turn_id = turns.id AND p.role = 'status' AND p.deleted_at IS NULL
                 ORDER BY p.created_at, p.id LIMIT 1)
             WHERE ended_at IS NULL AND boot_id <> ?1 AND status_post_id IS NULL",
            params![boot_id],
        )?;
        self.conn.execute(
            "UPDATE decisions SET prompt_post_id = (
                 SELECT p.id FROM posts p
                 WHERE p.turn_id = decisions.turn_id AND p.role = 'prompt'
                   AND p.deleted_at IS NULL
                   AND json_extract(p.props, '$.collegium_decision') = decisions.id
                 ORDER BY p.created_at, p.id LIMIT 1)
             WHERE prompt_post_id IS NULL AND outcome IS NULL
               AND turn_id IN (SELECT id FROM turns WHERE ended_at IS NULL AND boot_id <> ?1)",
            params![boot_id],
        )?;
        Ok(())
    }

    /// Prompts of a turn still waiting on a person: (decision, prompt post,
    /// what the person was shown).
    pub fn open_prompts_of(
        &self,
        turn_id: &str,
    ) -> Result<Vec<(String, Option<String>, String)>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT id, prompt_post_id, payload FROM decisions
             WHERE turn_id = ?1 AND outcome IS NULL",
        )?;
        let rows = statement
            .query_map(params![turn_id], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

/// A turn's place in its chain (§7.4), as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnLineage {
    pub agent: String,
    pub depth: u32,
    pub chain_root: String,
    pub chain_length: u32,
    /// The post the turn answered.
    pub answers_post_id: Option<String>,
}

impl Store {
    pub fn lineage_of(&self, turn_id: &str) -> Result<Option<TurnLineage>, StoreError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn
            .query_row(
                "SELECT agent, depth, chain_root, chain_length, answers_post_id FROM turns WHERE id = ?1",
                params![turn_id],
                |row| {
                    Ok(TurnLineage {
                        agent: row.get(0)?,
                        depth: row.get(1)?,
                        chain_root: row.get(2)?,
                        chain_length: row.get(3)?,
                        answers_post_id: row.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// The person a turn's work descends from and what they asked (§3.7,
    /// §3.7a): the author and words of the post its chain's root turn
    /// answered, where that was a person.
    pub fn origin_request(&self, turn_id: &str) -> Result<Option<(String, String)>, StoreError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn
            .query_row(
                "SELECT p.author_name, p.message FROM turns t
                 JOIN turns r ON r.id = t.chain_root
                 JOIN posts p ON p.id = r.answers_post_id
                 WHERE t.id = ?1 AND p.author_kind = 'person'",
                params![turn_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?)
    }

    /// Whether `agent` has started a turn in the channel at or after `since`:
    /// a colleague that has run since read what it was sent (§7.3).
    pub fn started_since(
        &self,
        agent: &str,
        channel_id: &str,
        since: Millis,
    ) -> Result<bool, StoreError> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM turns WHERE agent = ?1 AND channel_id = ?2 AND started_at >= ?3)",
            params![agent, channel_id, since],
            |row| row.get(0),
        )?)
    }

    /// How many turns carry a chain root (§7.4): admission counts by root.
    pub fn chain_count(&self, root: &str) -> Result<u32, StoreError> {
        let count: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM turns WHERE chain_root = ?1",
            params![root],
            |row| row.get(0),
        )?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }
}
