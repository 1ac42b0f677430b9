//! The store (§8.2, ARCHITECTURE §3): SQLite in WAL mode, migrated at open
//! under `PRAGMA user_version`. This module owns every SQL statement; the rest
//! of the daemon calls its typed functions, through [`StoreHandle`] from async
//! code so no query ever blocks a runtime thread.

mod clearing;
pub mod decisions;
mod episodes;
mod kinds;
mod members;
mod memories;
mod migrations;
mod plugin_records;
mod posts;
mod process;
mod queue;
mod search;
mod thread;
mod traces;
mod triggers;
mod turns;
mod units;
mod usage;
pub mod worker_calls;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

pub use clearing::{ClearDialog, Cut};
pub use kinds::{AuthorKind, ChannelKind, ObservedVia, PostRole, TraceKind, TurnCause};
pub use members::Member;
pub use memories::{
    ListedMemory, MemoryChange, MemoryEntry, MemoryOrigin, MemoryWritten, REFERENCE_CHARS,
    memory_reference,
};
pub use migrations::{LATEST_VERSION, MIGRATIONS, Migration};
pub use plugin_records::{FilterTest, FilterValue, RecordFilter, StoredRecord};
pub use posts::{ObservedChannel, ObservedPost, PostFile};
pub use process::ProcessRun;
pub use search::{PostQuery, ReachChannel};
pub use thread::StoreHandle;
pub use traces::{AnsweredPost, PostOfTurn, TurnHead};
pub use triggers::{
    AnnounceAgain, MailCursor, NewTrigger, ScheduleMark, Trigger, TriggerSource, TriggerStatus,
    WebhookRecorded, parse_trigger_label, trigger_label,
};
pub use turns::{AbandonedTurn, NewTurn, TurnEnd, TurnEvent, TurnLineage, TurnRecord};
pub use units::{
    ClosedBy, NewClose, NewReport, NewUnit, Unit, UnitReport, UnitState, parse_unit_label,
    unit_label,
};
pub use usage::{CutBy, CutRow, UsageReport, UsageRow};

/// Milliseconds since the Unix epoch, as Mattermost writes times.
pub type Millis = i64;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the store at {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the store at {path} is at schema version {store}, newer than this collegium (version {binary}); run the collegium that wrote it, or restore a backup"
    )]
    TooNew {
        path: PathBuf,
        store: u32,
        binary: u32,
    },
    #[error(
        "the store at {path} is at schema version {store}; this needs version {needed}: run the daemon once to migrate it"
    )]
    TooOld {
        path: PathBuf,
        store: u32,
        needed: u32,
    },
    #[error("migration {version} ({name}) failed: {source}")]
    Migration {
        version: u32,
        name: &'static str,
        source: rusqlite::Error,
    },
    #[error("cannot make the store at {path} private to its owner (mode 0600): {source}")]
    Private {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("store query failed: {0}")]
    Query(#[from] rusqlite::Error),
    #[error("the store thread has stopped")]
    Closed,
}

/// Creates the store file 0600 before SQLite opens it, and narrows an older
/// store and its journal files to 0600: the store holds every post the agents
/// saw and every payload a person approved, and no other user of the host may
/// read it (A2). SQLite creates the `-wal` and `-shm` files with the mode of
/// the database file, so a private database keeps its journal private too.
fn private_files(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let private = |source| StoreError::Private {
        path: path.to_path_buf(),
        source,
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(private)?;
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let file = PathBuf::from(name);
        let Ok(meta) = std::fs::metadata(&file) else {
            continue;
        };
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
                .map_err(private)?;
        }
    }
    Ok(())
}

/// The page cache each connection may grow to, in KiB (SQLite takes a
/// negative `cache_size` as KiB): 8 MiB. It holds one plugin's 10,000
/// clustered records, which SQLite's 2 MiB default reread from the OS on
/// every scan; 32 MiB did too, but under the load test the cache kept
/// filling as the store grew, 12–17% of the daemon's memory in the last
/// five of ten minutes, which a leak would look like (docs/load.md).
const CACHE_SIZE_KIB: i64 = -8_192;

/// An open, migrated store. One per process: it is the sole writer.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if absent) and migrates the store at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open_error = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        private_files(path)?;
        let conn = Connection::open(path).map_err(open_error)?;
        // WAL lets readers proceed beside the one writer; a busy timeout covers
        // a checkpoint in progress. Foreign keys are off by default in SQLite.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_error)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_error)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_error)?;
        // SQLite's default page cache is 2 MiB: a scan of a plugin's
        // collection of 10,000 records, or a conversation's search, touches
        // more, and rereads its pages from the OS on every query
        // (docs/benchmarks.md). Pages are taken only as they are read, so
        // the cache grows with the store up to its bound (docs/load.md).
        conn.pragma_update(None, "cache_size", CACHE_SIZE_KIB)
            .map_err(open_error)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(open_error)?;
        plugin_records::register_contains(&conn).map_err(open_error)?;
        let mut store = Self {
            conn,
            path: path.to_path_buf(),
        };
        migrations::migrate(&mut store.conn, path)?;
        Ok(store)
    }

    /// Opens the store at `path` read-only, never creating, migrating or
    /// writing it: an operator's review (`collegium audit show`) may run
    /// beside a live daemon and must leave what it reads as it was. `needed`
    /// is the schema version the caller's queries read; a store older than
    /// that is named, for the daemon to migrate it first.
    pub fn open_read_only(path: &Path, needed: u32) -> Result<Self, StoreError> {
        let open_error = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_error)?;
        // A checkpoint by the live daemon is waited out, not failed on.
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(open_error)?;
        let store = migrations::user_version(&conn).map_err(open_error)?;
        if store < needed {
            return Err(StoreError::TooOld {
                path: path.to_path_buf(),
                store,
                needed,
            });
        }
        Ok(Self {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version the store is at.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Ok(migrations::user_version(&self.conn)?)
    }

    /// Runs `f` inside one transaction: bulk loads (benchmarks, imports)
    /// pay one commit instead of one per row.
    pub fn bulk<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let began = self.conn.execute_batch("BEGIN").is_ok();
        let out = f(self);
        if began {
            let _ = self.conn.execute_batch("COMMIT");
        }
        out
    }

    /// Runs `f` as one transaction: everything it writes lands together,
    /// or, where it fails, nothing does. Readers in other processes (an
    /// operator's query, a test) never see half of it.
    pub fn atomically<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        match f(self) {
            Ok(out) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(out)
            }
            Err(error) => {
                // The failure is what the caller hears; a rollback that also
                // fails leaves SQLite to discard the transaction itself.
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(error)
            }
        }
    }

    /// The SQLite journal mode in force (`wal` once opened).
    pub fn journal_mode(&self) -> Result<String, StoreError> {
        Ok(self
            .conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn a2_the_store_and_its_journal_files_are_private_to_their_owner() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("collegium.db");
        let store = Store::open(&path).expect("open");
        // A write makes SQLite create the WAL and its index beside the file.
        store
            .conn
            .execute_batch("CREATE TABLE probe(x); INSERT INTO probe VALUES (1);")
            .expect("write");
        for suffix in ["", "-wal", "-shm"] {
            let file = dir.path().join(format!("collegium.db{suffix}"));
            assert_eq!(mode(&file), 0o600, "{}", file.display());
        }
    }

    #[test]
    fn a2_an_older_store_readable_by_others_is_narrowed_at_open() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("collegium.db");
        drop(Store::open(&path).expect("first open"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        drop(Store::open(&path).expect("second open"));
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn s5_2_a_failed_atomic_write_leaves_nothing_and_a_whole_one_lands() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("s.db")).expect("open");
        let failed: Result<(), StoreError> = store.atomically(|s| {
            s.enqueue("mira", "c", "p1", 1)?;
            s.conn.execute("INSERT INTO no_such_table VALUES (1)", [])?;
            Ok(())
        });
        assert!(failed.is_err());
        assert!(store.queued("mira", "c").expect("queue").is_empty());
        store
            .atomically(|s| s.enqueue("mira", "c", "p2", 2).map(|_| ()))
            .expect("whole");
        assert_eq!(store.queued("mira", "c").expect("queue"), ["p2"]);
    }
}
