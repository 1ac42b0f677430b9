//! The official `openai` and `anthropic` Python SDKs stream completions with
//! tool calls (and reasoning) from the simulator, under their strict response
//! validation too, and surface injected 429 and 401 answers as their typed
//! exceptions (`clients/python/sdk_stream.py`, pinned in its
//! `requirements.txt`, installed by `tests/setup.sh`). If they cannot parse
//! it, the simulator is wrong, and so would be the adapters tested against it.

use std::path::{Path, PathBuf};

fn client_python() -> PathBuf {
    let python = std::env::var_os("COLLEGIUM_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/collegium-tools/venv/bin/python"));
    assert!(
        python.exists(),
        "{} does not exist: run tests/setup.sh, which installs the official SDKs",
        python.display()
    );
    python
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_openai_and_anthropic_sdks_parse_the_simulators_streams() {
    let running = model_sim::start("127.0.0.1:0".parse().expect("addr"), false)
        .await
        .expect("start");
    let script = Path::new(
        &*std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("clients/python/sdk_stream.py");
    let output = tokio::process::Command::new(client_python())
        .arg(script)
        .args(["--url", &running.url])
        .output()
        .await
        .expect("run the SDK script");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the SDKs failed:\n{stdout}\n{stderr}"
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("sdk-stream:"))
        .unwrap_or_default();
    assert!(summary.ends_with(" 0 failed"), "{stdout}");
    let passed: u32 = summary
        .trim_start_matches("sdk-stream: ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_default();
    assert!(passed >= 15, "too few SDK checks ran: {summary}");
}
