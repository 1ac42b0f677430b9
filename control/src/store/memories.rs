//! Memory entries (§3.6): one row per entry, with the revision a write
//! compares and swaps on, and what each turn has seen of each entry. The
//! rules — caps, references, what a refusal says — are the memory module's;
//! here is only what the rows hold and the statements that keep them
//! consistent when two turns of one agent act at once.

use rusqlite::{OptionalExtension, Row, TransactionBehavior, params};

use super::{Millis, Store, StoreError};

/// How many characters of the key a reference shows, after its `m`.
pub const REFERENCE_CHARS: usize = 6;

/// The reference an entry is shown by, fixed for its life (§3.6).
pub fn memory_reference(key: &str) -> String {
    format!("m{}", key.get(..REFERENCE_CHARS).unwrap_or(key))
}

/// One entry as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEntry {
    pub id: i64,
    pub agent: String,
    /// Sixteen hex characters; the reference is a prefix of it.
    pub key: String,
    pub description: String,
    pub body: String,
    pub written_at: Millis,
    pub written_channel_id: String,
    pub written_post_id: Option<String>,
    /// 1 when written; one more for every revision.
    pub revision: i64,
    pub last_revised_at: Option<Millis>,
    pub provenance_turn_id: String,
    pub provenance_channel_id: String,
    pub provenance_post_id: Option<String>,
    pub last_read_at: Millis,
}

impl MemoryEntry {
    pub fn reference(&self) -> String {
        memory_reference(&self.key)
    }

    /// How often it has been revised.
    pub fn revisions(&self) -> i64 {
        self.revision - 1
    }
}

/// An entry as the listing shows it: no body, no date (§3.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedMemory {
    pub key: String,
    pub description: String,
}

impl ListedMemory {
    pub fn reference(&self) -> String {
        memory_reference(&self.key)
    }
}

/// Where a write or a revision was made: the provenance it leaves (§3.6).
/// The originating post is the one the turn answers, read from its record.
#[derive(Debug, Clone, Copy)]
pub struct MemoryOrigin<'a> {
    pub turn_id: &'a str,
    pub channel_id: &'a str,
}

/// A write that landed, and what it evicted to make room (§3.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryWritten {
    pub entry: MemoryEntry,
    pub evicted: Vec<MemoryEntry>,
}

/// What a revision sets; `None` keeps what the entry holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryChange {
    pub description: Option<String>,
    pub body: Option<String>,
    /// The turn sees the new revision: it revised from the revision it had
    /// seen, or sent the whole body (§3.6).
    pub seen: bool,
    /// The whole body was sent, which counts as a read for eviction.
    pub whole: bool,
}

const COLUMNS: &str = "id, agent, key, description, body, written_at, written_channel_id,
    written_post_id, revision, last_revised_at, provenance_turn_id, provenance_channel_id,
    provenance_post_id, last_read_at";

fn read_entry(row: &Row<'_>) -> rusqlite::Result<MemoryEntry> {
    Ok(MemoryEntry {
        id: row.get(0)?,
        agent: row.get(1)?,
        key: row.get(2)?,
        description: row.get(3)?,
        body: row.get(4)?,
        written_at: row.get(5)?,
        written_channel_id: row.get(6)?,
        written_post_id: row.get(7)?,
        revision: row.get(8)?,
        last_revised_at: row.get(9)?,
        provenance_turn_id: row.get(10)?,
        provenance_channel_id: row.get(11)?,
        provenance_post_id: row.get(12)?,
        last_read_at: row.get(13)?,
    })
}

impl Store {
    /// The agent's entries in listing order: the order they were written,
    /// which a revision keeps (§3.6).
    pub fn memories_of(&self, agent: &str) -> Result<Vec<MemoryEntry>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM memories WHERE agent = ? ORDER BY id"
        ))?;
        let rows = stmt.query_map([agent], read_entry)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The agent's listing, in the order written: only what it shows, so
    /// every turn's assembly reads no body.
    pub fn memory_listing(&self, agent: &str) -> Result<Vec<ListedMemory>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, description FROM memories WHERE agent = ? ORDER BY id")?;
        let rows = stmt.query_map([agent], |row| {
            Ok(ListedMemory {
                key: row.get(0)?,
                description: row.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many entries the agent holds.
    pub fn memory_count(&self, agent: &str) -> Result<u64, StoreError> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM memories WHERE agent = ?",
            [agent],
            |row| row.get(0),
        )?)
    }

    /// The agent's entries whose key starts with `prefix` (lowercase hex).
    pub fn memories_with_prefix(
        &self,
        agent: &str,
        prefix: &str,
    ) -> Result<Vec<MemoryEntry>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM memories WHERE agent = ? AND substr(key, 1, length(?2)) = ?2 ORDER BY id"
        ))?;
        let rows = stmt.query_map(params![agent, prefix], read_entry)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One of the agent's entries; another agent's is none (§3.6).
    pub fn memory(&self, agent: &str, id: i64) -> Result<Option<MemoryEntry>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM memories WHERE agent = ? AND id = ?"),
                params![agent, id],
                read_entry,
            )
            .optional()?)
    }

    /// Writes a new entry, first evicting the entries read longest ago
    /// while the agent holds `max_entries` or more (§3.6). `keys` proposes
    /// keys until one's reference is not already the agent's. One
    /// immediate transaction, so two turns at the cap cannot both miss the
    /// other's entry in their count.
    #[allow(clippy::too_many_arguments)]
    pub fn write_memory(
        &mut self,
        agent: &str,
        description: &str,
        body: &str,
        origin: MemoryOrigin<'_>,
        now: Millis,
        max_entries: u64,
        mut keys: impl FnMut() -> String,
    ) -> Result<MemoryWritten, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut evicted = Vec::new();
        loop {
            let count: u64 = tx.query_row(
                "SELECT COUNT(*) FROM memories WHERE agent = ?",
                [agent],
                |row| row.get(0),
            )?;
            if count < max_entries.max(1) {
                break;
            }
            let oldest = tx.query_row(
                &format!(
                    "SELECT {COLUMNS} FROM memories WHERE agent = ? ORDER BY last_read_at, id LIMIT 1"
                ),
                [agent],
                read_entry,
            )?;
            tx.execute("DELETE FROM memories WHERE id = ?", [oldest.id])?;
            evicted.push(oldest);
        }
        let key = loop {
            let key = keys();
            let reference_taken: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM memories
                   WHERE key = ?2 OR (agent = ?1 AND substr(key, 1, ?3) = substr(?2, 1, ?3)))",
                params![agent, key, REFERENCE_CHARS as i64],
                |row| row.get(0),
            )?;
            if !reference_taken {
                break key;
            }
        };
        tx.execute(
            &format!(
                "INSERT INTO memories (agent, key, description, body, written_at, written_channel_id,
                    written_post_id, provenance_turn_id, provenance_channel_id, provenance_post_id,
                    last_read_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, {POST_OF_TURN_7}, ?8, ?6, {POST_OF_TURN_7}, ?5)",
                POST_OF_TURN_7 = "(SELECT answers_post_id FROM turns WHERE id = ?7)"
            ),
            params![
                agent,
                key,
                description,
                body,
                now,
                origin.channel_id,
                origin.turn_id,
                origin.turn_id
            ],
        )?;
        let id = tx.last_insert_rowid();
        record_seen(&tx, origin.turn_id, id, 1)?;
        let entry = tx.query_row(
            &format!("SELECT {COLUMNS} FROM memories WHERE id = ?"),
            [id],
            read_entry,
        )?;
        tx.commit()?;
        Ok(MemoryWritten { entry, evicted })
    }

    /// Applies `change` if the entry is still at `expected` — the compare
    /// and swap that keeps two turns from losing each other's edits (§3.6).
    /// `None` when it has moved on or is gone: the caller reads it again.
    pub fn revise_memory(
        &mut self,
        agent: &str,
        id: i64,
        expected: i64,
        change: &MemoryChange,
        origin: MemoryOrigin<'_>,
        now: Millis,
    ) -> Result<Option<MemoryEntry>, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let changed = tx.execute(
            &format!(
                "UPDATE memories SET
                    description = COALESCE(?4, description),
                    body = COALESCE(?5, body),
                    revision = revision + 1,
                    last_revised_at = ?6,
                    provenance_turn_id = ?7,
                    provenance_channel_id = ?8,
                    provenance_post_id = {post},
                    last_read_at = CASE WHEN ?9 THEN ?6 ELSE last_read_at END
                 WHERE agent = ?1 AND id = ?2 AND revision = ?3",
                post = "(SELECT answers_post_id FROM turns WHERE id = ?7)"
            ),
            params![
                agent,
                id,
                expected,
                change.description,
                change.body,
                now,
                origin.turn_id,
                origin.channel_id,
                change.whole
            ],
        )?;
        if changed == 0 {
            return Ok(None);
        }
        if change.seen {
            record_seen(&tx, origin.turn_id, id, expected + 1)?;
        }
        let entry = tx.query_row(
            &format!("SELECT {COLUMNS} FROM memories WHERE id = ?"),
            [id],
            read_entry,
        )?;
        tx.commit()?;
        Ok(Some(entry))
    }

    /// Deletes the entry if it is still at `expected` (§3.6); false when it
    /// has moved on or is gone.
    pub fn delete_memory(&self, agent: &str, id: i64, expected: i64) -> Result<bool, StoreError> {
        Ok(self.conn.execute(
            "DELETE FROM memories WHERE agent = ? AND id = ? AND revision = ?",
            params![agent, id, expected],
        )? == 1)
    }

    /// A body was read: it is now the entry read most lately, and the turn
    /// has seen this revision (§3.6).
    pub fn mark_memory_read(
        &mut self,
        turn_id: &str,
        id: i64,
        revision: i64,
        now: Millis,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "UPDATE memories SET last_read_at = ? WHERE id = ?",
            params![now, id],
        )?;
        record_seen(&tx, turn_id, id, revision)?;
        tx.commit()?;
        Ok(())
    }

    /// The revision of the entry this turn has seen, if any.
    pub fn memory_seen(&self, turn_id: &str, id: i64) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT revision FROM memory_seen WHERE turn_id = ? AND memory_id = ?",
                params![turn_id, id],
                |row| row.get(0),
            )
            .optional()?)
    }
}

/// Records what the turn has seen, and forgets what ended turns saw: what a
/// turn has seen ends with the turn (§3.6).
fn record_seen(
    conn: &rusqlite::Connection,
    turn_id: &str,
    id: i64,
    revision: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO memory_seen (turn_id, memory_id, revision) VALUES (?, ?, ?)
         ON CONFLICT (turn_id, memory_id) DO UPDATE SET revision = excluded.revision",
        params![turn_id, id, revision],
    )?;
    conn.execute(
        "DELETE FROM memory_seen WHERE turn_id != ?1 AND EXISTS
           (SELECT 1 FROM turns WHERE turns.id = memory_seen.turn_id AND turns.ended_at IS NOT NULL)",
        [turn_id],
    )?;
    Ok(())
}

#[cfg(test)]
#[path = "memories_tests.rs"]
mod tests;
