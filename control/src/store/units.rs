//! Work units (§3.15): the records behind the unit posts. Every change is
//! posted first and recorded here after, pointing at its post; the rules of
//! who may change what live in `crate::units`, which reads these records.

use rusqlite::{OptionalExtension, Row, params};

use super::{Millis, Store, StoreError};

/// A unit's state (§3.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitState {
    Assigned,
    Blocked,
    Review,
    Done,
    Cancelled,
}

impl UnitState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Assigned => "assigned",
            Self::Blocked => "blocked",
            Self::Review => "review",
            Self::Done => "done",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Assigned,
            Self::Blocked,
            Self::Review,
            Self::Done,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    /// Done and cancelled are closed; nothing reopens a unit (§3.15).
    pub fn is_closed(self) -> bool {
        matches!(self, Self::Done | Self::Cancelled)
    }
}

/// What closed a unit (§3.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosedBy {
    Creator,
    Continuation,
    Person,
}

impl ClosedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Creator => "creator",
            Self::Continuation => "continuation",
            Self::Person => "person",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [Self::Creator, Self::Continuation, Self::Person]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// How a unit is named: `U-` and its number.
pub fn unit_label(id: i64) -> String {
    format!("U-{id}")
}

/// The number a label names; `12` and `U-12` both name U-12.
pub fn parse_unit_label(text: &str) -> Option<i64> {
    let text = text.trim();
    let digits = text
        .strip_prefix("U-")
        .or_else(|| text.strip_prefix("u-"))
        .unwrap_or(text);
    digits.parse::<i64>().ok().filter(|n| *n > 0)
}

/// One report, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitReport {
    pub id: i64,
    pub unit_id: i64,
    pub post_id: String,
    pub state: UnitState,
    pub body: String,
    pub by_framework: bool,
    pub turn_id: Option<String>,
    pub at: Millis,
}

/// A unit, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub id: i64,
    pub channel_id: String,
    pub creator: String,
    pub assignee: String,
    pub outcome: String,
    pub criteria: String,
    pub context: String,
    pub state: UnitState,
    pub assigned_at: Millis,
    pub changed_at: Millis,
    pub assignment_post_id: String,
    pub assigning_turn_id: String,
    pub follows: Option<i64>,
    pub followed_by: Option<i64>,
    pub linked_from_state: Option<String>,
    pub latest_report_id: Option<i64>,
    pub close_post_id: Option<String>,
    pub closed_at: Option<Millis>,
    pub closed_from_state: Option<UnitState>,
    pub closed_by: Option<ClosedBy>,
    pub closer: Option<String>,
    pub verdict: Option<String>,
}

impl Unit {
    pub fn label(&self) -> String {
        unit_label(self.id)
    }
}

/// A unit about to be recorded, its assignment already posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUnit {
    pub id: i64,
    pub channel_id: String,
    pub creator: String,
    pub assignee: String,
    pub outcome: String,
    pub criteria: String,
    pub context: String,
    pub assignment_post_id: String,
    pub assigning_turn_id: String,
    pub follows: Option<i64>,
    pub at: Millis,
}

/// A report about to be recorded, its post already published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReport {
    pub unit_id: i64,
    pub post_id: String,
    pub state: UnitState,
    pub body: String,
    pub by_framework: bool,
    pub turn_id: Option<String>,
    pub at: Millis,
}

/// A close about to be recorded, its post already published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewClose {
    pub unit_id: i64,
    pub post_id: String,
    pub state: UnitState,
    pub closed_by: ClosedBy,
    pub closer: String,
    pub verdict: String,
    pub at: Millis,
}

const UNIT_COLUMNS: &str = "id, channel_id, creator, assignee, outcome, criteria, context, state, \
     assigned_at, changed_at, assignment_post_id, assigning_turn_id, follows, followed_by, \
     linked_from_state, latest_report_id, close_post_id, closed_at, closed_from_state, closed_by, \
     closer, verdict";

fn state_of(text: String) -> rusqlite::Result<UnitState> {
    UnitState::parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("no unit state `{text}`").into(),
        )
    })
}

fn read_unit(row: &Row<'_>) -> rusqlite::Result<Unit> {
    let closed_from: Option<String> = row.get(18)?;
    let closed_by: Option<String> = row.get(19)?;
    Ok(Unit {
        id: row.get(0)?,
        channel_id: row.get(1)?,
        creator: row.get(2)?,
        assignee: row.get(3)?,
        outcome: row.get(4)?,
        criteria: row.get(5)?,
        context: row.get(6)?,
        state: state_of(row.get(7)?)?,
        assigned_at: row.get(8)?,
        changed_at: row.get(9)?,
        assignment_post_id: row.get(10)?,
        assigning_turn_id: row.get(11)?,
        follows: row.get(12)?,
        followed_by: row.get(13)?,
        linked_from_state: row.get(14)?,
        latest_report_id: row.get(15)?,
        close_post_id: row.get(16)?,
        closed_at: row.get(17)?,
        closed_from_state: closed_from.map(state_of).transpose()?,
        closed_by: closed_by.as_deref().and_then(ClosedBy::parse),
        closer: row.get(20)?,
        verdict: row.get(21)?,
    })
}

fn read_report(row: &Row<'_>) -> rusqlite::Result<UnitReport> {
    Ok(UnitReport {
        id: row.get(0)?,
        unit_id: row.get(1)?,
        post_id: row.get(2)?,
        state: state_of(row.get(3)?)?,
        body: row.get(4)?,
        by_framework: row.get::<_, i64>(5)? == 1,
        turn_id: row.get(6)?,
        at: row.get(7)?,
    })
}

impl Store {
    /// Reserves the next unit's number before its assignment is posted, so
    /// the post can name it (§3.15). A number whose post never got its
    /// record is a gap, never a unit.
    pub fn reserve_unit_number(
        &self,
        channel_id: &str,
        agent: &str,
        now: Millis,
    ) -> Result<i64, StoreError> {
        self.conn.execute(
            "INSERT INTO unit_numbers (channel_id, agent, reserved_at) VALUES (?1, ?2, ?3)",
            params![channel_id, agent, now],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Records an assignment already posted.
    pub fn record_assignment(&mut self, unit: &NewUnit) -> Result<(), StoreError> {
        insert_unit(&self.conn, unit)?;
        Ok(())
    }

    /// Records a continuation already posted (§3.15): the next unit, and
    /// the unit it follows either closed as done by it (from review or
    /// blocked) or, already done, linked without closing again. One
    /// transaction, as the post was one post.
    pub fn record_continuation(
        &mut self,
        unit: &NewUnit,
        close: Option<&NewClose>,
        link_note: &str,
    ) -> Result<(), StoreError> {
        let Some(follows) = unit.follows else {
            return self.record_assignment(unit);
        };
        let tx = self.conn.transaction()?;
        insert_unit(&tx, unit)?;
        // Only a continuation that closes records where the unit stood; a
        // link to a unit already done changes neither state nor close.
        let linked_from = close.map(|_| ());
        if let Some(close) = close {
            close_unit(&tx, close)?;
        }
        tx.execute(
            "UPDATE units SET followed_by = ?2, linked_at = ?3,
                 linked_from_state = CASE WHEN ?5 THEN closed_from_state ELSE NULL END,
                 verdict = CASE WHEN ?5 THEN verdict
                                WHEN verdict IS NULL OR verdict = '' THEN ?4
                                ELSE verdict || ' ' || ?4 END
             WHERE id = ?1 AND followed_by IS NULL",
            params![follows, unit.id, unit.at, link_note, linked_from.is_some()],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Records a report already posted; the unit moves to its state.
    pub fn record_report(&mut self, report: &NewReport) -> Result<i64, StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO unit_reports (unit_id, post_id, state, body, by_framework, turn_id, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                report.unit_id,
                report.post_id,
                report.state.as_str(),
                report.body,
                i64::from(report.by_framework),
                report.turn_id,
                report.at
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "UPDATE units SET state = ?2, changed_at = ?3, latest_report_id = ?4 WHERE id = ?1",
            params![report.unit_id, report.state.as_str(), report.at, id],
        )?;
        tx.commit()?;
        Ok(id)
    }

    /// Records a close already posted, with the state it closed from.
    pub fn record_close(&self, close: &NewClose) -> Result<(), StoreError> {
        close_unit(&self.conn, close)
    }

    pub fn unit(&self, id: i64) -> Result<Option<Unit>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {UNIT_COLUMNS} FROM units WHERE id = ?1"),
                params![id],
                read_unit,
            )
            .optional()?)
    }

    /// The units `agent` created or was assigned in the channel and that
    /// are not closed, oldest first (§3.15, Open work).
    pub fn open_units_of(&self, agent: &str, channel_id: &str) -> Result<Vec<Unit>, StoreError> {
        let mut statement = self.conn.prepare_cached(&format!(
            "SELECT {UNIT_COLUMNS} FROM units
             WHERE channel_id = ?2 AND (creator = ?1 OR assignee = ?1)
               AND state IN ('assigned', 'blocked', 'review')
             ORDER BY id"
        ))?;
        let units = statement
            .query_map(params![agent, channel_id], read_unit)?
            .collect::<Result<_, _>>()?;
        Ok(units)
    }

    /// The units a turn assigned: what it handed on (§3.15).
    pub fn units_assigned_by(&self, turn_id: &str) -> Result<Vec<Unit>, StoreError> {
        let mut statement = self.conn.prepare_cached(&format!(
            "SELECT {UNIT_COLUMNS} FROM units WHERE assigning_turn_id = ?1 ORDER BY id"
        ))?;
        let units = statement
            .query_map(params![turn_id], read_unit)?
            .collect::<Result<_, _>>()?;
        Ok(units)
    }

    /// The units a turn reported on: whose creators its reports addressed
    /// (§3.15, the owes-a-reply rule).
    pub fn units_reported_by(&self, turn_id: &str) -> Result<Vec<Unit>, StoreError> {
        let columns: Vec<String> = UNIT_COLUMNS
            .split(", ")
            .map(|c| format!("u.{}", c.trim()))
            .collect();
        let mut statement = self.conn.prepare_cached(&format!(
            "SELECT DISTINCT {} FROM units u JOIN unit_reports r ON r.unit_id = u.id
             WHERE r.turn_id = ?1 ORDER BY u.id",
            columns.join(", ")
        ))?;
        let units = statement
            .query_map(params![turn_id], read_unit)?
            .collect::<Result<_, _>>()?;
        Ok(units)
    }

    pub fn unit_report(&self, id: i64) -> Result<Option<UnitReport>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, unit_id, post_id, state, body, by_framework, turn_id, at
                 FROM unit_reports WHERE id = ?1",
                params![id],
                read_report,
            )
            .optional()?)
    }

    /// Marks a report read by a turn: its window held it, or tasks::read
    /// showed it (§3.15).
    pub fn mark_report_read(&self, turn_id: &str, report_id: i64) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT OR IGNORE INTO unit_reads (turn_id, report_id) VALUES (?1, ?2)",
            params![turn_id, report_id],
        )?;
        Ok(())
    }

    /// Marks read, for a turn, every report whose post is among `post_ids`
    /// (the posts its window holds).
    pub fn mark_reports_in_window(
        &mut self,
        turn_id: &str,
        post_ids: &[String],
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut statement = tx.prepare_cached(
                "INSERT OR IGNORE INTO unit_reads (turn_id, report_id)
                 SELECT ?1, id FROM unit_reports WHERE post_id = ?2",
            )?;
            for post_id in post_ids {
                statement.execute(params![turn_id, post_id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    pub fn has_read_report(&self, turn_id: &str, report_id: i64) -> Result<bool, StoreError> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM unit_reads WHERE turn_id = ?1 AND report_id = ?2)",
            params![turn_id, report_id],
            |row| row.get(0),
        )?)
    }

    /// The turn of `agent` running in the channel in this boot, where one
    /// is: (id, started at). A turn parked on a person is still running; an
    /// earlier boot's turn that never ended was abandoned (§7.3).
    pub fn running_turn(
        &self,
        agent: &str,
        channel_id: &str,
        boot_id: &str,
    ) -> Result<Option<(String, Millis)>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT id, started_at FROM turns
                 WHERE agent = ?1 AND channel_id = ?2 AND ended_at IS NULL AND boot_id = ?3
                 ORDER BY started_at DESC LIMIT 1",
            )?
            .query_row(params![agent, channel_id, boot_id], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()?)
    }

    /// When the latest ended turn of `agent` in the channel ended.
    pub fn latest_turn_end(
        &self,
        agent: &str,
        channel_id: &str,
    ) -> Result<Option<Millis>, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT MAX(ended_at) FROM turns WHERE agent = ?1 AND channel_id = ?2")?
            .query_row(params![agent, channel_id], |row| row.get(0))?)
    }

    /// When the oldest decision a turn waits on was requested, where it
    /// waits on one (§3.7, §3.7a).
    pub fn parked_since(&self, turn_id: &str) -> Result<Option<Millis>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT MIN(requested_at) FROM decisions WHERE turn_id = ?1 AND outcome IS NULL",
            )?
            .query_row(params![turn_id], |row| row.get(0))?)
    }

    /// Unit posts in the channel that mention or were written by `agent`,
    /// whose writing turn has ended, that no record points at and that no
    /// report has named yet: a crash fell between the post and its record
    /// (§3.15). (post id, created at, the label it carried).
    pub fn unrecorded_unit_posts(
        &self,
        channel_id: &str,
        agent: &str,
    ) -> Result<Vec<(String, Millis, Option<String>)>, StoreError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT p.id, p.created_at, json_extract(p.props, '$.collegium_unit') FROM posts p
             WHERE p.channel_id = ?1 AND p.role = 'unit_post' AND p.deleted_at IS NULL
               AND (p.author_name = ?2 OR instr(p.message, '@' || ?2) > 0)
               AND (p.turn_id IS NULL OR EXISTS (SELECT 1 FROM turns t
                    WHERE t.id = p.turn_id AND t.ended_at IS NOT NULL))
               AND NOT EXISTS (SELECT 1 FROM units u WHERE u.assignment_post_id = p.id
                    OR u.close_post_id = p.id)
               AND NOT EXISTS (SELECT 1 FROM unit_reports r WHERE r.post_id = p.id)
               AND NOT EXISTS (SELECT 1 FROM unit_orphans_named n WHERE n.post_id = p.id)
             ORDER BY p.created_at",
        )?;
        let rows = statement
            .query_map(params![channel_id, agent], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Notes that a report named an unrecorded unit post, so the next one
    /// does not name it again.
    pub fn note_orphan_named(&self, post_id: &str, now: Millis) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT OR IGNORE INTO unit_orphans_named (post_id, named_at) VALUES (?1, ?2)",
            params![post_id, now],
        )?;
        Ok(())
    }
}

fn insert_unit(conn: &rusqlite::Connection, unit: &NewUnit) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO units (id, channel_id, creator, assignee, outcome, criteria, context, state,
             assigned_at, changed_at, assignment_post_id, assigning_turn_id, follows)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'assigned', ?8, ?8, ?9, ?10, ?11)",
        params![
            unit.id,
            unit.channel_id,
            unit.creator,
            unit.assignee,
            unit.outcome,
            unit.criteria,
            unit.context,
            unit.at,
            unit.assignment_post_id,
            unit.assigning_turn_id,
            unit.follows
        ],
    )?;
    Ok(())
}

fn close_unit(conn: &rusqlite::Connection, close: &NewClose) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE units SET closed_from_state = state, state = ?2, changed_at = ?3,
             close_post_id = ?4, closed_at = ?3, closed_by = ?5, closer = ?6, verdict = ?7
         WHERE id = ?1 AND state IN ('assigned', 'blocked', 'review')",
        params![
            close.unit_id,
            close.state.as_str(),
            close.at,
            close.post_id,
            close.closed_by.as_str(),
            close.closer,
            close.verdict
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests;
