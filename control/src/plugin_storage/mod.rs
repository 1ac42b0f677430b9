//! Plugin storage, the daemon's side (spec §3.14, ARCHITECTURE §4): the
//! records a plugin keeps in the framework's own store, scoped to its
//! namespace, validated against the collections it declared on every write
//! and parsed on every read. A plugin owns no table, no migration and no
//! database client: it reaches its rows through the `Storage` service served
//! on a connection bound to its namespace, never named in a request.
//!
//! One job per file: `collections` compiles what a plugin declares,
//! `records` checks a write and stamps a read, `query` is the one query
//! grammar (a pure function), `service` is the tonic `Storage` service for
//! one connection, `serve` hands a connection to a child plugin or binds
//! one a unit-run plugin opened, `units` is the read-only unit lookup.

pub mod collections;
pub mod error;
pub mod query;
pub mod records;
pub mod serve;
pub mod service;
pub mod units;

pub use collections::{Collection, CollectionError, Collections, FieldType, ScalarKind};
pub use error::StorageError;
pub use records::{MAX_ID_CHARS, MAX_RECORD_BYTES, STAMPED_FIELDS};
pub use service::StorageService;
