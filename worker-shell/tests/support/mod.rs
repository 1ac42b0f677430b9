//! What the shell worker's tests and benchmark share: real OS users and
//! directories with the owners and modes a provisioned host gives them,
//! and the launcher program. Each test binary uses part of it.
#![allow(dead_code)]

use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};
use std::process::Command;

use collegium_worker_shell::run::Finished;
use nix::unistd::User;

/// The OS user `name`, made (a system user with a group of its own, no
/// home, no login) where the host has none.
pub fn ensure_user(name: &str) -> User {
    if let Some(user) = User::from_name(name).expect("lookup") {
        return user;
    }
    let made = Command::new("useradd")
        .args(["--system", "--user-group", "--no-create-home"])
        .args(["--shell", "/usr/sbin/nologin", name])
        .status()
        .expect("useradd");
    // Another test binary may have made it meanwhile.
    User::from_name(name)
        .expect("lookup")
        .unwrap_or_else(|| panic!("useradd {name}: {made}"))
}

pub fn dir(path: &Path, uid: u32, gid: u32, mode: u32) {
    std::fs::create_dir_all(path).expect("mkdir");
    chown(path, Some(uid), Some(gid)).expect("chown");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

pub fn file(path: &Path, text: &str, uid: u32, gid: u32, mode: u32) {
    std::fs::write(path, text).expect("write");
    chown(path, Some(uid), Some(gid)).expect("chown");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The launcher program the worker execs for each command.
pub fn launcher() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_collegium-shell-launch"))
}

pub fn out(finished: &Finished) -> String {
    String::from_utf8_lossy(&finished.stdout.bytes).into_owned()
}

pub fn err(finished: &Finished) -> String {
    String::from_utf8_lossy(&finished.stderr.bytes).into_owned()
}

/// Fails the test unless it runs as root: the worker's tests make agent
/// users and run commands as them, and CI runs the suite as root; returning
/// early as anyone else would pass a test that checked nothing.
pub fn require_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test makes OS users and runs commands as them: run the README's test command as root, as CI does"
    );
}
