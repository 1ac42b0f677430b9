//! `collegium run` refusing to start before it reaches anything outside
//! itself: a configuration with problems, a store newer than the binary. The
//! boot that runs (against Mattermost and a model provider) is proved end to
//! end in `tests/e2e/tests/boot.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use collegium_control::store::{LATEST_VERSION, Store};

fn repo() -> PathBuf {
    Path::new(
        &*std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("..")
}

/// A valid configuration whose state directory is `state`. It allows root
/// (issue 21 item 5): CI runs the suite as root, and these tests are about
/// what boot refuses after that check.
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
                "main_channel = \"town-square\"\nstate_dir = \"{}\"\nallow_root = true\n",
                state.display()
            ),
        );
    let path = dir.join("collegium.toml");
    std::fs::write(&path, text).expect("write");
    path
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
