//! `collegium audit show` end to end through the real binary (issue 21
//! item 7): a log the real writer wrote, a store the real `Store` filled,
//! the flags as an administrator types them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use collegium_control::store::decisions::NewDecision;
use collegium_control::store::worker_calls::{AuditAnchor, CallEnd, NewWorkerCall};
use collegium_control::store::{ChannelKind, NewTurn, ObservedChannel, Store, TurnCause};
use collegium_worker_kit::audit::{AuditLog, Outcome, Record, digest};

/// One call of `mail::send` by theo, approved by @ana in ~town-square.
fn logged(dir: &Path) -> (PathBuf, PathBuf) {
    let log_path = dir.join("mail.audit.jsonl");
    let store_path = dir.join("collegium.db");
    let store = Store::open(&store_path).expect("store");
    store
        .record_channel(&ObservedChannel {
            id: "chan-1".into(),
            name: "town-square".into(),
            display_name: "Town Square".into(),
            kind: ChannelKind::Open,
        })
        .expect("channel");
    store
        .open_turn(&NewTurn {
            id: "turn-1".into(),
            agent: "theo".into(),
            channel_id: "chan-1".into(),
            boot_id: "boot".into(),
            started_at: 1_800_000_000_000,
            cause: TurnCause::Post,
            answers_post_id: None,
            depth: 0,
            chain_root: "turn-1".into(),
            chain_length: 1,
            model: "m".into(),
        })
        .expect("turn");
    store
        .open_decision(&NewDecision {
            id: "decision-1".into(),
            turn_id: "turn-1".into(),
            call_id: "call_1".into(),
            agent: "theo".into(),
            channel_id: "chan-1".into(),
            kind: "approval".into(),
            tool: Some("mail::send".into()),
            payload: "{}".into(),
            choices: Vec::new(),
            requested_at: 1_800_000_000_100,
        })
        .expect("decision");
    store
        .set_prompt_post("decision-1", "prompt-1")
        .expect("post");
    store
        .decide("decision-1", "approved", "ana", None, 1_800_000_060_000)
        .expect("decide");
    store
        .record_dispatch(&NewWorkerCall {
            call_id: "turn-1/call_1".into(),
            turn_id: "turn-1".into(),
            agent: "theo".into(),
            worker: "mail".into(),
            tool: "mail::send".into(),
            arguments_sha256: digest(b"{}"),
            decision_id: Some("decision-1".into()),
            retryable: false,
            dispatched_at: 1_800_000_061_000,
        })
        .expect("dispatch");
    let mut log = AuditLog::open(&log_path, "mail").expect("log");
    let anchor = log
        .append(Record {
            agent: "theo".into(),
            turn: "turn-1".into(),
            call: "turn-1/call_1".into(),
            tool: "mail::send".into(),
            arguments_sha256: digest(b"{}"),
            decision: "decision-1".into(),
            outcome: Outcome::Success,
            detail: String::new(),
            duration_ms: 7,
        })
        .expect("append");
    store
        .record_call_end(
            "turn-1/call_1",
            CallEnd::Success,
            Some(&AuditAnchor {
                seq: anchor.seq,
                hash: anchor.hash,
            }),
            None,
            1_800_000_061_007,
        )
        .expect("anchor");
    (log_path, store_path)
}

fn show(log: &Path, store: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_collegium"))
        .args(["audit", "show"])
        .arg(log)
        .arg("--store")
        .arg(store)
        .args(["--worker", "mail"])
        .args(extra)
        .output()
        .expect("run collegium")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn i21_7_the_binary_shows_a_verified_log_joined_with_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, store) = logged(dir.path());
    let before = std::fs::read(&store).expect("read");

    let out = show(&log, &store, &[]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("line 1 is the one"), "{stdout}");
    assert!(
        stdout.contains(
            "approved by @ana at 2027-01-15 08:01:00.000 UTC in ~town-square /_redirect/pl/prompt-1"
        ),
        "{stdout}"
    );

    let out = show(
        &log,
        &store,
        &["--json", "--agent", "theo", "--since", "2020-01-01"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let object: serde_json::Value =
        serde_json::from_str(text(&out.stdout).trim()).expect("one JSON line");
    assert_eq!(object["approval"]["decided_by"], "ana");
    assert!(
        text(&out.stderr).contains("1 of 1 lines shown"),
        "{}",
        text(&out.stderr)
    );

    assert_eq!(std::fs::read(&store).expect("read"), before, "read-only");
}

#[test]
fn i21_7_a_bad_flag_value_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, store) = logged(dir.path());
    for (flag, value) in [
        ("--since", "last tuesday"),
        ("--until", "2026-02-30"),
        ("--outcome", "ok"),
    ] {
        let out = show(&log, &store, &[flag, value]);
        assert!(!out.status.success());
        assert!(out.stdout.is_empty());
        let stderr = text(&out.stderr);
        assert!(stderr.contains(&format!("for '{flag} ")), "{stderr}");
    }
}

#[test]
fn i21_7_the_binary_refuses_a_tampered_log_before_showing_anything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (log, store) = logged(dir.path());
    let written = std::fs::read_to_string(&log).expect("read");
    std::fs::write(
        &log,
        written.replacen("\"duration_ms\":7", "\"duration_ms\":8", 1),
    )
    .expect("tamper");
    let out = show(&log, &store, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(&format!("{}: line 1: ", log.display())),
        "{stdout}"
    );
    assert!(!stdout.contains("#1"), "{stdout}");
}
