//! The audit log's chain and its anchor (ARCHITECTURE §4): a clean log
//! verifies; an edited, removed, reordered or cut-off line is found, and the
//! first bad line is named.

use std::path::Path;

use collegium_worker_kit::audit::{Anchor, AuditError, AuditLog, Outcome, Record, digest, verify};

fn record(n: u32) -> Record {
    Record {
        agent: "mira".into(),
        turn: format!("turn-{n}"),
        call: format!("call-{n}"),
        tool: "fixture::read".into(),
        arguments_sha256: digest(format!("{{\"n\":{n}}}").as_bytes()),
        decision: String::new(),
        outcome: Outcome::Success,
        detail: String::new(),
        duration_ms: 3,
    }
}

/// A log of five calls and the anchor the daemon would hold for it.
fn five_calls(path: &Path) -> Anchor {
    let mut log = AuditLog::open(path, "fixture").expect("open");
    let mut anchor = None;
    for n in 1..=5 {
        anchor = Some(log.append(record(n)).expect("append"));
    }
    anchor.expect("five lines")
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).expect("write");
}

fn first_bad_line(error: AuditError) -> (u64, String) {
    match error {
        AuditError::Bad { line, reason, .. } => (line, reason),
        other => panic!("expected a bad line, got {other}"),
    }
}

#[test]
fn arch4_a_clean_log_verifies_with_and_without_its_anchor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let anchor = five_calls(&path);
    let verified = verify(&path, Some(&anchor)).expect("clean");
    assert_eq!(verified.lines, 5);
    assert_eq!(verified.worker.as_deref(), Some("fixture"));
    assert_eq!(verified.head, Some(anchor));
    let line: serde_json::Value = serde_json::from_str(&lines(&path)[2]).expect("json");
    assert_eq!(line["seq"], 3);
    assert_eq!(line["call"], "call-3");
    assert_eq!(line["outcome"], "success");
}

#[test]
fn arch4_a_reopened_log_continues_the_chain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    five_calls(&path);
    let mut log = AuditLog::open(&path, "fixture").expect("reopen");
    assert_eq!(log.head().seq, 5);
    let anchor = log.append(record(6)).expect("append");
    assert_eq!(anchor.seq, 6);
    assert_eq!(verify(&path, Some(&anchor)).expect("clean").lines, 6);
}

#[test]
fn arch4_the_log_file_is_readable_by_its_owner_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    five_calls(&path);
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn arch4_an_edited_line_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let anchor = five_calls(&path);
    let mut all = lines(&path);
    all[1] = all[1].replace("\"agent\":\"mira\"", "\"agent\":\"theo\"");
    write_lines(&path, &all);
    let (line, reason) = first_bad_line(verify(&path, Some(&anchor)).expect_err("edited"));
    assert_eq!(line, 2, "{reason}");
    assert!(reason.contains("line 2 was edited"), "{reason}");
}

#[test]
fn arch4_an_edited_last_line_is_found_by_the_anchor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let anchor = five_calls(&path);
    let mut all = lines(&path);
    all[4] = all[4].replace("\"outcome\":\"success\"", "\"outcome\":\"failure\"");
    write_lines(&path, &all);
    assert!(verify(&path, None).is_ok(), "the chain alone cannot see it");
    let (line, reason) = first_bad_line(verify(&path, Some(&anchor)).expect_err("edited"));
    assert_eq!(line, 5, "{reason}");
    assert!(reason.contains("the store recorded"), "{reason}");
}

#[test]
fn arch4_a_removed_line_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let anchor = five_calls(&path);
    let mut all = lines(&path);
    all.remove(2);
    write_lines(&path, &all);
    let (line, reason) = first_bad_line(verify(&path, Some(&anchor)).expect_err("removed"));
    assert_eq!(line, 3, "{reason}");
    assert!(reason.contains("sequence number 4"), "{reason}");
}

#[test]
fn arch4_swapped_lines_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let anchor = five_calls(&path);
    let mut all = lines(&path);
    all.swap(1, 3);
    write_lines(&path, &all);
    let (line, reason) = first_bad_line(verify(&path, Some(&anchor)).expect_err("swapped"));
    assert_eq!(line, 2, "{reason}");
    assert!(reason.contains("reordered"), "{reason}");
}

#[test]
fn arch4_a_truncated_tail_is_found_only_with_the_anchor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let anchor = five_calls(&path);
    let all = lines(&path);
    write_lines(&path, &all[..3]);
    assert_eq!(
        verify(&path, None)
            .expect("a shorter chain is a chain")
            .lines,
        3
    );
    let (line, reason) = first_bad_line(verify(&path, Some(&anchor)).expect_err("cut"));
    assert_eq!(line, 4, "{reason}");
    assert!(reason.contains("cut off the end"), "{reason}");
}

#[test]
fn arch4_a_line_cut_mid_way_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    five_calls(&path);
    let text = std::fs::read_to_string(&path).expect("read");
    std::fs::write(&path, &text[..text.len() - 20]).expect("cut");
    let (line, reason) = first_bad_line(verify(&path, None).expect_err("cut"));
    assert_eq!(line, 5, "{reason}");
    assert!(reason.contains("cut off"), "{reason}");
}

#[test]
fn arch4_a_worker_never_extends_a_tampered_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    five_calls(&path);
    let mut all = lines(&path);
    all.remove(0);
    write_lines(&path, &all);
    match AuditLog::open(&path, "fixture") {
        Err(AuditError::Bad { line: 1, .. }) => {}
        Err(other) => panic!("wrong refusal: {other}"),
        Ok(_) => panic!("opened a tampered log"),
    }
}

#[test]
fn arch4_a_worker_never_extends_another_workers_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    five_calls(&path);
    match AuditLog::open(&path, "mail") {
        Err(AuditError::Bad {
            line: 1, reason, ..
        }) => {
            assert_eq!(reason, "written by worker 'fixture', not 'mail'");
        }
        Err(other) => panic!("wrong refusal: {other}"),
        Ok(_) => panic!("opened another worker's log"),
    }
}
