//! The framework workers' own OS users (§3.4, §3.13, ARCHITECTURE §4): the
//! PDF worker runs as `collegium-pdf`, the browser worker as
//! `collegium-browser` and the mail worker as `collegium-mail`, each a
//! system user with a group of its own name, no login shell and no home, so
//! a parser, a browser or a mail client taken over holds nothing of the
//! daemon's, an agent's or another worker's. Made once; a run over a host
//! that has them changes nothing.

use std::process::Command;

use nix::unistd::User;

use super::{HostError, Outcome, lookup_user, run};

/// The users the framework's workers run as (the daemon holds each worker
/// to the same names, `collegium_control::host::WORKER_USERS`).
pub const FRAMEWORK_USERS: &[&str] = &["collegium-pdf", "collegium-browser", "collegium-mail"];

/// Each unprivileged worker's directories, by its user: its socket's, named
/// for what it serves, under the runtime directory (the worker's, the
/// daemon's group passing: mode 0750), and its audit log's under the audit
/// directory (the worker's alone: 0700).
pub const WORKER_DIRS: &[(&str, &str)] = &[
    ("collegium-browser", "web"),
    ("collegium-pdf", "pdf"),
    ("collegium-mail", "mail"),
];

/// Where a user without a home is pointed: a directory that does not
/// exist, as Debian's system users have.
pub const NO_HOME: &str = "/nonexistent";

pub fn converge(outcome: &mut Outcome) -> Result<Vec<User>, HostError> {
    FRAMEWORK_USERS
        .iter()
        .map(|name| ensure(name, outcome))
        .collect()
}

fn ensure(name: &str, outcome: &mut Outcome) -> Result<User, HostError> {
    if let Some(user) = lookup_user(name)? {
        return Ok(user);
    }
    run(
        Command::new("useradd")
            .args(["--system", "--user-group", "--no-create-home"])
            .args(["--home-dir", NO_HOME])
            .args(["--shell", "/usr/sbin/nologin", name]),
        &format!("creating the user {name}"),
    )?;
    outcome.changes.push(format!(
        "created the framework worker's OS user and group {name}"
    ));
    lookup_user(name)?.ok_or_else(|| HostError::Missing {
        kind: "user",
        name: name.to_string(),
    })
}
