//! Logging under systemd (issue 21 item 6), with the real worker binary as
//! the process under test: when `JOURNAL_STREAM` names its stderr, each
//! record goes to journald's socket in the native protocol, its fields
//! structured and its `PRIORITY` mapped from the level; when it does not,
//! stderr carries one JSON object a line.
//!
//! `tracing-journald` sends to the fixed path `/run/systemd/journal/socket`,
//! so the journal test runs the worker in a private mount namespace
//! (`unshare --mount`, which CI's root may do) where a fresh tmpfs covers
//! `/run` and the test's own directory is bound over `/run/systemd/journal`:
//! the worker's datagrams reach the socket the test bound, and the host's
//! journal (if any) is never touched.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

const WORKER: &str = env!("CARGO_BIN_EXE_collegium-worker-pdf");

/// A uid no test runs as: a connection from the test is refused, which the
/// worker logs as a warning.
const SERVED_UID: &str = "4242";

/// The worker refuses root: under a root test it runs as `nobody`, as
/// `setpriv` makes it (the last step, after any mount).
const AS_NOBODY: [&str; 4] = [
    "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
];

/// One journal record: each field with every value it was given.
type Record = BTreeMap<String, Vec<String>>;

/// Parses one datagram of journald's native protocol: `NAME=value\n`, or
/// `NAME\n` then a little-endian u64 length, the value's bytes and `\n`.
fn parse(datagram: &[u8]) -> Record {
    let mut record = Record::new();
    let mut rest = datagram;
    while !rest.is_empty() {
        let line_end = rest
            .iter()
            .position(|&b| b == b'\n')
            .expect("every field ends in a newline");
        let line = &rest[..line_end];
        if let Some(eq) = line.iter().position(|&b| b == b'=') {
            let name = String::from_utf8_lossy(&line[..eq]).into_owned();
            let value = String::from_utf8_lossy(&line[eq + 1..]).into_owned();
            record.entry(name).or_default().push(value);
            rest = &rest[line_end + 1..];
        } else {
            let name = String::from_utf8_lossy(line).into_owned();
            let after = &rest[line_end + 1..];
            let len_bytes: [u8; 8] = after[..8].try_into().expect("a length");
            let len = usize::try_from(u64::from_le_bytes(len_bytes)).expect("length");
            let value = String::from_utf8_lossy(&after[8..8 + len]).into_owned();
            assert_eq!(after[8 + len], b'\n', "a binary field ends in a newline");
            record.entry(name).or_default().push(value);
            rest = &after[8 + len + 1..];
        }
    }
    record
}

/// Binds `dir/socket` as journald would; every non-empty datagram, parsed.
fn journal(dir: &Path) -> Receiver<Record> {
    let path = dir.join("socket");
    let socket = UnixDatagram::bind(&path).expect("bind the journal socket");
    // Anyone may log, as journald's own socket allows.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let (send, records) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 1 << 16];
        while let Ok(n) = socket.recv(&mut buffer) {
            // The layer's probe at start is an empty datagram.
            if n == 0 {
                continue;
            }
            if send.send(parse(&buffer[..n])).is_err() {
                break;
            }
        }
    });
    records
}

/// The worker, its stderr in `stderr_file`, with `JOURNAL_STREAM` as given;
/// `launcher` runs it (directly, or in a mount namespace). Returns once the
/// worker says `ready`.
fn start(mut launcher: Command, dir: &Path, journal_stream: &str) -> Child {
    // The worker, as nobody, writes its socket and audit log here.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let stderr = std::fs::File::create(dir.join("stderr")).expect("stderr file");
    launcher
        .arg(WORKER)
        .args(["serve", "--socket"])
        .arg(dir.join("pdf.sock"))
        .arg("--audit")
        .arg(dir.join("pdf.audit.jsonl"))
        .args(["--allow-uid", SERVED_UID])
        .env("JOURNAL_STREAM", journal_stream)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    let mut child = launcher.spawn().expect("the worker starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("ready line");
    assert_eq!(
        line.trim(),
        "ready",
        "the worker did not start; it said: {}",
        std::fs::read_to_string(dir.join("stderr")).unwrap_or_default()
    );
    child
}

/// `dev:ino` of a file, as systemd writes `JOURNAL_STREAM`.
fn identity(path: &Path) -> String {
    let meta = std::fs::metadata(path).expect("stat");
    format!("{}:{}", meta.dev(), meta.ino())
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

/// Records until one satisfies `wanted`, failing after ten seconds.
fn until(records: &Receiver<Record>, wanted: impl Fn(&Record) -> bool) -> Record {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(record) = records.recv_timeout(left) else {
            break;
        };
        if wanted(&record) {
            return record;
        }
        seen.push(record);
    }
    panic!("no such journal record; saw {seen:#?}");
}

fn one<'a>(record: &'a Record, field: &str) -> &'a str {
    match record.get(field).map(Vec::as_slice) {
        Some([value]) => value,
        other => panic!("{field} should hold one value, holds {other:?} in {record:#?}"),
    }
}

fn message_is(text: &'static str) -> impl Fn(&Record) -> bool {
    move |r| {
        r.get("MESSAGE")
            .is_some_and(|m| m.iter().any(|v| v == text))
    }
}

#[test]
fn i21_stderr_the_journal_sends_native_records_with_fields_and_mapped_priority() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test mounts in a private namespace: run it as root, as CI does"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let journal_dir = dir.path().join("journal");
    std::fs::create_dir(&journal_dir).expect("journal dir");
    let records = journal(&journal_dir);
    // stderr is this file; JOURNAL_STREAM names it, as systemd would.
    std::fs::File::create(dir.path().join("stderr")).expect("stderr file");
    let stream = identity(&dir.path().join("stderr"));

    let mut launcher = Command::new("unshare");
    launcher.args([
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal \
         && mount --bind \"$0\" /run/systemd/journal \
         && exec setpriv --reuid=65534 --regid=65534 --clear-groups \"$@\"",
    ]);
    launcher.arg(&journal_dir);
    let worker = start(launcher, dir.path(), &stream);
    // The file is the same one start() created: JOURNAL_STREAM still names it.
    assert_eq!(identity(&dir.path().join("stderr")), stream);

    let serving = until(&records, message_is("serving"));
    assert_eq!(one(&serving, "PRIORITY"), "6", "info is Informational");
    assert_eq!(one(&serving, "SYSLOG_IDENTIFIER"), "collegium-worker-pdf");
    assert_eq!(
        one(&serving, "SOCKET"),
        dir.path().join("pdf.sock").display().to_string(),
        "a field is structured, upcased and unprefixed"
    );
    assert!(serving.contains_key("CODE_FILE") && serving.contains_key("TARGET"));

    // A connection from a uid the worker does not serve is a warning.
    let _refused = UnixStream::connect(dir.path().join("pdf.sock")).expect("connect");
    let warning = until(
        &records,
        message_is("refused a connection from a uid this worker does not serve"),
    );
    assert_eq!(one(&warning, "PRIORITY"), "4", "warn is Warning");
    assert_eq!(one(&warning, "UID"), "0");
    stop(worker);

    let stderr = std::fs::read_to_string(dir.path().join("stderr")).expect("stderr");
    assert!(
        !stderr.contains("serving"),
        "records go to the journal, not to stderr as well: {stderr}"
    );
}

#[test]
fn i21_journal_stream_not_naming_stderr_gives_json_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Another file's identity: stderr was redirected after systemd set it.
    let other = dir.path().join("other");
    std::fs::write(&other, "").expect("other file");
    let launcher = if nix::unistd::geteuid().is_root() {
        let mut setpriv = Command::new(AS_NOBODY[0]);
        setpriv.args(&AS_NOBODY[1..]);
        setpriv
    } else {
        Command::new("env")
    };
    let worker = start(launcher, dir.path(), &identity(&other));
    let _refused = UnixStream::connect(dir.path().join("pdf.sock")).expect("connect");
    let deadline = Instant::now() + Duration::from_secs(10);
    let refused = "refused a connection from a uid this worker does not serve";
    while Instant::now() < deadline
        && !std::fs::read_to_string(dir.path().join("stderr"))
            .unwrap_or_default()
            .contains(refused)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop(worker);

    let stderr = std::fs::read_to_string(dir.path().join("stderr")).expect("stderr");
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let serving = lines
        .iter()
        .find(|l| l["message"] == "serving")
        .unwrap_or_else(|| panic!("no serving line in {lines:#?}"));
    assert_eq!(serving["level"], "INFO");
    assert_eq!(
        serving["socket"],
        dir.path().join("pdf.sock").display().to_string()
    );
    let warning = lines
        .iter()
        .find(|l| l["message"] == refused)
        .unwrap_or_else(|| panic!("no refusal line in {lines:#?}"));
    assert_eq!(warning["level"], "WARN");
    assert_eq!(warning["uid"], 0);
}
