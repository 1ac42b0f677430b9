//! The store's migrations (§8.2, ARCHITECTURE §3): a fresh store, a store as
//! each earlier release left it brought forward with its data, and a store
//! newer than this build refused with both versions named.

use std::path::{Path, PathBuf};

use collegium_control::store::{
    AuthorKind, ChannelKind, LATEST_VERSION, MIGRATIONS, NewTurn, ObservedChannel, ObservedPost,
    ObservedVia, PostFile, PostRole, Store, StoreError, StoreHandle, TurnCause,
};
use rusqlite::Connection;

fn repo() -> PathBuf {
    Path::new(
        &*std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("..")
}

/// Builds a store as the release with schema `version` left it, holding one
/// row in every table that version had.
fn store_at_version(path: &Path, version: u32) {
    let conn = Connection::open(path).expect("open");
    for migration in MIGRATIONS.iter().filter(|m| m.version <= version) {
        conn.execute_batch(migration.sql).expect("apply");
        conn.pragma_update(None, "user_version", migration.version)
            .expect("version");
    }
    if version >= 1 {
        conn.execute_batch(
            "INSERT INTO channels (id, name, display_name, kind) VALUES ('c1', 'research', 'Research', 'private');
             INSERT INTO posts (id, channel_id, author_id, author_name, author_kind, created_at, message,
                                observed_at, observed_via)
                 VALUES ('p1', 'c1', 'u1', 'ada', 'person', 1000, '@mira please look', 1001, 'live');
             INSERT INTO post_files VALUES ('p1', 'f1', 'brief.pdf', 'application/pdf', 2048);
             INSERT INTO channel_members VALUES ('c1', 'u1', 'ada', 'person', 1001);",
        )
        .expect("v1 rows");
    }
    if version >= 2 {
        conn.execute_batch(
            "INSERT INTO turns (id, agent, channel_id, boot_id, started_at, cause, depth, chain_root,
                                chain_length, model)
                 VALUES ('t1', 'mira', 'c1', 'b0', 2000, 'post', 0, 't1', 1, 'demo');
             INSERT INTO turn_events (turn_id, seq, at, kind, content) VALUES ('t1', 0, 2001, 'completion', 'hi');",
        )
        .expect("v2 rows");
    }
    if version >= 3 {
        conn.execute_batch(
            "INSERT INTO queue (agent, channel_id, post_id, queued_at) VALUES ('mira', 'c1', 'p1', 3000);",
        )
        .expect("v3 rows");
    }
    if version >= 4 {
        conn.execute_batch(
            "INSERT INTO process_runs (boot_id, version, started_at, last_alive_at, stopped_at)
                 VALUES ('b0', '0.1.0', 500, 4000, 4000);",
        )
        .expect("v4 rows");
    }
    if version >= 15 {
        conn.execute_batch(
            "INSERT INTO plugin_records (namespace, collection, id, data, created_at, updated_at)
                 VALUES ('bookmark', 'bookmarks', 'r1', jsonb('{\"title\":\"Rust book\"}'), 5000, 5001);",
        )
        .expect("v15 rows");
    }
}

fn schema_of(path: &Path) -> Vec<String> {
    let conn = Connection::open(path).expect("open");
    let mut statement = conn
        .prepare("SELECT type || ' ' || name || ': ' || sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name")
        .expect("prepare");
    statement
        .query_map([], |row| row.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn migrations_embedded_are_the_files_in_the_directory_numbered_in_order() {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("migrations"))
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".sql"))
        .collect();
    files.sort();
    let embedded: Vec<String> = MIGRATIONS
        .iter()
        .map(|m| format!("{}.sql", m.name))
        .collect();
    assert_eq!(files, embedded);
    for (i, migration) in MIGRATIONS.iter().enumerate() {
        let number = u32::try_from(i + 1).expect("fits");
        assert_eq!(migration.version, number);
        assert!(
            migration.name.starts_with(&format!("{number:04}_")),
            "{}",
            migration.name
        );
    }
}

#[test]
fn a_fresh_store_is_at_the_latest_version_in_wal_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("collegium.db")).expect("open");
    assert_eq!(store.schema_version().expect("version"), LATEST_VERSION);
    assert_eq!(store.journal_mode().expect("mode"), "wal");
    drop(store);
    // Opening again changes nothing.
    let again = Store::open(&dir.path().join("collegium.db")).expect("reopen");
    assert_eq!(again.schema_version().expect("version"), LATEST_VERSION);
}

#[test]
fn a_store_at_each_earlier_version_is_brought_forward_with_its_data() {
    let fresh_dir = tempfile::tempdir().expect("tempdir");
    let fresh = fresh_dir.path().join("fresh.db");
    drop(Store::open(&fresh).expect("fresh"));
    let fresh_schema = schema_of(&fresh);

    for version in 0..LATEST_VERSION {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("collegium.db");
        store_at_version(&path, version);
        let store = Store::open(&path).unwrap_or_else(|e| panic!("from version {version}: {e}"));
        assert_eq!(store.schema_version().expect("version"), LATEST_VERSION);
        if version >= 1 {
            let post = store.post("p1").expect("query").expect("post kept");
            assert_eq!(post.message, "@mira please look");
            assert_eq!(post.author_kind, AuthorKind::Person);
            assert_eq!(
                post.role,
                PostRole::Post,
                "the column default applies to old rows"
            );
            assert_eq!(post.files.len(), 1);
            assert_eq!(
                store.index_matches("PLEASE LOOK", 10).expect("index"),
                1,
                "a post recorded before the search index is in it (0010, §3.8)"
            );
        }
        if version >= 2 {
            assert_eq!(store.turns_started_since(0).expect("count"), 1);
        }
        if version >= 3 {
            assert_eq!(
                store.queued("mira", "c1").expect("queue"),
                vec!["p1".to_string()]
            );
        }
        if version >= 4 {
            let run = store.previous_run("b1").expect("query").expect("run kept");
            assert_eq!(run.stopped_at, Some(4000));
        }
        if version >= 15 {
            let record = store
                .plugin_record("bookmark", "bookmarks", "r1")
                .expect("query")
                .expect("record kept (0016 rebuilt the table, §3.14)");
            assert_eq!(record.data, r#"{"title":"Rust book"}"#);
            assert_eq!((record.created_at, record.updated_at), (5000, 5001));
            // A later create with the same id differs in the new primary
            // key (created_at is in it): only the id's own index refuses it.
            assert!(
                !store
                    .insert_plugin_record("bookmark", "bookmarks", "r1", "{}", 6000)
                    .expect("insert"),
                "a taken id is still refused after the rebuild"
            );
            assert_eq!(
                store
                    .plugin_record("bookmark", "bookmarks", "r1")
                    .expect("query")
                    .map(|kept| (kept.data, kept.created_at, kept.updated_at)),
                Some((r#"{"title":"Rust book"}"#.to_string(), 5000, 5001)),
                "the stored record is kept as it was"
            );
            assert_eq!(
                store
                    .plugin_record_count("bookmark", "bookmarks")
                    .expect("count"),
                1
            );
        }
        drop(store);
        assert_eq!(schema_of(&path), fresh_schema, "from version {version}");
    }
}

#[test]
fn a_store_newer_than_this_build_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("collegium.db");
    drop(Store::open(&path).expect("open"));
    let conn = Connection::open(&path).expect("open raw");
    conn.pragma_update(None, "user_version", LATEST_VERSION + 1)
        .expect("bump");
    drop(conn);
    let Err(error) = Store::open(&path) else {
        panic!("a newer store was opened");
    };
    assert!(
        matches!(error, StoreError::TooNew { store, binary, .. } if store == LATEST_VERSION + 1 && binary == LATEST_VERSION)
    );
    let message = error.to_string();
    assert!(
        message.contains(&format!("schema version {}", LATEST_VERSION + 1)),
        "{message}"
    );
    assert!(
        message.contains(&format!("(version {LATEST_VERSION})")),
        "{message}"
    );
}

#[test]
fn typed_functions_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("collegium.db")).expect("open");
    store
        .record_channel(&ObservedChannel {
            id: "c1".into(),
            name: "research".into(),
            display_name: "Research".into(),
            kind: ChannelKind::Private,
        })
        .expect("channel");
    let post = ObservedPost {
        id: "p1".into(),
        channel_id: "c1".into(),
        author_id: "u1".into(),
        author_name: "ada".into(),
        author_kind: AuthorKind::Person,
        created_at: 10,
        message: "hello".into(),
        props: Some("{}".into()),
        role: PostRole::Post,
        turn_id: None,
        pinned: true,
        observed_at: 11,
        observed_via: ObservedVia::Backfill,
        files: vec![PostFile {
            file_id: "f1".into(),
            name: "a.txt".into(),
            mime_type: "text/plain".into(),
            size: 5,
        }],
    };
    assert!(store.record_post(&post).expect("insert"));
    assert!(
        !store.record_post(&post).expect("again"),
        "a post seen twice is one row"
    );
    assert_eq!(store.post("p1").expect("get"), Some(post));
    assert_eq!(
        store.last_post_in_channel("c1").expect("last"),
        Some(("p1".to_string(), 10))
    );
    assert!(store.enqueue("mira", "c1", "p1", 20).expect("enqueue"));
    assert!(!store.enqueue("mira", "c1", "p1", 21).expect("again"));
    store
        .open_turn(&NewTurn {
            id: "t1".into(),
            agent: "mira".into(),
            channel_id: "c1".into(),
            boot_id: "b1".into(),
            started_at: 30,
            cause: TurnCause::Post,
            answers_post_id: Some("p1".into()),
            depth: 0,
            chain_root: "t1".into(),
            chain_length: 1,
            model: "demo".into(),
        })
        .expect("turn");
    assert_eq!(store.turns_started_since(31).expect("count"), 0);
    assert_eq!(store.turns_started_since(30).expect("count"), 1);
}

#[tokio::test]
async fn the_store_thread_answers_async_callers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("collegium.db")).expect("open");
    let handle = StoreHandle::spawn(store).expect("spawn");
    handle
        .call(|store| store.begin_run("b1", "0.1.0", 100))
        .await
        .expect("begin");
    handle
        .call(|store| store.record_clean_stop("b1", 200))
        .await
        .expect("stop");
    let run = handle
        .call(|store| store.previous_run("b2"))
        .await
        .expect("query")
        .expect("run");
    assert_eq!((run.started_at, run.stopped_at), (100, Some(200)));
}
