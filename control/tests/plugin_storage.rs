//! Plugin storage over the real wire (§3.14, issue 22 item 4): the tonic
//! `Storage` service driven by a tonic client over a real socketpair, with
//! a real SQLite store. The hostile cases a plugin could try — another
//! namespace's collections, SQL in field names and values, an oversized
//! record, an invalidating patch, a query on an undeclared or nested field
//! — are each a typed refusal, with the framework's tables unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use collegium_control::plugin_storage::{MAX_RECORD_BYTES, StorageService, collections, serve};
use collegium_control::store::{
    AuthorKind, ChannelKind, ObservedChannel, ObservedPost, ObservedVia, PostRole, Store,
    StoreHandle,
};
use collegium_proto::storage::v1::{
    Condition, CreateRequest, DeleteRequest, GetRequest, PatchRequest, QueryRequest,
    condition::Test, storage_client::StorageClient,
};
use collegium_proto::toolset::v1::StorageCollection;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tonic::Code;
use tonic::transport::{Channel, Endpoint};

const MARKS: &str = r#"{"type":"object","required":["url"],"additionalProperties":false,
    "properties":{
        "url":{"type":"string"},
        "title":{"type":"string"},
        "stars":{"type":"integer"},
        "tags":{"type":"array","items":{"type":"string"}},
        "meta":{"type":"object","properties":{"source":{"type":"string"}}}
    }}"#;

const SECRETS: &str = r#"{"type":"object","properties":{"token":{"type":"string"}}}"#;

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    store: StoreHandle,
}

/// A store with rows in the framework's own tables, so "unchanged" is a
/// claim about data, not about empty tables.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("collegium.db");
    let mut store = Store::open(&path).expect("open");
    store
        .record_channel(&ObservedChannel {
            id: "c1".into(),
            name: "research".into(),
            display_name: "Research".into(),
            kind: ChannelKind::Open,
        })
        .expect("channel");
    store
        .record_post(&ObservedPost {
            id: "p1".into(),
            channel_id: "c1".into(),
            author_id: "u1".into(),
            author_name: "ada".into(),
            author_kind: AuthorKind::Person,
            created_at: 10,
            message: "hello".into(),
            props: None,
            role: PostRole::Post,
            turn_id: None,
            pinned: false,
            observed_at: 11,
            observed_via: ObservedVia::Backfill,
            files: Vec::new(),
        })
        .expect("post");
    store.enqueue("mira", "c1", "p1", 12).expect("queue");
    let store = StoreHandle::spawn(store).expect("store thread");
    Fixture {
        _dir: dir,
        path,
        store,
    }
}

/// Row count and a checksum of every table but `except`, read by a second
/// connection as an operator's query would.
fn tables(path: &Path, except: &str) -> BTreeMap<String, (usize, String)> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("read-only connection");
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("prepare")
        .query_map([], |row| row.get(0))
        .expect("tables")
        .collect::<Result<_, _>>()
        .expect("names");
    let mut out = BTreeMap::new();
    for name in names.into_iter().filter(|n| n != except) {
        let mut statement = conn
            .prepare(&format!("SELECT * FROM \"{name}\""))
            .expect("select");
        let columns = statement.column_count();
        let mut rows: Vec<String> = statement
            .query_map([], |row| {
                (0..columns)
                    .map(|i| {
                        row.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(|values| values.join("\u{1f}"))
            })
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("values");
        rows.sort();
        let digest = Sha256::digest(rows.join("\u{1e}").as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        out.insert(name, (rows.len(), hex));
    }
    out
}

fn declared(pairs: &[(&str, &str)]) -> Vec<StorageCollection> {
    pairs
        .iter()
        .map(|(name, schema)| StorageCollection {
            name: (*name).into(),
            schema_json: (*schema).into(),
        })
        .collect()
}

/// A client on a fresh connection bound to `namespace`: the daemon serves
/// one end of a socketpair, the plugin holds the other.
async fn connect(
    store: &StoreHandle,
    namespace: &str,
    pairs: &[(&str, &str)],
) -> StorageClient<Channel> {
    let compiled = collections::compile(namespace, &declared(pairs)).expect("collections");
    let (daemon, plugin) = tokio::net::UnixStream::pair().expect("socketpair");
    serve::connection(daemon, StorageService::new(compiled, store.clone()));
    client_over(plugin).await
}

async fn client_over(stream: tokio::net::UnixStream) -> StorageClient<Channel> {
    let mut slot = Some(stream);
    let channel = Endpoint::from_static("http://storage.invalid")
        .connect_with_connector(tower::service_fn(move |_| {
            let stream = slot.take();
            async move {
                stream
                    .map(TokioIo::new)
                    .ok_or_else(|| std::io::Error::other("one connection, no reconnect"))
            }
        }))
        .await
        .expect("connect");
    StorageClient::new(channel)
}

fn create(collection: &str, id: &str, data: Value) -> CreateRequest {
    CreateRequest {
        collection: collection.into(),
        id: id.into(),
        data_json: data.to_string(),
    }
}

fn get(collection: &str, id: &str) -> GetRequest {
    GetRequest {
        collection: collection.into(),
        id: id.into(),
    }
}

fn condition(field: &str, test: Test) -> Condition {
    Condition {
        field: field.into(),
        test: Some(test),
    }
}

fn query(collection: &str, conditions: Vec<Condition>, limit: Option<u32>) -> QueryRequest {
    QueryRequest {
        collection: collection.into(),
        conditions,
        limit,
    }
}

fn data(json: &str) -> Value {
    serde_json::from_str(json).expect("record data is JSON")
}

fn refused(result: Result<impl std::fmt::Debug, tonic::Status>, code: Code) -> String {
    let status = result.expect_err("refused");
    assert_eq!(status.code(), code, "{}", status.message());
    status.message().to_owned()
}

#[tokio::test]
async fn s3_14_create_get_patch_delete_with_stamps() {
    let f = fixture();
    let mut bookmark = connect(&f.store, "bookmark", &[("marks", MARKS)]).await;
    let made = bookmark
        .create(create(
            "marks",
            "",
            json!({"url": "https://a", "title": "A"}),
        ))
        .await
        .expect("create")
        .into_inner();
    assert!(!made.id.is_empty(), "the store assigns an id");
    let stamped = data(&made.data_json);
    assert_eq!(stamped["id"], json!(made.id));
    assert!(stamped["createdAt"].is_string() && stamped["updatedAt"].is_string());
    assert_eq!(stamped["url"], "https://a");

    let read = bookmark
        .get(get("marks", &made.id))
        .await
        .expect("get")
        .into_inner();
    assert_eq!(read, made);

    let patched = bookmark
        .patch(PatchRequest {
            collection: "marks".into(),
            id: made.id.clone(),
            patch_json: json!({"title": "B", "stars": 4}).to_string(),
        })
        .await
        .expect("patch")
        .into_inner();
    let patched_data = data(&patched.data_json);
    assert_eq!(patched_data["title"], "B");
    assert_eq!(patched_data["url"], "https://a", "merged, not replaced");
    assert_eq!(patched.created_at_unix_ms, made.created_at_unix_ms);
    assert!(patched.updated_at_unix_ms >= made.updated_at_unix_ms);

    let delete = DeleteRequest {
        collection: "marks".into(),
        id: made.id.clone(),
    };
    assert!(
        bookmark
            .delete(delete.clone())
            .await
            .expect("delete")
            .into_inner()
            .deleted
    );
    assert!(
        !bookmark
            .delete(delete)
            .await
            .expect("delete")
            .into_inner()
            .deleted
    );
    let message = refused(bookmark.get(get("marks", &made.id)).await, Code::NotFound);
    assert!(message.contains(&made.id), "{message}");
}

#[tokio::test]
async fn s3_14_a_taken_id_is_refused_never_overwritten() {
    let f = fixture();
    let mut bookmark = connect(&f.store, "bookmark", &[("marks", MARKS)]).await;
    bookmark
        .create(create("marks", "rust", json!({"url": "https://first"})))
        .await
        .expect("create");
    let message = refused(
        bookmark
            .create(create("marks", "rust", json!({"url": "https://second"})))
            .await,
        Code::AlreadyExists,
    );
    assert!(message.contains("patch it"), "{message}");
    let kept = bookmark
        .get(get("marks", "rust"))
        .await
        .expect("get")
        .into_inner();
    assert_eq!(data(&kept.data_json)["url"], "https://first");
}

/// An answer too large for a plugin's client to decode is a typed refusal
/// naming its size and what to change, never a broken transport and never
/// cut short (A4); with a limit the same query answers.
#[tokio::test]
async fn s3_14_a_query_whose_answer_is_over_4_mib_is_refused_naming_its_size() {
    let f = fixture();
    let mut client = connect(&f.store, "bookmark", &[("marks", MARKS)]).await;
    let note = "n".repeat(60_000);
    for n in 0..75 {
        client
            .create(create(
                "marks",
                &format!("m{n:02}"),
                json!({"url": format!("https://a/{n}"), "title": note}),
            ))
            .await
            .expect("created");
    }
    let message = refused(
        client.query(query("marks", Vec::new(), None)).await,
        Code::InvalidArgument,
    );
    assert!(
        message.starts_with("the query on `marks` matched 75 records, "),
        "{message}"
    );
    assert!(
        message.ends_with(&format!(
            "over the {}-byte limit of an answer; give a limit, or narrow the conditions",
            collegium_control::plugin_storage::service::MAX_ANSWER_BYTES
        )),
        "{message}"
    );
    let limited = client
        .query(query("marks", Vec::new(), Some(10)))
        .await
        .expect("a limited query answers")
        .into_inner();
    assert_eq!(limited.records.len(), 10);
}

#[tokio::test]
async fn s3_14_a_query_is_an_and_of_typed_conditions_in_created_order() {
    let f = fixture();
    let mut bookmark = connect(&f.store, "bookmark", &[("marks", MARKS)]).await;
    for (id, title, stars) in [
        ("1", "Rust book", 5),
        ("2", "Go book", 3),
        ("3", "rusty", 5),
    ] {
        bookmark
            .create(create(
                "marks",
                id,
                json!({"url": format!("https://{id}"), "title": title, "stars": stars}),
            ))
            .await
            .expect("create");
    }
    let ids = |records: Vec<collegium_proto::storage::v1::Record>| -> Vec<String> {
        records.into_iter().map(|r| r.id).collect()
    };
    let found = bookmark
        .query(query(
            "marks",
            vec![condition("title", Test::Contains("RUST".into()))],
            None,
        ))
        .await
        .expect("query")
        .into_inner();
    assert_eq!(ids(found.records), ["1", "3"]);
    let found = bookmark
        .query(query(
            "marks",
            vec![
                condition("stars", Test::OneOfJson("[5, 4]".into())),
                condition("title", Test::EqualsJson(r#""rusty""#.into())),
            ],
            None,
        ))
        .await
        .expect("query")
        .into_inner();
    assert_eq!(ids(found.records), ["3"]);
    let found = bookmark
        .query(query("marks", Vec::new(), Some(2)))
        .await
        .expect("query")
        .into_inner();
    assert_eq!(ids(found.records), ["1", "2"]);
}

#[tokio::test]
async fn s3_14_hostile_requests_are_typed_refusals_and_the_framework_tables_unchanged() {
    let f = fixture();
    let mut hostile = connect(&f.store, "hostile", &[("marks", MARKS)]).await;
    let mut vault = connect(&f.store, "vault", &[("secrets", SECRETS)]).await;
    vault
        .create(create("secrets", "s1", json!({"token": "hunter2"})))
        .await
        .expect("the other plugin's row");
    hostile
        .create(create(
            "marks",
            "m1",
            json!({"url": "https://a", "title": "A"}),
        ))
        .await
        .expect("the plugin's own row");
    let before = tables(&f.path, "");

    // Another namespace's collection names: absent, not someone else's.
    let message = refused(
        hostile.get(get("secrets", "s1")).await,
        Code::InvalidArgument,
    );
    assert!(
        message.contains("declares no storage collection `secrets`"),
        "{message}"
    );
    refused(
        hostile
            .create(create("secrets", "s2", json!({"token": "x"})))
            .await,
        Code::InvalidArgument,
    );
    refused(
        hostile.query(query("secrets", Vec::new(), None)).await,
        Code::InvalidArgument,
    );

    // SQL in field names: an undeclared field, in a query and in a write.
    for field in [
        "title\") OR 1=1 --",
        "url'; DROP TABLE posts; --",
        "$.token",
    ] {
        let message = refused(
            hostile
                .query(query(
                    "marks",
                    vec![condition(field, Test::EqualsJson("1".into()))],
                    None,
                ))
                .await,
            Code::InvalidArgument,
        );
        assert!(message.contains("invalid query"), "{message}");
    }
    refused(
        hostile
            .create(create(
                "marks",
                "m2",
                json!({"url": "u", "x'); DROP TABLE posts; --": 1}),
            ))
            .await,
        Code::InvalidArgument,
    );

    // An oversized record names the limit and its size.
    let huge = "x".repeat(MAX_RECORD_BYTES);
    let message = refused(
        hostile
            .create(create("marks", "big", json!({"url": huge})))
            .await,
        Code::InvalidArgument,
    );
    assert!(
        message.contains(&format!("{MAX_RECORD_BYTES}-byte limit")),
        "{message}"
    );
    assert!(
        message.contains(&format!("{} bytes", MAX_RECORD_BYTES + 10)),
        "{message}"
    );

    // A patch that would invalidate the record: refused, the row as it was.
    let stored = hostile
        .get(get("marks", "m1"))
        .await
        .expect("get")
        .into_inner();
    let message = refused(
        hostile
            .patch(PatchRequest {
                collection: "marks".into(),
                id: "m1".into(),
                patch_json: json!({"stars": "many"}).to_string(),
            })
            .await,
        Code::InvalidArgument,
    );
    assert!(message.contains("/stars"), "{message}");
    assert_eq!(
        hostile
            .get(get("marks", "m1"))
            .await
            .expect("get")
            .into_inner(),
        stored
    );

    // A query on an undeclared or nested field.
    for field in ["author", "meta.source", "meta/source", "tags"] {
        refused(
            hostile
                .query(query(
                    "marks",
                    vec![condition(field, Test::EqualsJson(r#""x""#.into()))],
                    None,
                ))
                .await,
            Code::InvalidArgument,
        );
    }

    // Every table is as it was, the plugins' own included: nothing above
    // wrote anything.
    assert_eq!(tables(&f.path, ""), before);

    // SQL in a value is a value: stored verbatim, found by equality, and
    // the framework's tables still untouched.
    let payload = "x'); DROP TABLE posts; --";
    hostile
        .create(create("marks", "m3", json!({"url": payload})))
        .await
        .expect("a value is data");
    let found = hostile
        .query(query(
            "marks",
            vec![condition(
                "url",
                Test::EqualsJson(json!(payload).to_string()),
            )],
            None,
        ))
        .await
        .expect("query")
        .into_inner();
    assert_eq!(found.records.len(), 1);
    assert_eq!(data(&found.records[0].data_json)["url"], payload);
    let after = tables(&f.path, "plugin_records");
    let mut expected = before.clone();
    expected.remove("plugin_records");
    assert_eq!(after, expected);
}

#[tokio::test]
async fn s3_14_two_namespaces_with_one_collection_name_hold_disjoint_rows() {
    let f = fixture();
    let mut alpha = connect(&f.store, "alpha", &[("marks", MARKS)]).await;
    let mut beta = connect(&f.store, "beta", &[("marks", MARKS)]).await;
    alpha
        .create(create("marks", "same", json!({"url": "https://alpha"})))
        .await
        .expect("alpha");
    beta.create(create("marks", "same", json!({"url": "https://beta"})))
        .await
        .expect("beta: the same id is another namespace's");
    beta.create(create("marks", "only-beta", json!({"url": "https://b2"})))
        .await
        .expect("beta");
    let url = |record: collegium_proto::storage::v1::Record| data(&record.data_json)["url"].clone();
    assert_eq!(
        url(alpha
            .get(get("marks", "same"))
            .await
            .expect("get")
            .into_inner()),
        "https://alpha"
    );
    assert_eq!(
        url(beta
            .get(get("marks", "same"))
            .await
            .expect("get")
            .into_inner()),
        "https://beta"
    );
    refused(alpha.get(get("marks", "only-beta")).await, Code::NotFound);
    let all = alpha
        .query(query("marks", Vec::new(), None))
        .await
        .expect("query")
        .into_inner();
    assert_eq!(all.records.len(), 1);
    assert!(
        !alpha
            .delete(DeleteRequest {
                collection: "marks".into(),
                id: "only-beta".into()
            })
            .await
            .expect("delete")
            .into_inner()
            .deleted
    );
    assert_eq!(
        beta.query(query("marks", Vec::new(), None))
            .await
            .expect("query")
            .into_inner()
            .records
            .len(),
        2
    );
}

#[tokio::test]
async fn s3_14_a_row_that_no_longer_parses_is_a_typed_error_naming_it() {
    let f = fixture();
    let loose = r#"{"type":"object","properties":{"url":{"type":"string"},"n":{}}}"#;
    let strict =
        r#"{"type":"object","properties":{"url":{"type":"string"},"n":{"type":"integer"}}}"#;
    let mut before = connect(&f.store, "bookmark", &[("marks", loose)]).await;
    before
        .create(create("marks", "old", json!({"url": "u", "n": "seven"})))
        .await
        .expect("valid under the old schema");
    // The plugin is upgraded: its schema no longer admits the row.
    let mut after = connect(&f.store, "bookmark", &[("marks", strict)]).await;
    let message = refused(
        after.get(get("marks", "old")).await,
        Code::FailedPrecondition,
    );
    assert!(message.contains("`old`"), "{message}");
    let message = refused(
        after.query(query("marks", Vec::new(), None)).await,
        Code::FailedPrecondition,
    );
    assert!(
        message.contains("`old`"),
        "never silently skipped: {message}"
    );
    // A patch that mends it is accepted.
    after
        .patch(PatchRequest {
            collection: "marks".into(),
            id: "old".into(),
            patch_json: json!({"n": 7}).to_string(),
        })
        .await
        .expect("mended");
    after.get(get("marks", "old")).await.expect("parses again");
}

/// The child plugin's side of the hand-over below: this same test, run
/// again by it as a child with the storage connection on fd 3.
#[allow(unsafe_code)]
async fn reach_storage_as_the_child() {
    let fd = std::env::var("COLLEGIUM_STORAGE_FD").expect("fd named");
    assert_eq!(fd, "3");
    use std::os::fd::FromRawFd;
    // SAFETY: fd 3 is the connection the parent handed over, owned by
    // nothing else in this process.
    let stream = unsafe { std::os::unix::net::UnixStream::from_raw_fd(3) };
    stream.set_nonblocking(true).expect("nonblocking");
    let stream = tokio::net::UnixStream::from_std(stream).expect("tokio stream");
    let mut client = client_over(stream).await;
    client
        .create(create(
            "marks",
            "from-child",
            json!({"url": "https://child"}),
        ))
        .await
        .expect("the child reaches its storage on fd 3");
}

#[tokio::test]
async fn s3_14_a_child_plugin_reaches_storage_on_fd_3() {
    if std::env::var_os("PLUGIN_STORAGE_TEST_CHILD").is_some() {
        return reach_storage_as_the_child().await;
    }
    let f = fixture();
    let mut command = tokio::process::Command::new(std::env::current_exe().expect("test binary"));
    command
        .args(["s3_14_a_child_plugin_reaches_storage_on_fd_3", "--exact"])
        .env("PLUGIN_STORAGE_TEST_CHILD", "1")
        .stdout(std::process::Stdio::null());
    let handed = serve::hand_to_child(&mut command).expect("pair");
    let spawned = command.spawn();
    let daemon_end = handed.spawned();
    let mut child = spawned.expect("spawn");
    let compiled =
        collections::compile("bookmark", &declared(&[("marks", MARKS)])).expect("compile");
    daemon_end.serve(compiled, f.store.clone()).expect("serve");
    let status = child.wait().await.expect("wait");
    assert!(status.success(), "the child failed: {status}");
    let record = f
        .store
        .call(|s| s.plugin_record("bookmark", "marks", "from-child"))
        .await
        .expect("store")
        .expect("the child's record is stored under its namespace");
    assert_eq!(data(&record.data)["url"], "https://child");
}

#[tokio::test]
async fn s3_14_a_unit_run_plugin_is_bound_by_its_peer_uid() {
    let f = fixture();
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join(serve::SOCKET_NAME);
    let me = nix::unistd::getuid().as_raw();
    let compiled =
        collections::compile("bookmark", &declared(&[("marks", MARKS)])).expect("compile");
    let bindings = serve::bindings([(me, compiled)]).expect("bindings");
    let listener = serve::listen(&socket, bindings, f.store.clone()).expect("listen");
    let stream = tokio::net::UnixStream::connect(&socket)
        .await
        .expect("connect");
    let mut client = client_over(stream).await;
    client
        .create(create("marks", "by-uid", json!({"url": "https://unit"})))
        .await
        .expect("bound by uid");
    assert!(
        f.store
            .call(|s| s.plugin_record("bookmark", "marks", "by-uid"))
            .await
            .expect("store")
            .is_some()
    );
    listener.stop();

    // A uid no plugin runs as is refused at accept: the connection closes.
    let other = collections::compile("other", &declared(&[("marks", MARKS)])).expect("compile");
    let socket = dir.path().join("other.sock");
    let listener = serve::listen(
        &socket,
        serve::bindings([(me.wrapping_add(1), other)]).expect("bindings"),
        f.store.clone(),
    )
    .expect("listen");
    let stream = tokio::net::UnixStream::connect(&socket)
        .await
        .expect("connect");
    let mut client = client_over(stream).await;
    assert!(
        client
            .create(create("marks", "x", json!({"url": "u"})))
            .await
            .is_err()
    );
    listener.stop();
}

/// A unit-run plugin holds at most `CONNECTIONS_PER_PLUGIN` storage
/// connections: each is a descriptor of the daemon's. One more is closed at
/// accept; once one ends, another is admitted. Stopping the listener ends
/// every connection and removes its socket.
#[tokio::test]
async fn s3_14_a_unit_run_plugin_holds_a_bounded_number_of_storage_connections() {
    let f = fixture();
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join(serve::SOCKET_NAME);
    let me = nix::unistd::getuid().as_raw();
    let compiled =
        collections::compile("bookmark", &declared(&[("marks", MARKS)])).expect("compile");
    let listener = serve::listen(
        &socket,
        serve::bindings([(me, compiled)]).expect("bindings"),
        f.store.clone(),
    )
    .expect("listen");
    let mut clients = Vec::new();
    for n in 0..serve::CONNECTIONS_PER_PLUGIN {
        let stream = tokio::net::UnixStream::connect(&socket)
            .await
            .expect("connect");
        let mut client = client_over(stream).await;
        client
            .create(create("marks", &format!("c{n}"), json!({"url": "u"})))
            .await
            .expect("admitted");
        clients.push(client);
    }
    let stream = tokio::net::UnixStream::connect(&socket)
        .await
        .expect("connect");
    let mut over = client_over(stream).await;
    assert!(
        over.create(create("marks", "over", json!({"url": "u"})))
            .await
            .is_err(),
        "one connection past the bound is closed"
    );
    // One ends; another is admitted.
    drop(clients.pop());
    let admitted = async {
        loop {
            let stream = tokio::net::UnixStream::connect(&socket)
                .await
                .expect("connect");
            let mut client = client_over(stream).await;
            if client
                .create(create("marks", "again", json!({"url": "u"})))
                .await
                .is_ok()
            {
                return client;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    let mut again = tokio::time::timeout(std::time::Duration::from_secs(10), admitted)
        .await
        .expect("a place freed is taken again");
    listener.stop();
    assert!(!socket.exists(), "the socket is removed");
    let ended = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            if again.get(get("marks", "again")).await.is_err() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(ended.is_ok(), "a stop ends the connections it accepted");
}

#[test]
fn s3_14_two_unit_run_plugins_under_one_uid_are_refused() {
    let a = collections::compile("a", &[]).expect("compile");
    let b = collections::compile("b", &[]).expect("compile");
    let error = serve::bindings([(1000, a), (1000, b)]).expect_err("ambiguous");
    assert!(error.to_string().contains("uid 1000"), "{error}");
}
