//! Anchors of the workers' audit logs (ARCHITECTURE §4): each call's line
//! position and hash, so a log can be checked against something outside it.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::{Millis, Store, StoreError, migrations};

/// A line of a worker's log, as the store recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditAnchor {
    pub seq: u64,
    pub hash: String,
}

impl Store {
    /// Records the line a call wrote, as the worker returned it.
    pub fn record_audit_anchor(
        &self,
        worker: &str,
        call_id: &str,
        anchor: &AuditAnchor,
        now: Millis,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO audit_anchors (worker, seq, hash, call_id, recorded_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![worker, anchor.seq, anchor.hash, call_id, now],
        )?;
        Ok(())
    }
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
            "SELECT seq, hash FROM audit_anchors WHERE worker = ?1 ORDER BY seq DESC LIMIT 1",
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
