//! Plugin storage over the wire (§3.14, issue 22 "Performance"), recorded
//! in `docs/benchmarks.md`: a record created and read back through the
//! tonic `Storage` service on a real socketpair, against a store on disk in
//! WAL mode — the round trip a plugin pays, schema validation, the store
//! thread and the stamps included. Targets: create and get p50 under
//! 200 µs; a contains query over 10,000 records under 5 ms.
//!
//! `cargo bench -p collegium-control --bench plugin_storage`

use std::time::{Duration, Instant};

use collegium_control::plugin_storage::{StorageService, collections, records, serve};
use collegium_control::store::{Store, StoreHandle};
use collegium_proto::storage::v1::{
    Condition, CreateRequest, GetRequest, QueryRequest, condition::Test,
    storage_client::StorageClient,
};
use collegium_proto::toolset::v1::StorageCollection;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tonic::transport::{Channel, Endpoint};

const MARKS: &str = r#"{"type":"object","required":["url","title"],"additionalProperties":false,
    "properties":{
        "url":{"type":"string"},
        "title":{"type":"string"},
        "note":{"type":"string"},
        "tags":{"type":"array","items":{"type":"string"}},
        "stars":{"type":"integer"}
    }}"#;

const RECORDS: usize = 10_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn row(name: &str, times: &mut [Duration]) {
    times.sort();
    let at = |p| percentile(times, p).as_secs_f64() * 1e6;
    println!(
        "| {name} | {:.0} µs | {:.0} µs | {:.0} µs |",
        at(0.5),
        at(0.9),
        at(0.99)
    );
}

fn record(n: usize) -> serde_json::Value {
    // One title in a hundred holds "Rust", in mixed case.
    let title = if n.is_multiple_of(100) {
        format!("The RUST book, part {n}")
    } else {
        format!("Bookmark number {n} about gardening")
    };
    json!({
        "url": format!("https://example.org/articles/{n}"),
        "title": title,
        "note": "A note of about the length an agent writes beside a saved link.",
        "tags": ["reading", "later"],
        "stars": n % 5,
    })
}

async fn client(store: &StoreHandle) -> StorageClient<Channel> {
    let declared = [StorageCollection {
        name: "marks".into(),
        schema_json: MARKS.into(),
    }];
    let compiled = collections::compile("bookmark", &declared).expect("collections");
    let (daemon, plugin) = tokio::net::UnixStream::pair().expect("socketpair");
    serve::connection(daemon, StorageService::new(compiled, store.clone()));
    let mut slot = Some(plugin);
    let channel = Endpoint::from_static("http://storage.invalid")
        .connect_with_connector(tower::service_fn(move |_| {
            let stream = slot.take();
            async move {
                stream
                    .map(TokioIo::new)
                    .ok_or_else(|| std::io::Error::other("one connection"))
            }
        }))
        .await
        .expect("connect");
    StorageClient::new(channel)
}

fn main() {
    // `cargo test --all-targets` runs a bench once as a test; this one is a
    // measurement, so it runs only under `cargo bench`, which passes
    // `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("store");
    // 10,000 records of the plugin's, and as many of another plugin's in a
    // collection of the same name, loaded in one transaction.
    store.bulk(|s| {
        for n in 0..RECORDS {
            let data = record(n).to_string();
            let at = 1_795_510_800_000 + i64::try_from(n).unwrap_or_default();
            for namespace in ["bookmark", "other"] {
                s.insert_plugin_record(namespace, "marks", &format!("seed-{n}"), &data, at)
                    .expect("seed");
            }
        }
    });
    let store = StoreHandle::spawn(store).expect("store thread");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut client = client(&store).await;
        println!("| case | median | p90 | p99 |\n|---|---|---|---|");
        // The same create and get on the store thread, without the wire:
        // what the store, the schema and the stamps cost.
        let declared = [StorageCollection {
            name: "marks".into(),
            schema_json: MARKS.into(),
        }];
        let compiled = collections::compile("bookmark", &declared).expect("collections");
        let mut times = Vec::new();
        let mut ids = Vec::new();
        for n in 0..2_000 {
            let data = match record(RECORDS * 2 + n) {
                serde_json::Value::Object(map) => map,
                _ => unreachable!("a record is an object"),
            };
            let compiled = compiled.clone();
            let start = Instant::now();
            let made = store
                .call(move |s| {
                    let marks = compiled.get("marks").expect("declared");
                    Ok(records::create(
                        s,
                        "bookmark",
                        marks,
                        "",
                        data,
                        1_795_600_000_000,
                    ))
                })
                .await
                .expect("store")
                .expect("create");
            times.push(start.elapsed());
            ids.push(made.id);
        }
        row(
            "in process: create on the store thread, no wire",
            &mut times,
        );
        let mut times = Vec::new();
        for id in ids.iter().cycle().take(2_000) {
            let (compiled, id) = (compiled.clone(), id.clone());
            let start = Instant::now();
            store
                .call(move |s| {
                    let marks = compiled.get("marks").expect("declared");
                    Ok(records::get(s, "bookmark", marks, &id))
                })
                .await
                .expect("store")
                .expect("get");
            times.push(start.elapsed());
        }
        row("in process: get on the store thread, no wire", &mut times);
        for id in ids {
            store
                .call(move |s| s.delete_plugin_record("bookmark", "marks", &id))
                .await
                .expect("cleanup");
        }
        let mut created = Vec::new();
        let mut times = Vec::new();
        for n in 0..2_000 {
            let request = CreateRequest {
                collection: "marks".into(),
                id: String::new(),
                data_json: record(RECORDS + n).to_string(),
            };
            let start = Instant::now();
            let made = client.create(request).await.expect("create").into_inner();
            times.push(start.elapsed());
            created.push(made.id);
        }
        row("create (store-assigned id, validated, stamped)", &mut times);
        let mut times = Vec::new();
        for id in created.iter().cycle().take(2_000) {
            let request = GetRequest {
                collection: "marks".into(),
                id: id.clone(),
            };
            let start = Instant::now();
            client.get(request).await.expect("get");
            times.push(start.elapsed());
        }
        row("get by id (parsed against the schema, stamped)", &mut times);
        // The query runs over exactly the 10,000 seeded records.
        for id in created {
            store
                .call(move |s| s.delete_plugin_record("bookmark", "marks", &id))
                .await
                .expect("cleanup");
        }
        for (name, needle, expect) in [
            (
                "contains \"rust\" over 10,000 records, 100 found",
                "rust",
                100,
            ),
            ("contains over 10,000 records, none found", "zebra", 0),
        ] {
            let mut times = Vec::new();
            for _ in 0..200 {
                let request = QueryRequest {
                    collection: "marks".into(),
                    conditions: vec![Condition {
                        field: "title".into(),
                        test: Some(Test::Contains(needle.into())),
                    }],
                    limit: None,
                };
                let start = Instant::now();
                let found = client.query(request).await.expect("query").into_inner();
                times.push(start.elapsed());
                assert_eq!(found.records.len(), expect, "{name}");
            }
            row(name, &mut times);
        }
    });
}
