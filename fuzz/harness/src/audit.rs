//! The audit-log reader (ARCHITECTURE §4): worker-kit's chain check and
//! the daemon's `audit verify` and `audit show` (control/src/workers/audit)
//! on any file. Properties: `show` shows nothing from a log `verify`
//! refuses; with `--json`, what it writes is JSON lines and nothing else;
//! and a log the worker wrote (records made of the input) verifies against
//! its head anchor, while the same log with any one byte changed does not.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use collegium_control::workers::audit::show::{Show, show};
use collegium_control::workers::audit::verify;
use collegium_worker_kit::audit::{self, AuditLog, Outcome, Record};

use crate::split;

fn dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    // TMPDIR chooses where; a memory-backed one keeps each run's writes
    // and syncs cheap.
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory for the fuzzed logs"))
        .path()
}

/// A file of this thread's own: the replay test runs targets in parallel.
fn file(name: &str) -> PathBuf {
    dir().join(format!("{name}-{:?}.log", std::thread::current().id()))
}

fn write(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::File::create(path).expect("create the fuzzed log");
    f.write_all(bytes).expect("write the fuzzed log");
}

fn read_any(raw: &[u8], json: bool) {
    let path = file("raw");
    write(&path, raw);
    let verified = verify(&path, None);
    let request = Show {
        file: path.clone(),
        json,
        ..Show::default()
    };
    let (mut out, mut note) = (Vec::new(), Vec::new());
    let shown = show(&request, &mut out, &mut note);
    match (&verified, &shown) {
        (Err(_), Ok(())) => panic!("show showed a log verify refuses"),
        (Err(_), Err(_)) => assert!(out.is_empty(), "lines shown from a refused log"),
        _ => {}
    }
    if json && shown.is_ok() {
        for line in String::from_utf8_lossy(&out).lines() {
            assert!(
                serde_json::from_str::<serde_json::Value>(line).is_ok(),
                "--json wrote a line that is not JSON: {line:?}"
            );
        }
    }
}

fn outcome(byte: u8) -> Outcome {
    match byte % 7 {
        0 => Outcome::Success,
        1 => Outcome::Refusal,
        2 => Outcome::InvalidArguments,
        3 => Outcome::Unresolved,
        4 => Outcome::Failure,
        5 => Outcome::GrantRefused,
        _ => Outcome::Abandoned,
    }
}

fn chain(selector: u8, data: &[u8]) {
    let parts = split::parts(data, 6);
    let path = file("chain");
    let _ = std::fs::remove_file(&path);
    let worker = split::text(parts[0]);
    let mut log = AuditLog::open(&path, &worker).expect("a fresh log opens");
    let records = usize::from(selector % 3) + 1;
    let mut head = None;
    for n in 0..records {
        let record = Record {
            agent: split::text(parts[1]),
            turn: format!("turn-{n}"),
            call: split::text(parts[2]),
            tool: split::text(parts[3]),
            arguments_sha256: audit::digest(parts[4]),
            decision: String::new(),
            outcome: outcome(selector.wrapping_add(n as u8)),
            detail: split::text(parts[5]),
            duration_ms: u64::from(selector),
        };
        head = Some(log.append(record).expect("an append to a fresh log"));
    }
    drop(log);
    let head = head.expect("at least one record");
    let verified = match audit::verify(&path, Some(&head)) {
        Ok(verified) => verified,
        Err(e) => panic!("a log the worker wrote does not verify: {e}"),
    };
    assert_eq!(verified.lines, records as u64);
    assert_eq!(verified.head.as_ref(), Some(&head));

    let mut bytes = std::fs::read(&path).expect("read the log back");
    let at = parts[4].iter().fold(usize::from(selector), |acc, b| {
        acc.wrapping_mul(31).wrapping_add(usize::from(*b))
    }) % bytes.len();
    bytes[at] ^= parts[5].first().copied().filter(|b| *b != 0).unwrap_or(1);
    write(&path, &bytes);
    assert!(
        audit::verify(&path, Some(&head)).is_err(),
        "byte {at} of the log was changed and the log still verifies against its anchor"
    );
}

pub fn run(data: &[u8]) {
    let (selector, rest) = split::selector(data);
    read_any(rest, selector & 1 == 1);
    chain(selector, rest);
}
