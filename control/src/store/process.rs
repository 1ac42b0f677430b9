//! Runs of the daemon: boot, liveness and clean stop (§7.3).

use rusqlite::{OptionalExtension, params};

use super::{Millis, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRun {
    pub boot_id: String,
    pub version: String,
    pub started_at: Millis,
    pub last_alive_at: Millis,
    /// Set by a clean stop; absent after a crash.
    pub stopped_at: Option<Millis>,
}

impl Store {
    /// Records this process's start.
    pub fn begin_run(&self, boot_id: &str, version: &str, now: Millis) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO process_runs (boot_id, version, started_at, last_alive_at)
             VALUES (?1, ?2, ?3, ?3)",
            params![boot_id, version, now],
        )?;
        Ok(())
    }

    /// The periodic stamp a crash leaves as its last known alive time.
    pub fn stamp_liveness(&self, boot_id: &str, now: Millis) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE process_runs SET last_alive_at = ?2 WHERE boot_id = ?1",
            params![boot_id, now],
        )?;
        Ok(())
    }

    /// A clean shutdown's stop time.
    pub fn record_clean_stop(&self, boot_id: &str, now: Millis) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE process_runs SET stopped_at = ?2, last_alive_at = ?2 WHERE boot_id = ?1",
            params![boot_id, now],
        )?;
        Ok(())
    }

    /// The run before `boot_id`, from which the boot notice reads the downtime.
    pub fn previous_run(&self, boot_id: &str) -> Result<Option<ProcessRun>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT boot_id, version, started_at, last_alive_at, stopped_at FROM process_runs
                 WHERE boot_id != ?1 ORDER BY started_at DESC, rowid DESC LIMIT 1",
                params![boot_id],
                |row| {
                    Ok(ProcessRun {
                        boot_id: row.get(0)?,
                        version: row.get(1)?,
                        started_at: row.get(2)?,
                        last_alive_at: row.get(3)?,
                        stopped_at: row.get(4)?,
                    })
                },
            )
            .optional()?)
    }
}
