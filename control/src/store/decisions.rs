//! Decisions on approvals (§3.7, §6.2): a row per prompt, no timeout, and a
//! conditional update so two concurrent clicks record exactly one decision.

use rusqlite::{OptionalExtension, params};

use super::{Millis, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDecision {
    pub id: String,
    pub turn_id: String,
    pub call_id: String,
    pub agent: String,
    pub channel_id: String,
    pub kind: String,
    /// The gated tool; none for a budget extension (§5.3).
    pub tool: Option<String>,
    /// Exactly what the person was shown.
    pub payload: String,
    /// The short answers a question offers as buttons (§3.7a).
    pub choices: Vec<String>,
    pub requested_at: Millis,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRecord {
    pub id: String,
    pub turn_id: String,
    pub agent: String,
    pub channel_id: String,
    /// `approval`, `extension` or `ask`.
    pub kind: String,
    pub tool: Option<String>,
    /// Exactly what the person was shown.
    pub payload: String,
    pub prompt_post_id: Option<String>,
    pub outcome: Option<String>,
    pub decided_by: Option<String>,
    /// A denial's reason, or a question's answer.
    pub reason: Option<String>,
    pub choices: Vec<String>,
}

impl DecisionRecord {
    /// Whether this decision is a person's approval of `tool` for this very
    /// turn and agent (§3.7, §6.2): an approval never carries over to another
    /// turn's call, another agent's, or another tool.
    pub fn approves(&self, turn_id: &str, agent: &str, tool: &str) -> bool {
        self.outcome.as_deref() == Some("approved")
            && self.kind == "approval"
            && self.tool.as_deref() == Some(tool)
            && self.turn_id == turn_id
            && self.agent == agent
    }

    /// Whether it asks a question (§3.7a) rather than for consent.
    pub fn is_question(&self) -> bool {
        self.kind == "ask"
    }
}

impl Store {
    pub fn open_decision(&self, decision: &NewDecision) -> Result<(), StoreError> {
        let choices = (!decision.choices.is_empty())
            .then(|| serde_json::Value::from(decision.choices.clone()).to_string());
        self.conn.execute(
            "INSERT INTO decisions (id, turn_id, call_id, agent, channel_id, kind, tool, payload, requested_at, choices)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                decision.id,
                decision.turn_id,
                decision.call_id,
                decision.agent,
                decision.channel_id,
                decision.kind,
                decision.tool,
                decision.payload,
                decision.requested_at,
                choices,
            ],
        )?;
        Ok(())
    }

    pub fn set_prompt_post(&self, id: &str, post_id: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE decisions SET prompt_post_id = ?2 WHERE id = ?1",
            params![id, post_id],
        )?;
        Ok(())
    }

    /// Records a decision if none is recorded yet; false when another got
    /// there first (the second clicker is told so).
    pub fn decide(
        &self,
        id: &str,
        outcome: &str,
        by: &str,
        reason: Option<&str>,
        at: Millis,
    ) -> Result<bool, StoreError> {
        Ok(self.conn.execute(
            "UPDATE decisions SET outcome = ?2, decided_by = ?3, reason = ?4, decided_at = ?5
             WHERE id = ?1 AND outcome IS NULL",
            params![id, outcome, by, reason, at],
        )? == 1)
    }

    /// Decisions still waiting on a person, oldest first, for one agent or
    /// all (`/collegium approvals`, §8.4): (record, when requested).
    pub fn open_decisions(
        &self,
        agent: Option<&str>,
    ) -> Result<Vec<(DecisionRecord, Millis)>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {DECISION_COLUMNS}, requested_at FROM decisions
             WHERE outcome IS NULL AND (?1 IS NULL OR agent = ?1)
             ORDER BY requested_at"
        ))?;
        let rows = statement
            .query_map(params![agent], |row| {
                Ok((read_decision(row)?, row.get(12)?))
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The approval a prompt post asks for.
    pub fn decision_for_prompt(&self, post_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM decisions WHERE prompt_post_id = ?1",
                params![post_id],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// When a decision was asked for, and when it was taken (none while it
    /// waits): what an audit review says of an approval beside its record.
    pub fn decision_times(&self, id: &str) -> Result<Option<(Millis, Option<Millis>)>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT requested_at, decided_at FROM decisions WHERE id = ?1",
                params![id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?)
    }

    pub fn decision(&self, id: &str) -> Result<Option<DecisionRecord>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {DECISION_COLUMNS} FROM decisions WHERE id = ?1"),
                params![id],
                read_decision,
            )
            .optional()?)
    }
}

const DECISION_COLUMNS: &str = "id, turn_id, agent, channel_id, tool, payload, prompt_post_id, \
     outcome, decided_by, reason, kind, choices";

fn read_decision(row: &rusqlite::Row<'_>) -> rusqlite::Result<DecisionRecord> {
    Ok(DecisionRecord {
        id: row.get(0)?,
        turn_id: row.get(1)?,
        agent: row.get(2)?,
        channel_id: row.get(3)?,
        tool: row.get(4)?,
        payload: row.get(5)?,
        prompt_post_id: row.get(6)?,
        outcome: row.get(7)?,
        decided_by: row.get(8)?,
        reason: row.get(9)?,
        kind: row.get(10)?,
        choices: row
            .get::<_, Option<String>>(11)?
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewTurn, TurnCause};

    #[test]
    fn s3_7_two_decisions_on_one_prompt_record_exactly_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.db")).expect("open");
        store
            .open_turn(&NewTurn {
                id: "t1".into(),
                agent: "mira".into(),
                channel_id: "c1".into(),
                boot_id: "b".into(),
                started_at: 1,
                cause: TurnCause::Post,
                answers_post_id: None,
                depth: 0,
                chain_root: "t1".into(),
                chain_length: 1,
                model: "m".into(),
            })
            .expect("turn");
        let decision = NewDecision {
            id: "d1".into(),
            turn_id: "t1".into(),
            call_id: "c".into(),
            agent: "mira".into(),
            channel_id: "c1".into(),
            kind: "approval".into(),
            tool: Some("fixture::write".into()),
            payload: "{}".into(),
            choices: Vec::new(),
            requested_at: 2,
        };
        store.open_decision(&decision).expect("open");
        let second = NewDecision {
            id: "d2".into(),
            ..decision.clone()
        };
        assert!(
            store.open_decision(&second).is_err(),
            "one live prompt per agent per channel"
        );
        assert!(
            store
                .decide("d1", "approved", "ana", None, 3)
                .expect("decide")
        );
        assert!(!store.decide("d1", "denied", "bo", None, 4).expect("decide"));
        let recorded = store.decision("d1").expect("read").expect("row");
        assert_eq!(recorded.outcome.as_deref(), Some("approved"));
        assert_eq!(recorded.decided_by.as_deref(), Some("ana"));

        // §3.7, §6.2: the approval is for this turn's call of this tool, by
        // this agent, and for nothing else.
        assert!(recorded.approves("t1", "mira", "fixture::write"));
        assert!(
            !recorded.approves("t2", "mira", "fixture::write"),
            "another turn"
        );
        assert!(
            !recorded.approves("t1", "theo", "fixture::write"),
            "another agent"
        );
        assert!(
            !recorded.approves("t1", "mira", "fixture::delete"),
            "another tool"
        );
        let extension = DecisionRecord {
            kind: "extension".into(),
            ..recorded
        };
        assert!(
            !extension.approves("t1", "mira", "fixture::write"),
            "a budget extension approves no tool"
        );
    }
}
