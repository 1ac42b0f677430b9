//! What `/collegium trace` reads (§8.3): the turn's own record whole, and
//! which turns a post belongs to. Reasoning is never selected here (§3.12).

use rusqlite::{OptionalExtension, params};

use super::{Millis, Store, StoreError};

/// A turn's own record as §8.3 heads its trace with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnHead {
    pub id: String,
    pub agent: String,
    pub channel_id: String,
    pub started_at: Millis,
    pub ended_at: Option<Millis>,
    pub exit_kind: Option<String>,
    pub ended_by: Option<String>,
    pub cause: String,
    pub answers_post_id: Option<String>,
    pub drain_from_post_id: Option<String>,
    pub trigger_id: Option<String>,
    pub depth: i64,
    pub chain_root: String,
    pub chain_length: i64,
    pub action_count: i64,
    pub steered: bool,
    pub model: String,
    pub prompt_tokens: i64,
    pub cached_prompt_tokens: i64,
    pub cache_write_tokens: i64,
    pub completion_tokens: i64,
    pub reasoning_tokens: i64,
    pub cost_micro_usd: Option<i64>,
    pub context_assembled_at: Option<Millis>,
    pub context_reach_post_id: Option<String>,
    pub context_charged_tokens: Option<i64>,
    pub status_post_id: Option<String>,
}

/// How a post belongs to a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostOfTurn {
    /// The turn wrote it: a reply, a unit post, its status post or a prompt.
    Wrote,
    /// The turn answered it, and how it came to it (§5.2).
    Answered(String),
}

/// One post a turn answered, with what §3.15 needs to say whether the
/// turn owed a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnsweredPost {
    pub post_id: String,
    pub how: String,
    /// `person`, `agent`, `system_bot`, `other_bot`; none where the post is
    /// not in the store.
    pub author_kind: Option<String>,
    pub author_name: Option<String>,
    /// `post`, `reply`, `unit_post`, …; none where the post is not stored.
    pub role: Option<String>,
    /// The trigger it announced (§4.2), by id.
    pub announces_trigger: Option<i64>,
}

impl Store {
    /// The turn's row whole; none for no such turn.
    pub fn trace_head(&self, turn_id: &str) -> Result<Option<TurnHead>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, agent, channel_id, started_at, ended_at, exit_kind, ended_by, cause,
                        answers_post_id, drain_from_post_id, trigger_id, depth, chain_root,
                        chain_length, action_count, steered, model, prompt_tokens,
                        cached_prompt_tokens, cache_write_tokens, completion_tokens,
                        reasoning_tokens, cost_micro_usd, context_assembled_at,
                        context_reach_post_id, context_charged_tokens, status_post_id
                 FROM turns WHERE id = ?1",
                params![turn_id],
                |row| {
                    Ok(TurnHead {
                        id: row.get(0)?,
                        agent: row.get(1)?,
                        channel_id: row.get(2)?,
                        started_at: row.get(3)?,
                        ended_at: row.get(4)?,
                        exit_kind: row.get(5)?,
                        ended_by: row.get(6)?,
                        cause: row.get(7)?,
                        answers_post_id: row.get(8)?,
                        drain_from_post_id: row.get(9)?,
                        trigger_id: row.get(10)?,
                        depth: row.get(11)?,
                        chain_root: row.get(12)?,
                        chain_length: row.get(13)?,
                        action_count: row.get(14)?,
                        steered: row.get::<_, i64>(15)? != 0,
                        model: row.get(16)?,
                        prompt_tokens: row.get(17)?,
                        cached_prompt_tokens: row.get(18)?,
                        cache_write_tokens: row.get(19)?,
                        completion_tokens: row.get(20)?,
                        reasoning_tokens: row.get(21)?,
                        cost_micro_usd: row.get(22)?,
                        context_assembled_at: row.get(23)?,
                        context_reach_post_id: row.get(24)?,
                        context_charged_tokens: row.get(25)?,
                        status_post_id: row.get(26)?,
                    })
                },
            )
            .optional()?)
    }

    /// Every turn a post belongs to, oldest first: the turn that wrote it
    /// (as its author, its status post or a prompt it parked on) and every
    /// turn that answered it (§8.3).
    pub fn turns_of_post(&self, post_id: &str) -> Result<Vec<(String, PostOfTurn)>, StoreError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT t.id, x.how FROM turns t JOIN (
                 SELECT turn_id, NULL AS how FROM posts WHERE id = ?1 AND turn_id IS NOT NULL
                 UNION SELECT id, NULL FROM turns WHERE status_post_id = ?1
                 UNION SELECT turn_id, NULL FROM decisions WHERE prompt_post_id = ?1
                 UNION SELECT turn_id, how FROM turn_answers WHERE post_id = ?1
             ) x ON x.turn_id = t.id
             ORDER BY t.started_at, t.id, x.how IS NOT NULL",
        )?;
        let rows: Vec<(String, Option<String>)> = statement
            .query_map(params![post_id], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let mut turns: Vec<(String, PostOfTurn)> = Vec::new();
        for (turn, how) in rows {
            // A turn that wrote the post is named for that, once.
            if turns.iter().any(|(t, _)| *t == turn) {
                continue;
            }
            let relation = how.map_or(PostOfTurn::Wrote, PostOfTurn::Answered);
            turns.push((turn, relation));
        }
        Ok(turns)
    }

    /// The channel a turn ran in, for the reader's presence check.
    pub fn turn_channel(&self, turn_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT channel_id FROM turns WHERE id = ?1",
                params![turn_id],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// The posts a turn answers with their authors, in the order it took
    /// them (§5.2).
    pub fn answered_posts(&self, turn_id: &str) -> Result<Vec<AnsweredPost>, StoreError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT a.post_id, a.how, p.author_kind, p.author_name, p.role,
                    (SELECT g.id FROM triggers g WHERE g.announcement_post_id = a.post_id)
             FROM turn_answers a LEFT JOIN posts p ON p.id = a.post_id
             WHERE a.turn_id = ?1 ORDER BY a.rowid",
        )?;
        let rows = statement
            .query_map(params![turn_id], |row| {
                Ok(AnsweredPost {
                    post_id: row.get(0)?,
                    how: row.get(1)?,
                    author_kind: row.get(2)?,
                    author_name: row.get(3)?,
                    role: row.get(4)?,
                    announces_trigger: row.get(5)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The unit posts a turn wrote (§3.15): (post id, message).
    pub fn unit_posts_of_turn(&self, turn_id: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT id, message FROM posts WHERE turn_id = ?1 AND role = 'unit_post'
             ORDER BY created_at",
        )?;
        let rows = statement
            .query_map(params![turn_id], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewTurn, TurnCause};

    fn open(store: &Store, id: &str, started_at: Millis) {
        store
            .open_turn(&NewTurn {
                id: id.into(),
                agent: "mira".into(),
                channel_id: "c1".into(),
                boot_id: "b".into(),
                started_at,
                cause: TurnCause::Post,
                answers_post_id: Some("p".into()),
                depth: 0,
                chain_root: id.into(),
                chain_length: 1,
                model: "m".into(),
            })
            .expect("turn");
    }

    #[test]
    fn s8_3_a_post_names_the_turn_that_wrote_it_and_every_turn_that_answered_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.db")).expect("open");
        open(&store, "t2", 20);
        open(&store, "t1", 10);
        store.set_status_post("t1", "s").expect("status");
        store.record_answer("t1", "p", "start").expect("answer");
        store.record_answer("t2", "p", "queue").expect("answer");
        assert_eq!(
            store.turns_of_post("p").expect("turns"),
            [
                ("t1".to_string(), PostOfTurn::Answered("start".into())),
                ("t2".to_string(), PostOfTurn::Answered("queue".into())),
            ],
            "oldest first"
        );
        assert_eq!(
            store.turns_of_post("s").expect("turns"),
            [("t1".to_string(), PostOfTurn::Wrote)]
        );
        assert!(store.turns_of_post("nothing").expect("turns").is_empty());
        let head = store.trace_head("t1").expect("read").expect("row");
        assert_eq!(
            (head.status_post_id.as_deref(), head.started_at),
            (Some("s"), 10)
        );
        assert_eq!(
            store.turn_channel("t2").expect("read").as_deref(),
            Some("c1")
        );
        let answered = store.answered_posts("t2").expect("answered");
        assert_eq!(answered.len(), 1);
        assert_eq!(
            (answered[0].how.as_str(), answered[0].author_kind.as_deref()),
            ("queue", None),
            "a post not in the store is named without an author"
        );
    }
}
