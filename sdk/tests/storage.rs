//! The SDK's typed storage client against an in-memory `Storage` on a
//! socketpair, handed over as the daemon hands a child plugin fd 3 (§3.14).

use collegium_proto::storage::v1::condition::Test;
use collegium_sdk::storage::from_fd;
use collegium_sdk::testing::Memory;
use collegium_sdk::{Collection, Storage, StorageError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Bookmark {
    url: String,
    title: String,
    tag: Option<String>,
}

impl Collection for Bookmark {
    const NAME: &'static str = "bookmarks";
}

/// A type the stored rows do not parse as.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Strict {
    count: u32,
}

impl Collection for Strict {
    const NAME: &'static str = "bookmarks";
}

async fn storage(memory: &Memory) -> Storage {
    Storage::new(
        from_fd(memory.serve_on_pair().expect("pair"))
            .await
            .expect("connected"),
    )
}

fn rust_book() -> Bookmark {
    Bookmark {
        url: "https://doc.rust-lang.org/book/".into(),
        title: "Rust book".into(),
        tag: Some("rust".into()),
    }
}

#[tokio::test]
async fn s3_14_records_are_created_read_patched_and_deleted_typed() {
    let memory = Memory::default();
    let storage = storage(&memory).await;
    let created = storage.create(&rust_book()).await.expect("created");
    assert_eq!(created.data, rust_book());
    let read = storage
        .get::<Bookmark>(&created.id)
        .await
        .expect("read")
        .expect("present");
    assert_eq!(read, created);
    let patched = storage
        .patch::<Bookmark>(&created.id, json!({"title": "The Book"}))
        .await
        .expect("patched");
    assert_eq!(patched.data.title, "The Book");
    assert_eq!(patched.data.url, rust_book().url);
    assert!(
        storage
            .delete::<Bookmark>(&created.id)
            .await
            .expect("deleted")
    );
    assert_eq!(
        storage.get::<Bookmark>(&created.id).await.expect("read"),
        None
    );
    assert!(
        !storage
            .delete::<Bookmark>(&created.id)
            .await
            .expect("deleted")
    );
}

#[tokio::test]
async fn s3_14_a_taken_id_is_refused_never_overwritten() {
    let memory = Memory::default();
    let storage = storage(&memory).await;
    storage
        .create_with_id("one", &rust_book())
        .await
        .expect("created");
    let mut other = rust_book();
    other.title = "Another".into();
    let refused = storage
        .create_with_id("one", &other)
        .await
        .expect_err("taken");
    assert!(
        matches!(&refused, StorageError::Taken { collection, id } if collection == "bookmarks" && id == "one"),
        "{refused:?}"
    );
    let kept = storage
        .get::<Bookmark>("one")
        .await
        .expect("read")
        .expect("present");
    assert_eq!(kept.data.title, "Rust book");
}

#[tokio::test]
async fn s3_14_the_query_builder_sends_the_one_grammar() {
    let memory = Memory::default();
    let storage = storage(&memory).await;
    storage.create(&rust_book()).await.expect("created");
    storage
        .create(&Bookmark {
            url: "https://go.dev".into(),
            title: "Go tour".into(),
            tag: Some("go".into()),
        })
        .await
        .expect("created");
    let found = storage
        .query::<Bookmark>()
        .contains("title", "RUST")
        .one_of("tag", ["rust", "zig"])
        .equals("url", "https://doc.rust-lang.org/book/")
        .limit(5)
        .fetch()
        .await
        .expect("queried");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].data.title, "Rust book");
    let sent = memory.queries()[0].clone();
    assert_eq!(sent.collection, "bookmarks");
    assert_eq!(sent.limit, Some(5));
    let tests: Vec<(String, Test)> = sent
        .conditions
        .into_iter()
        .map(|c| (c.field, c.test.expect("a test")))
        .collect();
    assert_eq!(
        tests,
        vec![
            ("title".into(), Test::Contains("RUST".into())),
            ("tag".into(), Test::OneOfJson(r#"["rust","zig"]"#.into())),
            (
                "url".into(),
                Test::EqualsJson(r#""https://doc.rust-lang.org/book/""#.into())
            ),
        ]
    );
}

#[tokio::test]
async fn s3_14_a_row_that_does_not_parse_is_an_error_naming_it() {
    let memory = Memory::default();
    let storage = storage(&memory).await;
    let created = storage.create(&rust_book()).await.expect("created");
    let refused = storage
        .get::<Strict>(&created.id)
        .await
        .expect_err("unparsable");
    assert!(
        matches!(&refused, StorageError::Unparsable { id, .. } if *id == created.id),
        "{refused:?}"
    );
    let refused = storage
        .query::<Strict>()
        .fetch()
        .await
        .expect_err("the query is not handed a gap");
    assert!(refused.to_string().contains(&created.id), "{refused}");
}

#[tokio::test]
async fn s3_14_a_plugin_without_a_storage_connection_is_told_so() {
    let refused = Storage::unavailable()
        .create(&rust_book())
        .await
        .expect_err("no connection");
    assert!(matches!(refused, StorageError::Unavailable));
    assert!(refused.to_string().contains("fd 3"), "{refused}");
}

#[tokio::test]
async fn s3_14_a_patch_is_an_object_of_top_level_fields() {
    let memory = Memory::default();
    let storage = storage(&memory).await;
    let refused = storage
        .patch::<Bookmark>("any", json!(["not", "an", "object"]))
        .await
        .expect_err("refused");
    assert!(refused.to_string().contains("JSON object"), "{refused}");
}

#[tokio::test]
async fn s3_14_the_stores_stamps_in_a_records_json_are_the_stored_records_not_the_types() {
    let memory = Memory::default();
    let storage = storage(&memory).await;
    // The store returns `id`, `createdAt` and `updatedAt` inside the
    // record's JSON, as the daemon does; a type that denies unknown fields
    // still parses, on create, get and patch alike.
    let created = storage.create(&Strict { count: 2 }).await.expect("created");
    let got = storage
        .get::<Strict>(&created.id)
        .await
        .expect("a record with the stamps in its JSON parses")
        .expect("there");
    assert_eq!(got.data.count, 2);
    let patched = storage
        .patch::<Strict>(&created.id, json!({"count": 3}))
        .await
        .expect("patched");
    assert_eq!(patched.data.count, 3);
    assert!(patched.updated_at_unix_ms > created.created_at_unix_ms);
    // Writing a stamp is refused, as the daemon refuses it.
    let refused = storage
        .patch::<Strict>(&created.id, json!({"createdAt": 1}))
        .await
        .expect_err("a stamp is the store's");
    assert!(
        refused
            .to_string()
            .contains("`createdAt` is stamped by the store"),
        "{refused}"
    );
}

/// The in-memory store answers a query in (createdAt, id) order, as the
/// daemon does, whatever order its ids sort in.
#[tokio::test]
async fn s3_14_the_memory_store_answers_in_created_order() {
    let memory = Memory::default();
    let storage = storage(&memory).await;
    for id in ["zeta", "alpha", "mid"] {
        storage
            .create_with_id(id, &Strict { count: 1 })
            .await
            .expect("created");
    }
    let found: Vec<String> = storage
        .query::<Strict>()
        .fetch()
        .await
        .expect("query")
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(found, ["zeta", "alpha", "mid"]);
}

/// A unit-run plugin connects to `--storage-socket` and speaks only to a
/// socket the daemon's uid serves (the plugin wire convention). It is
/// started before the daemon listens, so it connects at its first call.
#[tokio::test]
async fn s3_14_the_storage_socket_is_spoken_to_only_when_the_daemon_serves_it() {
    use collegium_proto::storage::v1::storage_server::StorageServer;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("storage.sock");
    let me = std::fs::metadata(dir.path())
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .expect("uid");
    let storage = Storage::new(collegium_sdk::storage::from_socket(&path, [me].into()));
    let unserved = storage
        .create(&rust_book())
        .await
        .expect_err("nothing listens yet");
    assert!(
        unserved.to_string().contains(&path.display().to_string()),
        "{unserved}"
    );
    let listener = tokio::net::UnixListener::bind(&path).expect("bind");
    let memory = Memory::default();
    let server = StorageServer::new(memory.clone());
    tokio::spawn(async move {
        let _ = tonic::transport::Server::builder()
            .add_service(server)
            .serve_with_incoming(tokio_stream::wrappers::UnixListenerStream::new(listener))
            .await;
    });
    storage
        .create(&rust_book())
        .await
        .expect("created once the daemon listens");
    assert_eq!(memory.snapshot().len(), 1);
    let refused = Storage::new(collegium_sdk::storage::from_socket(
        &path,
        [me.wrapping_add(1)].into(),
    ))
    .create(&rust_book())
    .await
    .expect_err("another uid serves it");
    assert!(
        refused.to_string().contains(&format!("served by uid {me}")),
        "{refused}"
    );
    assert_eq!(memory.snapshot().len(), 1, "nothing was sent to it");
}
