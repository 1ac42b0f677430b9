//! Calls sent to workers (ARCHITECTURE §4): recorded before they are sent,
//! closed with their outcome and the audit line the worker wrote, which is
//! the anchor `collegium audit verify` checks a worker's log against.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::{Millis, Store, StoreError, migrations};

/// A line of a worker's log, as the store recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditAnchor {
    pub seq: u64,
    pub hash: String,
}

/// A call about to be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWorkerCall {
    pub call_id: String,
    pub turn_id: String,
    pub agent: String,
    pub worker: String,
    /// `namespace::tool`.
    pub tool: String,
    pub arguments_sha256: String,
    pub decision_id: Option<String>,
    pub retryable: bool,
    pub dispatched_at: Millis,
}

/// How a call sent to a worker ended, as the store records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallEnd {
    Success,
    Refusal,
    InvalidArguments,
    Unresolved,
    Failure,
    /// Never reached the tool: the worker could not be reached, or refused
    /// the grant.
    NotSent,
    /// May have acted, and did not answer; not retryable (§7.1).
    Ambiguous,
    /// Did not answer; retryable, so reported as a plain failure.
    Lost,
}

impl CallEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Refusal => "refusal",
            Self::InvalidArguments => "invalid_arguments",
            Self::Unresolved => "unresolved",
            Self::Failure => "failure",
            Self::NotSent => "not_sent",
            Self::Ambiguous => "ambiguous",
            Self::Lost => "lost",
        }
    }
}

/// What a call that made a durable record disclosed of it (§3.4, §3.6).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Disclosure {
    pub description: String,
    pub body: String,
    pub reference: String,
    #[serde(default)]
    pub superseded: Vec<String>,
}

/// A recorded call, as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCall {
    pub call: NewWorkerCall,
    pub ended_at: Option<Millis>,
    pub outcome: Option<String>,
    pub audit: Option<AuditAnchor>,
    /// What the call disclosed, where it made a durable record (§8.3).
    pub disclosure: Option<Disclosure>,
}

impl Store {
    /// Records a call before it is sent.
    pub fn record_dispatch(&self, call: &NewWorkerCall) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO worker_calls (call_id, turn_id, agent, worker, tool, arguments_sha256,
                                       decision_id, retryable, dispatched_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                call.call_id,
                call.turn_id,
                call.agent,
                call.worker,
                call.tool,
                call.arguments_sha256,
                call.decision_id,
                call.retryable,
                call.dispatched_at
            ],
        )?;
        Ok(())
    }

    /// Closes a call with its outcome and, where the worker returned them,
    /// the audit line it wrote and what it disclosed.
    pub fn record_call_end(
        &self,
        call_id: &str,
        end: CallEnd,
        audit: Option<&AuditAnchor>,
        disclosure: Option<&Disclosure>,
        now: Millis,
    ) -> Result<(), StoreError> {
        let disclosure = disclosure
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        self.conn.execute(
            "UPDATE worker_calls SET ended_at = ?2, outcome = ?3, audit_seq = ?4, audit_hash = ?5,
                                     disclosure = ?6
             WHERE call_id = ?1",
            params![
                call_id,
                now,
                end.as_str(),
                audit.map(|a| a.seq),
                audit.map(|a| a.hash.as_str()),
                disclosure
            ],
        )?;
        Ok(())
    }

    pub fn worker_call(&self, call_id: &str) -> Result<Option<WorkerCall>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {WORKER_CALL_COLUMNS} FROM worker_calls WHERE call_id = ?1"),
                params![call_id],
                read_worker_call,
            )
            .optional()?)
    }

    /// Every call a turn dispatched to a worker, in the order sent: what an
    /// administrator reviews of a turn (§8.2).
    pub fn worker_calls_of(&self, turn_id: &str) -> Result<Vec<WorkerCall>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {WORKER_CALL_COLUMNS} FROM worker_calls WHERE turn_id = ?1
             ORDER BY dispatched_at, rowid"
        ))?;
        let rows = statement
            .query_map(params![turn_id], read_worker_call)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

const WORKER_CALL_COLUMNS: &str = "call_id, turn_id, agent, worker, tool, arguments_sha256, \
     decision_id, retryable, dispatched_at, ended_at, outcome, audit_seq, audit_hash, disclosure";

fn read_worker_call(row: &rusqlite::Row<'_>) -> rusqlite::Result<WorkerCall> {
    let seq: Option<u64> = row.get(11)?;
    let hash: Option<String> = row.get(12)?;
    let disclosure = row
        .get::<_, Option<String>>(13)?
        .map(|text| {
            serde_json::from_str::<Disclosure>(&text).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(13, rusqlite::types::Type::Text, e.into())
            })
        })
        .transpose()?;
    Ok(WorkerCall {
        call: NewWorkerCall {
            call_id: row.get(0)?,
            turn_id: row.get(1)?,
            agent: row.get(2)?,
            worker: row.get(3)?,
            tool: row.get(4)?,
            arguments_sha256: row.get(5)?,
            decision_id: row.get(6)?,
            retryable: row.get(7)?,
            dispatched_at: row.get(8)?,
        },
        ended_at: row.get(9)?,
        outcome: row.get(10)?,
        audit: seq.zip(hash).map(|(seq, hash)| AuditAnchor { seq, hash }),
        disclosure,
    })
}

/// The last line the store recorded for `worker`, read from the store at
/// `path` without migrating or writing it: verification may run beside a
/// live daemon, and never changes what it checks.
pub fn latest_audit_anchor(path: &Path, worker: &str) -> Result<Option<AuditAnchor>, StoreError> {
    let open_error = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(open_error)?;
    let version = migrations::user_version(&conn).map_err(open_error)?;
    if version < 5 {
        return Err(StoreError::TooOld {
            path: path.to_path_buf(),
            store: version,
            needed: 5,
        });
    }
    Ok(conn
        .query_row(
            "SELECT audit_seq, audit_hash FROM worker_calls
             WHERE worker = ?1 AND audit_seq IS NOT NULL ORDER BY ended_at DESC, rowid DESC LIMIT 1",
            params![worker],
            |row| {
                Ok(AuditAnchor {
                    seq: row.get(0)?,
                    hash: row.get(1)?,
                })
            },
        )
        .optional()?)
}
