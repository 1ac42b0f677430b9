//! The store (§8.2, ARCHITECTURE §3): SQLite in WAL mode, migrated at open
//! under `PRAGMA user_version`. This module owns every SQL statement; the rest
//! of the daemon calls its typed functions, through [`StoreHandle`] from async
//! code so no query ever blocks a runtime thread.

pub mod decisions;
mod kinds;
mod members;
mod migrations;
mod posts;
mod process;
mod queue;
mod thread;
mod turns;
pub mod worker_calls;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

pub use kinds::{AuthorKind, ChannelKind, ObservedVia, PostRole, TraceKind, TurnCause};
pub use members::Member;
pub use migrations::{LATEST_VERSION, MIGRATIONS, Migration};
pub use posts::{ObservedChannel, ObservedPost, PostFile};
pub use process::ProcessRun;
pub use thread::StoreHandle;
pub use turns::{AbandonedTurn, NewTurn, TurnEnd, TurnEvent, TurnLineage, TurnRecord};

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
    #[error("store query failed: {0}")]
    Query(#[from] rusqlite::Error),
    #[error("the store thread has stopped")]
    Closed,
}

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
        let conn = Connection::open(path).map_err(open_error)?;
        // WAL lets readers proceed beside the one writer; a busy timeout covers
        // a checkpoint in progress. Foreign keys are off by default in SQLite.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_error)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_error)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_error)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(open_error)?;
        let mut store = Self {
            conn,
            path: path.to_path_buf(),
        };
        migrations::migrate(&mut store.conn, path)?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version the store is at.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Ok(migrations::user_version(&self.conn)?)
    }

    /// The SQLite journal mode in force (`wal` once opened).
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

    pub fn journal_mode(&self) -> Result<String, StoreError> {
        Ok(self
            .conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))?)
    }
}
