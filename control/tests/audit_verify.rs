//! `collegium audit verify FILE [--store STORE]` (ARCHITECTURE §4): a
//! worker's log against its chain and the anchors the daemon stored.

use std::path::Path;
use std::process::Command;

use collegium_control::store::Store;
use collegium_control::store::worker_calls::{AuditAnchor, CallEnd, NewWorkerCall};
use collegium_worker_kit::audit::{AuditLog, Outcome, Record, digest};

/// A log of `calls` calls by worker `mail`, each anchored in the store as
/// the daemon anchors it.
fn logged(dir: &Path, calls: u32) -> (std::path::PathBuf, std::path::PathBuf) {
    let log_path = dir.join("mail.audit.jsonl");
    let store_path = dir.join("collegium.db");
    let store = Store::open(&store_path).expect("store");
    let mut log = AuditLog::open(&log_path, "mail").expect("log");
    for n in 1..=calls {
        let anchor = log
            .append(Record {
                agent: "theo".into(),
                turn: "turn-1".into(),
                call: format!("call-{n}"),
                tool: "mail::send".into(),
                arguments_sha256: digest(b"{}"),
                decision: format!("decision-{n}"),
                outcome: Outcome::Success,
                detail: String::new(),
                duration_ms: 12,
            })
            .expect("append");
        let call_id = format!("call-{n}");
        store
            .record_dispatch(&NewWorkerCall {
                call_id: call_id.clone(),
                turn_id: "turn-1".into(),
                agent: "theo".into(),
                worker: "mail".into(),
                tool: "mail::send".into(),
                arguments_sha256: digest(b"{}"),
                decision_id: Some(format!("decision-{n}")),
                retryable: false,
                dispatched_at: 1_800_000_000_000,
            })
            .expect("dispatched");
        store
            .record_call_end(
                &call_id,
                CallEnd::Success,
                Some(&AuditAnchor {
                    seq: anchor.seq,
                    hash: anchor.hash,
                }),
                None,
                1_800_000_000_012,
            )
            .expect("anchor");
    }
    (log_path, store_path)
}

fn verify(log: &Path, store: Option<&Path>) -> (bool, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_collegium"));
    command.args(["audit", "verify"]).arg(log);
    if let Some(store) = store {
        command.arg("--store").arg(store).args(["--worker", "mail"]);
    }
    let out = command.output().expect("run collegium");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn arch4_a_clean_log_is_proven_against_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, store) = logged(dir.path(), 4);
    let (ok, out) = verify(&log, Some(&store));
    assert!(ok, "{out}");
    assert!(out.contains("4 lines from worker 'mail'"), "{out}");
    assert!(out.contains("line 4 is the one"), "{out}");
}

#[test]
fn arch4_without_the_store_the_report_says_what_it_cannot_see() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, _) = logged(dir.path(), 2);
    let (ok, out) = verify(&log, None);
    assert!(ok, "{out}");
    assert!(out.contains("cannot be detected"), "{out}");
}

#[test]
fn arch4_a_truncated_tail_fails_naming_the_first_missing_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, store) = logged(dir.path(), 4);
    let text = std::fs::read_to_string(&log).expect("read");
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&log, format!("{}\n", kept.join("\n"))).expect("truncate");
    let (ok, out) = verify(&log, Some(&store));
    assert!(!ok, "{out}");
    assert!(out.contains("line 3: missing"), "{out}");
    assert!(out.contains("cut off the end"), "{out}");
}

#[test]
fn arch4_an_edited_line_fails_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, store) = logged(dir.path(), 4);
    let text = std::fs::read_to_string(&log).expect("read");
    std::fs::write(&log, text.replacen("decision-2", "decision-7", 1)).expect("edit");
    let (ok, out) = verify(&log, Some(&store));
    assert!(!ok, "{out}");
    assert!(out.contains("line 2: "), "{out}");
}

#[test]
fn arch4_a_store_the_daemon_never_migrated_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, _) = logged(dir.path(), 1);
    let old = dir.path().join("old.db");
    rusqlite::Connection::open(&old)
        .expect("open")
        .pragma_update(None, "user_version", 4)
        .expect("version");
    let (ok, out) = verify(&log, Some(&old));
    assert!(!ok, "{out}");
    assert!(
        out.contains("schema version 4; this needs version 5"),
        "{out}"
    );
}

#[test]
fn arch4_an_emptied_log_or_one_rewritten_under_another_name_fails_against_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, store) = logged(dir.path(), 3);
    std::fs::write(&log, "").expect("empty it");
    let (ok, out) = verify(&log, Some(&store));
    assert!(!ok, "{out}");
    assert!(out.contains("line 1: missing"), "{out}");

    // A whole new chain under another worker's name.
    let other = dir.path().join("other.jsonl");
    let mut forged = AuditLog::open(&other, "x").expect("log");
    for n in 1..=3 {
        forged
            .append(Record {
                agent: "theo".into(),
                turn: "turn-1".into(),
                call: format!("call-{n}"),
                tool: "mail::send".into(),
                arguments_sha256: digest(b"{}"),
                decision: String::new(),
                outcome: Outcome::Success,
                detail: String::new(),
                duration_ms: 1,
            })
            .expect("append");
    }
    let (ok, out) = verify(&other, Some(&store));
    assert!(!ok, "{out}");
}

#[test]
fn arch4_the_store_needs_the_worker_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, store) = logged(dir.path(), 1);
    let out = Command::new(env!("CARGO_BIN_EXE_collegium"))
        .args(["audit", "verify"])
        .arg(&log)
        .arg("--store")
        .arg(&store)
        .output()
        .expect("run collegium");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--worker"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
