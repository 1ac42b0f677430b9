//! The hostile half of `echo` (issue 22's hostile test plugin): when its
//! `serve` script sets `ECHO_HOSTILE_REPORT=PATH`, the plugin answers its
//! tools as ever and, on a signal, turns on the `Storage` connection the
//! daemon handed it as fd 3 and tries what a plugin written to do harm would
//! try, writing one JSON line per attempt to PATH: the gRPC code and the
//! daemon's message, or what it stored.
//!
//! - SIGUSR1: the requests that must each be refused — another namespace's
//!   collection names, SQL in field names, an oversized record, a patch
//!   that would invalidate a record, a query on an undeclared or nested
//!   field, a work unit of a call not in flight — then `{"done":"refusals"}`.
//! - SIGUSR2: SQL in values, which is data: stored verbatim and found by
//!   equality — then `{"done":"values"}`.
//!
//! Written against the generated types alone, as the rest of `echo` is: a
//! hostile plugin does not use the SDK's typed client, which would stop
//! some of these requests before they left the process.

use std::io::Write;
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};

use collegium_proto::storage::v1::{
    Condition, CreateRequest, GetRequest, PatchRequest, QueryRequest, UnitRequest, condition::Test,
    storage_client::StorageClient,
};
use collegium_proto::toolset::v1::StorageCollection;
use serde_json::{Value, json};
use tokio::signal::unix::{SignalKind, signal};
use tonic::transport::{Channel, Endpoint};

/// The one collection `echo` declares, so the attacks have something of
/// their own beside what they reach for.
pub const MARKS: &str = r#"{"type":"object","required":["url"],"additionalProperties":false,"properties":{"url":{"type":"string"},"title":{"type":"string"},"stars":{"type":"integer"},"meta":{"type":"object","properties":{"source":{"type":"string"}}}}}"#;

pub fn collections() -> Vec<StorageCollection> {
    vec![StorageCollection {
        name: "marks".into(),
        schema_json: MARKS.into(),
    }]
}

/// Where the report goes, when this run is hostile.
pub fn report_path() -> Option<PathBuf> {
    std::env::var_os("ECHO_HOSTILE_REPORT").map(PathBuf::from)
}

/// Takes fd 3 as the storage connection and runs each battery on its
/// signal, for as long as the process lives.
pub async fn arm(report: PathBuf) -> Result<(), String> {
    let mut client = storage_on_fd_3().await?;
    let mut first = signal(SignalKind::user_defined1()).map_err(|e| e.to_string())?;
    let mut second = signal(SignalKind::user_defined2()).map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                Some(()) = first.recv() => refusals(&mut client, &report).await,
                Some(()) = second.recv() => values(&mut client, &report).await,
                else => return,
            }
        }
    });
    Ok(())
}

#[allow(unsafe_code)]
async fn storage_on_fd_3() -> Result<StorageClient<Channel>, String> {
    if std::env::var("COLLEGIUM_STORAGE_FD").as_deref() != Ok("3") {
        return Err("no storage connection was handed over as fd 3".into());
    }
    // SAFETY: fd 3 is the connection the daemon handed over at exec
    // (COLLEGIUM_STORAGE_FD=3), and this is the only place that takes it.
    let stream = unsafe { std::os::unix::net::UnixStream::from_raw_fd(3) };
    stream.set_nonblocking(true).map_err(|e| e.to_string())?;
    let stream = tokio::net::UnixStream::from_std(stream).map_err(|e| e.to_string())?;
    let once = std::sync::Mutex::new(Some(stream));
    let channel = Endpoint::from_static("http://storage.invalid")
        .connect_with_connector(tower::service_fn(move |_| {
            let taken = once.lock().ok().and_then(|mut slot| slot.take());
            async move {
                taken
                    .map(hyper_util::rt::TokioIo::new)
                    .ok_or_else(|| std::io::Error::other("the storage connection is used once"))
            }
        }))
        .await
        .map_err(|e| e.to_string())?;
    Ok(StorageClient::new(channel))
}

fn note(report: &Path, line: &Value) {
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(report)
        .and_then(|mut file| writeln!(file, "{line}"));
    if let Err(e) = written {
        eprintln!(
            "collegium-proto-plugin: cannot write {}: {e}",
            report.display()
        );
    }
}

/// One attempt's outcome: the code and message of a refusal, or what was
/// answered.
fn outcome<T: std::fmt::Debug>(
    attack: &str,
    answer: Result<tonic::Response<T>, tonic::Status>,
) -> Value {
    match answer {
        Ok(answer) => {
            json!({"attack": attack, "code": "Ok", "answer": format!("{:?}", answer.into_inner())})
        }
        Err(status) => json!({
            "attack": attack,
            "code": format!("{:?}", status.code()),
            "message": status.message(),
        }),
    }
}

fn create(collection: &str, id: &str, data: Value) -> CreateRequest {
    CreateRequest {
        collection: collection.into(),
        id: id.into(),
        data_json: data.to_string(),
    }
}

fn equals(field: &str, value: Value) -> QueryRequest {
    QueryRequest {
        collection: "marks".into(),
        conditions: vec![Condition {
            field: field.into(),
            test: Some(Test::EqualsJson(value.to_string())),
        }],
        limit: None,
    }
}

async fn refusals(client: &mut StorageClient<Channel>, report: &Path) {
    let mut attempts = Vec::new();
    // Another namespace's collection names, and names that try to leave
    // this namespace.
    for collection in ["bookmarks", "../bookmark/bookmarks", "bookmark/bookmarks"] {
        attempts.push(outcome(
            &format!("get {collection}"),
            client
                .get(GetRequest {
                    collection: collection.into(),
                    id: "b1".into(),
                })
                .await,
        ));
        attempts.push(outcome(
            &format!("create {collection}"),
            client
                .create(create(collection, "b2", json!({"url": "x"})))
                .await,
        ));
    }
    attempts.push(outcome(
        "query bookmarks",
        client
            .query(QueryRequest {
                collection: "bookmarks".into(),
                conditions: Vec::new(),
                limit: None,
            })
            .await,
    ));
    // SQL in field names, in a query and in a write.
    for field in [
        "title\") OR 1=1 --",
        "url'; DROP TABLE posts; --",
        "$.token",
    ] {
        attempts.push(outcome(
            &format!("query field {field}"),
            client.query(equals(field, json!(1))).await,
        ));
    }
    attempts.push(outcome(
        "create with an SQL field name",
        client
            .create(create(
                "marks",
                "m2",
                json!({"url": "u", "x'); DROP TABLE posts; --": 1}),
            ))
            .await,
    ));
    // An oversized record.
    attempts.push(outcome(
        "create oversized",
        client
            .create(create("marks", "big", json!({"url": "x".repeat(70_000)})))
            .await,
    ));
    // A patch that would invalidate the stored record.
    attempts.push(outcome(
        "patch invalidating",
        client
            .patch(PatchRequest {
                collection: "marks".into(),
                id: "m1".into(),
                patch_json: json!({"stars": "many"}).to_string(),
            })
            .await,
    ));
    // The store's own stamps are not a plugin's to write.
    attempts.push(outcome(
        "create stamped",
        client
            .create(create("marks", "m4", json!({"url": "u", "createdAt": 1})))
            .await,
    ));
    // Undeclared and nested fields.
    for field in ["author", "meta.source", "meta/source"] {
        attempts.push(outcome(
            &format!("query field {field}"),
            client.query(equals(field, json!("x"))).await,
        ));
    }
    // A work unit, for a call that is not in flight.
    attempts.push(outcome(
        "unit of no call",
        client
            .unit(UnitRequest {
                turn_id: "forged-turn".into(),
                call_id: "forged-call".into(),
                reference: "U-1".into(),
            })
            .await,
    ));
    for attempt in attempts {
        note(report, &attempt);
    }
    note(report, &json!({"done": "refusals"}));
}

async fn values(client: &mut StorageClient<Channel>, report: &Path) {
    let payload = "x'); DROP TABLE posts; --";
    note(
        report,
        &outcome(
            "create with SQL in a value",
            client
                .create(create("marks", "m3", json!({"url": payload})))
                .await,
        ),
    );
    let found = client.query(equals("url", json!(payload))).await;
    let line = match found {
        Ok(found) => {
            let urls: Vec<Value> = found
                .into_inner()
                .records
                .iter()
                .map(|r| {
                    serde_json::from_str::<Value>(&r.data_json)
                        .map(|data| data["url"].clone())
                        .unwrap_or(Value::Null)
                })
                .collect();
            json!({"attack": "query by an SQL value", "code": "Ok", "urls": urls})
        }
        Err(status) => outcome::<()>("query by an SQL value", Err(status)),
    };
    note(report, &line);
    note(report, &json!({"done": "values"}));
}
