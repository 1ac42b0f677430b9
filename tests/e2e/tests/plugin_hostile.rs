//! A hostile plugin as a process through the real daemon (§3.14, issue 22):
//! `echo` armed with `ECHO_HOSTILE_REPORT` turns on the `Storage`
//! connection the daemon handed it as fd 3 and reaches for another
//! namespace's collections, puts SQL in field names and values, writes an
//! oversized record, patches a record invalid, queries undeclared and
//! nested fields and asks for a work unit of no call. Each is a typed
//! refusal, and every table of the store is as it was, row for row; SQL in
//! a value is data, stored verbatim, and the framework's tables still
//! untouched. control/tests/plugin_storage.rs drives the same requests at
//! the wire; this is the same attack from a plugin's own process.

use std::path::Path;
use std::time::{Duration, Instant};

use e2e::procs;
use e2e::scenario::{store, table_digests};
use e2e::{Harness, binary};
use serde_json::{Value, json};

/// The report's lines so far.
fn report(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Signals the plugin and waits for the battery's `done` line.
fn run_battery(
    plugin: u32,
    signal: nix::sys::signal::Signal,
    path: &Path,
    done: &str,
) -> Vec<Value> {
    let before = report(path).len();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(plugin as i32), signal).expect("signal");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let lines = report(path);
        if lines.iter().any(|l| l["done"] == done) {
            return lines[before..]
                .iter()
                .filter(|l| l["done"].is_null())
                .cloned()
                .collect();
        }
        assert!(Instant::now() < deadline, "no {done} battery in {lines:#?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The store's digests once the daemon's boot has stopped writing (it
/// records channel members as its bots' websockets report them): two reads
/// a moment apart that agree.
fn settled(h: &Harness) -> std::collections::BTreeMap<String, (usize, String)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = table_digests(h, "");
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = table_digests(h, "");
        if now == last {
            return now;
        }
        assert!(Instant::now() < deadline, "the store never settled");
        last = now;
    }
}

fn attempt<'a>(lines: &'a [Value], attack: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["attack"] == attack)
        .unwrap_or_else(|| panic!("no {attack:?} in {lines:#?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_hostile_plugins_storage_requests_are_typed_refusals_and_change_no_table() {
    let h = Harness::start().await;
    let reports = h.dir.path().join("reports");
    std::fs::create_dir(&reports).expect("reports");
    let path = reports.join("hostile.jsonl");
    h.install_plugin(
        "echo",
        &format!(
            "#!/bin/sh\nECHO_HOSTILE_REPORT='{}' exec '{}' \"$@\"\n",
            path.display(),
            binary("collegium-proto-plugin").display()
        ),
    );
    h.grant_mira(&["workspace", "echo"]);
    h.provision().await.expect("provisioned");
    // Another plugin's record, and one of echo's own, so "unchanged" is a
    // claim about rows.
    let seeded = store(&h);
    assert!(
        seeded
            .insert_plugin_record(
                "bookmark",
                "bookmarks",
                "b1",
                r#"{"url":"https://doc.rust-lang.org/book/","title":"Rust book"}"#,
                1,
            )
            .expect("seed")
    );
    assert!(
        seeded
            .insert_plugin_record(
                "echo",
                "marks",
                "m1",
                r#"{"url":"https://a","title":"A"}"#,
                1
            )
            .expect("seed")
    );
    drop(seeded);
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let plugin = procs::children_named(daemon.child.id(), "collegium-proto-plugin")
        .pop()
        .expect("the echo plugin, the daemon's child");

    let before = settled(&h);
    let lines = run_battery(
        plugin.pid,
        nix::sys::signal::Signal::SIGUSR1,
        &path,
        "refusals",
    );
    for line in &lines {
        assert_ne!(line["code"], "Ok", "a hostile request was answered: {line}");
    }
    for collection in ["bookmarks", "../bookmark/bookmarks", "bookmark/bookmarks"] {
        for verb in ["get", "create"] {
            let refused = attempt(&lines, &format!("{verb} {collection}"));
            assert_eq!(refused["code"], "InvalidArgument", "{refused}");
            assert!(
                refused["message"].as_str().is_some_and(
                    |m| m.contains(&format!("declares no storage collection `{collection}`"))
                ),
                "{refused}"
            );
        }
    }
    assert_eq!(
        attempt(&lines, "query bookmarks")["code"],
        "InvalidArgument"
    );
    for field in [
        "title\") OR 1=1 --",
        "url'; DROP TABLE posts; --",
        "$.token",
        "author",
        "meta.source",
        "meta/source",
    ] {
        let refused = attempt(&lines, &format!("query field {field}"));
        assert_eq!(refused["code"], "InvalidArgument", "{refused}");
        assert!(
            refused["message"]
                .as_str()
                .is_some_and(|m| m.contains("invalid query")),
            "{refused}"
        );
    }
    for attack in [
        "create with an SQL field name",
        "create oversized",
        "patch invalidating",
        "create stamped",
    ] {
        assert_eq!(
            attempt(&lines, attack)["code"],
            "InvalidArgument",
            "{attack}: {lines:#?}"
        );
    }
    assert!(
        attempt(&lines, "create stamped")["message"]
            .as_str()
            .is_some_and(|m| m.contains("`createdAt` is stamped by the store")),
        "{lines:#?}"
    );
    assert!(
        attempt(&lines, "create with an SQL field name")["message"]
            .as_str()
            .is_some_and(|m| m.contains("does not fit the schema of `marks`")),
        "{lines:#?}"
    );
    assert!(
        attempt(&lines, "create oversized")["message"]
            .as_str()
            .is_some_and(|m| m.contains("-byte limit")),
        "{lines:#?}"
    );
    assert!(
        attempt(&lines, "patch invalidating")["message"]
            .as_str()
            .is_some_and(|m| m.contains("/stars")),
        "{lines:#?}"
    );
    assert_eq!(
        attempt(&lines, "unit of no call")["code"],
        "PermissionDenied",
        "{lines:#?}"
    );
    // Every table is as it was, the plugins' records included.
    assert_eq!(table_digests(&h, ""), before);

    // SQL in a value is a value: stored verbatim, found by equality; no
    // table but the plugins' records changed.
    let lines = run_battery(
        plugin.pid,
        nix::sys::signal::Signal::SIGUSR2,
        &path,
        "values",
    );
    assert_eq!(attempt(&lines, "create with SQL in a value")["code"], "Ok");
    assert_eq!(
        attempt(&lines, "query by an SQL value")["urls"],
        json!(["x'); DROP TABLE posts; --"])
    );
    let mut expected = before.clone();
    expected.remove("plugin_records");
    assert_eq!(table_digests(&h, "plugin_records"), expected);
    let other = store(&h)
        .plugin_record("bookmark", "bookmarks", "b1")
        .expect("read")
        .expect("the other plugin's record is there");
    assert!(other.data.contains("Rust book"), "{}", other.data);
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
}
