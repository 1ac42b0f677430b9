//! A real, third-party Mattermost client library drives the simulator: the
//! `mattermostdriver` Python package (pinned in
//! `clients/python/requirements.txt`, installed by `tests/setup.sh`) logs in,
//! creates a bot and its token, posts, pages, reacts, pins, uploads a file and
//! reads `posted` off its websocket. A shape it cannot parse is a simulator
//! bug.

mod support;

use std::path::{Path, PathBuf};

/// The Python with the client installed: `COLLEGIUM_PYTHON`, else where
/// `tests/setup.sh` puts it.
fn client_python() -> PathBuf {
    let python = std::env::var_os("COLLEGIUM_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/collegium-tools/venv/bin/python"));
    assert!(
        python.exists(),
        "{} does not exist: run tests/setup.sh, which installs the Python Mattermost client",
        python.display()
    );
    python
}

#[tokio::test(flavor = "multi_thread")]
async fn the_mattermostdriver_python_client_drives_the_simulator() {
    let running = support::start().await;
    let script = Path::new(
        &*std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("clients/python/drive_simulator.py");
    let output = tokio::process::Command::new(client_python())
        .arg(script)
        .args(["--url", &running.url])
        .output()
        .await
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the client failed:\n{stdout}\n{stderr}"
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("python-driver:"))
        .unwrap_or_default();
    assert!(summary.ends_with(" 0 failed"), "{stdout}");
    let passed: u32 = summary
        .trim_start_matches("python-driver: ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_default();
    assert!(passed >= 20, "too few client checks ran: {summary}");
}
