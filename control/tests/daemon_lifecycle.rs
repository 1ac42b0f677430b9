//! `collegium run` as an operator starts it: the configuration is checked, the
//! store opened and migrated, the run recorded, and SIGTERM ends it with a
//! clean stop time in the store (§7.3).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use collegium_control::store::{LATEST_VERSION, Store};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A valid configuration whose state directory is `state`.
fn write_config(dir: &Path, state: &Path) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("tests/config/valid/minimal.toml"))
        .expect("read")
        .replace(
            "../resources",
            &repo().join("tests/config/resources").display().to_string(),
        )
        .replace(
            "main_channel = \"town-square\"\n",
            &format!(
                "main_channel = \"town-square\"\nstate_dir = \"{}\"\n",
                state.display()
            ),
        );
    let path = dir.join("collegium.toml");
    std::fs::write(&path, text).expect("write");
    path
}

type LogLines = Box<dyn Iterator<Item = String>>;

/// Starts the daemon and waits until it says it is running, returning the
/// process, its remaining log lines and the lines seen so far.
fn start_running(config: &Path) -> (Child, LogLines, Vec<serde_json::Value>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_collegium"))
        .args(["run", "--config", config.to_str().expect("utf-8")])
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines: LogLines = Box::new(BufReader::new(stderr).lines().map(|l| l.expect("line")));
    let seen = wait_for_log(&mut lines, "collegium is running");
    (child, lines, seen)
}

/// Reads JSON log lines until one whose message contains `needle`.
fn wait_for_log(lines: &mut impl Iterator<Item = String>, needle: &str) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        let Some(line) = lines.next() else { break };
        let value: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
        let found = value["message"]
            .as_str()
            .is_some_and(|m| m.contains(needle));
        seen.push(value);
        if found {
            return seen;
        }
    }
    panic!("no log line containing {needle:?}; saw {seen:#?}");
}

fn terminate(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[test]
fn the_daemon_runs_and_stops_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let config = write_config(dir.path(), &state);

    let (mut child, mut lines, seen) = start_running(&config);
    assert!(
        seen.iter()
            .any(|v| v["message"] == "first run against this store"),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .all(|v| v["level"].is_string() && v["timestamp"].is_string()),
        "logs are JSON objects with a level and a time: {seen:#?}"
    );

    terminate(&child);
    wait_for_log(&mut lines, "stopped cleanly");
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");

    let store_path = state.join("collegium.db");
    let mode = std::fs::metadata(&state).expect("state").permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o700
    );
    let store = Store::open(&store_path).expect("store");
    assert_eq!(store.schema_version().expect("version"), LATEST_VERSION);
    let run = store
        .previous_run("a boot id that is not the daemon's")
        .expect("query")
        .expect("the run was recorded");
    let stopped = run.stopped_at.expect("a clean stop time");
    assert!(stopped >= run.started_at);
    drop(store);

    // A second run reads the first one's clean stop.
    let (mut child, _lines, seen) = start_running(&config);
    assert!(
        seen.iter()
            .any(|v| v["message"] == "previous run stopped cleanly"),
        "{seen:#?}"
    );
    terminate(&child);
    assert!(child.wait().expect("wait").success());
}

#[test]
fn a_refused_configuration_does_not_start_and_names_each_problem() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = repo().join("tests/config/invalid/every-structural-problem-at-once.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_collegium"))
        .args(["run", "--config", config.to_str().expect("utf-8")])
        .current_dir(dir.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the configuration is refused"), "{stderr}");
    assert!(stderr.contains("limits.action_budget"), "{stderr}");
    assert!(stderr.contains("agents[0].grants[0]"), "{stderr}");
}

#[test]
fn a_store_newer_than_the_daemon_refuses_boot_naming_both_versions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    std::fs::create_dir(&state).expect("mkdir");
    let store_path = state.join("collegium.db");
    drop(Store::open(&store_path).expect("open"));
    let conn = rusqlite::Connection::open(&store_path).expect("raw");
    conn.pragma_update(None, "user_version", LATEST_VERSION + 3)
        .expect("bump");
    drop(conn);

    let config = write_config(dir.path(), &state);
    let out = Command::new(env!("CARGO_BIN_EXE_collegium"))
        .args(["run", "--config", config.to_str().expect("utf-8")])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("schema version {}", LATEST_VERSION + 3))
            && stderr.contains(&format!("(version {LATEST_VERSION})")),
        "{stderr}"
    );
}

/// Answers every HTTP request with 401 and an OpenAI-shaped error, as a
/// provider refusing the key does.
fn refusing_provider() -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buffer = [0u8; 8192];
            let _ = stream.read(&mut buffer);
            let body = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    addr
}

#[test]
fn a_model_that_refuses_its_credential_refuses_boot_naming_the_agents_it_strands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let config = write_config(dir.path(), &state);
    let provider = refusing_provider();
    let text = std::fs::read_to_string(&config)
        .expect("read")
        .replace("http://127.0.0.1:9/v1", &format!("http://{provider}/v1"));
    std::fs::write(&config, text).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_collegium"))
        .args(["run", "--config", config.to_str().expect("utf-8")])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("model `sim` refused its credential; it strands mira"),
        "{stderr}"
    );
    assert!(!stderr.contains("collegium is running"), "{stderr}");
}

#[test]
fn an_unreachable_model_is_recorded_unverified_and_boot_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let config = write_config(dir.path(), &state);
    let (mut child, mut lines, seen) = start_running(&config);
    let unverified = seen
        .iter()
        .find(|v| v["message"] == "model unverified at boot")
        .unwrap_or_else(|| panic!("no unverified record: {seen:#?}"));
    assert_eq!(unverified["model"], "sim");
    assert_eq!(
        unverified["reason"],
        "provider outage: the provider refused the connection"
    );
    assert!(!seen.iter().any(|v| v["message"] == "model verified"));
    terminate(&child);
    wait_for_log(&mut lines, "stopped cleanly");
    assert!(child.wait().expect("wait").success());
}
