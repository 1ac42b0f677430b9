//! The schema's migrations, embedded at build time from `migrations/` and
//! applied in order, each in its own transaction, under `PRAGMA user_version`.
//! A hand-written runner rather than a migration crate: the whole of it is the
//! loop below, and it lets the newer-store refusal name both versions (§7.3
//! spirit: refuse loudly rather than run against a schema it does not know).

use std::path::Path;

use rusqlite::Connection;

use super::StoreError;

pub struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

macro_rules! migration {
    ($version:literal, $name:literal) => {
        Migration {
            version: $version,
            name: $name,
            sql: include_str!(concat!("../../../migrations/", $name, ".sql")),
        }
    };
}

/// Every migration, in order. A test checks this list against the directory.
pub const MIGRATIONS: &[Migration] = &[
    migration!(1, "0001_posts_and_channels"),
    migration!(2, "0002_turns"),
    migration!(3, "0003_decisions_and_queue"),
    migration!(4, "0004_process_runs"),
    migration!(5, "0005_worker_calls"),
    migration!(6, "0006_question_choices"),
    migration!(7, "0007_crash_returns"),
    migration!(8, "0008_worker_call_disclosures"),
    migration!(9, "0009_triggers"),
    migration!(10, "0010_memory"),
    migration!(11, "0011_search"),
    migration!(12, "0012_units"),
    migration!(13, "0013_clear"),
    migration!(14, "0014_usage"),
    migration!(15, "0015_plugin_storage"),
    migration!(16, "0016_plugin_records_clustered"),
];

/// The schema version this build writes.
pub const LATEST_VERSION: u32 = MIGRATIONS.len() as u32;

pub fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Applies every migration above the store's version, refusing a store newer
/// than this build.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    migrate_to(conn, path, LATEST_VERSION)
}

/// Applies migrations up to `target` only: tests use it to build a store as
/// an earlier release left it.
pub fn migrate_to(conn: &mut Connection, path: &Path, target: u32) -> Result<(), StoreError> {
    let current = user_version(conn).map_err(|source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    if current > LATEST_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            store: current,
            binary: LATEST_VERSION,
        });
    }
    for migration in MIGRATIONS
        .iter()
        .filter(|m| m.version > current && m.version <= target)
    {
        let failed = |source| StoreError::Migration {
            version: migration.version,
            name: migration.name,
            source,
        };
        let tx = conn.transaction().map_err(failed)?;
        tx.execute_batch(migration.sql).map_err(failed)?;
        tx.pragma_update(None, "user_version", migration.version)
            .map_err(failed)?;
        tx.commit().map_err(failed)?;
    }
    Ok(())
}
