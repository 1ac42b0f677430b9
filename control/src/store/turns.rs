//! Turn records (§8.2) and the rolling window the hourly ceiling counts (§7.4).

use rusqlite::params;

use super::kinds::TurnCause;
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
