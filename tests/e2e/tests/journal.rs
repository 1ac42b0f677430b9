//! The daemon under systemd's journal (issue 21 item 6): the real daemon,
//! its stderr named by `JOURNAL_STREAM` as systemd names it, sends native
//! journal records, and a turn's records carry `AGENT`, `CHANNEL` and `TURN`
//! while each call's closing record adds `TOOL`, `CALL` and `OUTCOME`, so
//! `journalctl AGENT=mira TURN=…` finds them.
//!
//! `tracing-journald` sends to the fixed `/run/systemd/journal/socket`: the
//! daemon runs in a private mount namespace (`unshare --mount`, as root, as
//! CI runs) where a tmpfs covers `/run` and the test's directory is bound
//! over `/run/systemd/journal`, so its datagrams reach the socket the test
//! bound. `JOURNAL_STREAM` is computed inside, from the pipe the harness
//! gave as stderr.

use std::collections::BTreeMap;
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use e2e::people::now_ms;
use e2e::scenario::{calls, reply, square_with};
use serde_json::json;

type Record = BTreeMap<String, Vec<String>>;

/// One datagram of journald's native protocol: `NAME=value\n`, or `NAME\n`,
/// a little-endian u64 length, the bytes and `\n`.
fn parse(datagram: &[u8]) -> Record {
    let mut record = Record::new();
    let mut rest = datagram;
    while let Some(end) = rest.iter().position(|&b| b == b'\n') {
        let line = &rest[..end];
        if let Some(eq) = line.iter().position(|&b| b == b'=') {
            record
                .entry(String::from_utf8_lossy(&line[..eq]).into_owned())
                .or_default()
                .push(String::from_utf8_lossy(&line[eq + 1..]).into_owned());
            rest = &rest[end + 1..];
        } else {
            let after = &rest[end + 1..];
            let len = u64::from_le_bytes(after[..8].try_into().expect("length")) as usize;
            record
                .entry(String::from_utf8_lossy(line).into_owned())
                .or_default()
                .push(String::from_utf8_lossy(&after[8..8 + len]).into_owned());
            rest = &after[8 + len + 1..];
        }
    }
    record
}

fn journal(dir: &Path) -> Receiver<Record> {
    let socket = UnixDatagram::bind(dir.join("socket")).expect("bind the journal socket");
    let (send, records) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 1 << 17];
        while let Ok(n) = socket.recv(&mut buffer) {
            if n > 0 && send.send(parse(&buffer[..n])).is_err() {
                break;
            }
        }
    });
    records
}

fn until(records: &Receiver<Record>, what: &str, wanted: impl Fn(&Record) -> bool) -> Record {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(record) = records.recv_timeout(left) else {
            break;
        };
        if wanted(&record) {
            return record;
        }
        seen.push(record.get("MESSAGE").cloned().unwrap_or_default());
    }
    panic!("no journal record {what}; saw messages {seen:#?}");
}

fn says(record: &Record, field: &str, value: &str) -> bool {
    record
        .get(field)
        .is_some_and(|values| values.iter().any(|v| v == value))
}

fn one<'a>(record: &'a Record, field: &str) -> &'a str {
    let values = record
        .get(field)
        .unwrap_or_else(|| panic!("no {field} in {record:#?}"));
    assert!(
        values.iter().all(|v| v == &values[0]),
        "{field} holds different values: {record:#?}"
    );
    &values[0]
}

#[tokio::test(flavor = "multi_thread")]
async fn i21_a_turns_records_reach_the_journal_with_agent_channel_turn_tool_call_and_outcome() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test mounts in a private namespace: run it as root, as CI does"
    );
    let h = e2e::Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    h.grant_mira(&["workspace"]);
    let journal_dir = h.dir.path().join("journal");
    std::fs::create_dir(&journal_dir).expect("journal dir");
    let records = journal(&journal_dir);

    let mut launcher = Command::new("unshare");
    launcher
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal \
             && mount --bind \"$0\" /run/systemd/journal \
             && JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) && export JOURNAL_STREAM \
             && exec \"$@\"",
        ])
        .arg(&journal_dir);
    let mut daemon = h.daemon_from(launcher);
    let listening = until(&records, "saying the agents listen", |r| {
        says(r, "MESSAGE", "agents are listening")
    });
    assert_eq!(one(&listening, "PRIORITY"), "6", "info is Informational");
    assert_eq!(one(&listening, "SYSLOG_IDENTIFIER"), "collegium");

    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("workspace__grep", json!({"pattern": "Friday"}))]),
            reply("Nothing about Friday yet."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira anything about Friday?").await;
    h.wait_post(&square, "mira", "Nothing about Friday yet.", since)
        .await;

    let started = until(&records, "of the turn starting", |r| {
        says(r, "MESSAGE", "turn started")
    });
    assert_eq!(one(&started, "AGENT"), "mira");
    assert_eq!(one(&started, "CHANNEL"), square);
    let turn = one(&started, "TURN").to_string();
    assert!(!turn.is_empty());
    let ended = until(&records, "closing the call", |r| {
        says(r, "MESSAGE", "tool call ended")
    });
    assert_eq!(one(&ended, "AGENT"), "mira");
    assert_eq!(one(&ended, "CHANNEL"), square);
    assert_eq!(one(&ended, "TURN"), turn);
    assert_eq!(one(&ended, "TOOL"), "workspace::grep");
    assert!(!one(&ended, "CALL").is_empty());
    // A grep of a workspace holding no file yet comes back refused (a
    // result the model reads): OUTCOME says so.
    assert_eq!(one(&ended, "OUTCOME"), "refused");
    assert_eq!(one(&ended, "PRIORITY"), "6");
    let closed = until(&records, "of the turn ending", |r| {
        says(r, "MESSAGE", "turn ended")
    });
    assert_eq!(one(&closed, "TURN"), turn);

    daemon.terminate();
    until(&records, "of the clean stop", |r| {
        says(r, "MESSAGE", "stopped cleanly")
    });
    assert!(
        daemon.logged().is_empty(),
        "records go to the journal, not to stderr as well"
    );
}
