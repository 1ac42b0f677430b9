//! A plugin the daemon starts as its child (§3.14): how it is launched, and
//! kept to be launched again the same way after a crash; its directories,
//! its user and groups, its death with the daemon, and its `ready` line.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::env;
use crate::config::LoadedConfig;
use crate::plugin_storage::serve::DaemonEnd;
use crate::workers::handshake::SandboxExpectation;

/// How long a plugin may take to print `ready`, or its unit's socket to
/// accept.
pub const READY_WITHIN: Duration = Duration::from_secs(10);

/// How a plugin's process is started, kept to start it again the same way.
#[derive(Debug, Clone)]
pub struct Launch {
    pub executable: std::path::PathBuf,
    pub socket: std::path::PathBuf,
    pub audit: std::path::PathBuf,
    pub daemon_uid: u32,
    pub run_as: Option<nix::unistd::User>,
    /// What its storage connection serves, known once it has described
    /// itself at boot; every restart's fresh connection serves the same.
    pub storage: Option<StorageBinding>,
}

/// A plugin's collections and the store its `Storage` connection writes.
#[derive(Clone)]
pub struct StorageBinding {
    pub collections: crate::plugin_storage::collections::Collections,
    pub store: crate::store::StoreHandle,
}

impl std::fmt::Debug for StorageBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageBinding")
            .field("collections", &self.collections)
            .finish_non_exhaustive()
    }
}

impl StorageBinding {
    /// Serves `Storage` on a child's connection, bound to the namespace.
    pub fn serve(&self, end: DaemonEnd) -> std::io::Result<()> {
        end.serve(self.collections.clone(), self.store.clone())
    }
}

/// How a child plugin is started, kept to start it again the same way.
/// Each gets a socket directory and an audit directory of its own, owned by
/// the user it runs as; their parents only let it pass.
pub(super) fn launch(
    loaded: &LoadedConfig,
    namespace: &str,
    executable: std::path::PathBuf,
    daemon: &SandboxExpectation,
    run_as: &Option<nix::unistd::User>,
) -> Result<Launch, String> {
    let deployment = &loaded.config.deployment;
    let socket_dir = deployment.runtime_dir.join(namespace);
    let audit_dir = deployment.audit_dir.join(namespace);
    for (parent, dir) in [
        (&deployment.runtime_dir, &socket_dir),
        (&deployment.audit_dir, &audit_dir),
    ] {
        owned_dir(parent, dir, run_as.as_ref())?;
    }
    Ok(Launch {
        executable,
        socket: crate::workers::framework::socket(loaded, namespace),
        audit: audit_dir.join(format!("{namespace}.audit.jsonl")),
        daemon_uid: daemon.uid,
        run_as: run_as.clone(),
        storage: None,
    })
}

/// Starts `executable`, as `run_as` when given, and waits for its `ready`
/// line. The child dies with the daemon (`die_with_daemon`): the signal
/// follows the thread that forked, and this runs in the future the daemon's
/// main thread blocks on, never on a blocking-pool thread that ends when
/// idle.
pub(super) async fn spawn(launch: &Launch) -> Result<(Child, DaemonEnd), String> {
    let Launch {
        executable,
        socket,
        audit,
        daemon_uid,
        run_as,
        storage: _,
    } = launch;
    let mut command = Command::new(executable);
    command
        .arg("--socket")
        .arg(socket)
        .arg("--audit")
        .arg(audit)
        .args(["--allow-uid", &daemon_uid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    // Nothing of the daemon's environment: no token, key or secret, and
    // not its notify socket, whose readiness is not a plugin's to speak for
    // (issue 21).
    env::apply(&mut command, run_as.as_ref());
    if let Some(user) = run_as {
        become_user(&mut command, user)?;
    }
    die_with_daemon(&mut command);
    // §3.14: the child's storage connection, fd 3 (plugin_storage::serve).
    let storage =
        crate::plugin_storage::serve::hand_to_child(&mut command).map_err(|e| e.to_string())?;
    let spawned = command.spawn();
    let storage = storage.spawned();
    let mut child = spawned.map_err(|e| {
        format!(
            "cannot start {}: {e}{}",
            executable.display(),
            env::unsupported_hint(&e)
        )
    })?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    match tokio::time::timeout(READY_WITHIN, lines.next_line()).await {
        Ok(Ok(Some(line))) if line.trim() == "ready" => Ok((child, storage)),
        Ok(Ok(Some(line))) => Err(format!("printed {line:?} where `ready` was expected")),
        Ok(Ok(None)) => {
            let status = child.wait().await.map_err(|e| e.to_string())?;
            Err(format!("exited ({status}) before it was ready"))
        }
        Ok(Err(e)) => Err(format!("cannot read its output: {e}")),
        Err(_) => Err(format!(
            "did not print `ready` within {} s",
            READY_WITHIN.as_secs()
        )),
    }
}

/// Starts the child as `user` with the groups the host gives that user.
/// std's own switch drops every supplementary group, and the plugin users'
/// group (`collegium-provision host`) is what lets the plugin pass
/// `plugins_root` to its own code, so the switch is made here: the groups
/// are read before the fork, and the child only makes the three calls.
#[allow(unsafe_code)]
fn become_user(command: &mut Command, user: &nix::unistd::User) -> Result<(), String> {
    use nix::unistd::{getgrouplist, setgroups, setresgid, setresuid};
    let name = std::ffi::CString::new(user.name.as_str())
        .map_err(|_| format!("the user name {:?} holds a NUL byte", user.name))?;
    let groups = getgrouplist(&name, user.gid)
        .map_err(|e| format!("cannot read the groups of {}: {e}", user.name))?;
    let (uid, gid) = (user.uid, user.gid);
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe work is sound; it makes three system calls on
    // values made before the fork, and allocates nothing and takes no lock.
    // It is registered before `die_with_daemon`'s, which must follow the
    // switch (closures run in the order they were added).
    unsafe {
        command.pre_exec(move || {
            setgroups(&groups)?;
            setresgid(gid, gid, gid)?;
            setresuid(uid, uid, uid)?;
            Ok(())
        });
    }
    Ok(())
}

/// Makes the child die with the daemon however the daemon ends. A stop
/// stops it (`RunningToolset::stop`), but a daemon killed outright runs no
/// code of its own, and an orphaned plugin would go on serving a socket
/// nobody answers for: the kernel sends it SIGKILL instead.
#[allow(unsafe_code)]
fn die_with_daemon(command: &mut Command) {
    let daemon = nix::unistd::getpid();
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe work is sound; it makes two system calls
    // (prctl and getppid), allocates nothing and takes no lock. It runs
    // after `become_user`'s switch, which clears the parent-death signal
    // (prctl(2)), so it is set for the credentials the plugin execs with.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
            // A daemon that died before the signal was set would never send
            // it: the child is already someone else's.
            if nix::unistd::getppid() != daemon {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

/// Creates `dir` (mode 0700, owned by `owner` when given) inside `parent`,
/// which others may pass through but not list (0711).
fn owned_dir(parent: &Path, dir: &Path, owner: Option<&nix::unistd::User>) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let fail = |path: &Path, e: std::io::Error| format!("cannot prepare {}: {e}", path.display());
    if !parent.is_dir() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o711)
            .create(parent)
            .map_err(|e| fail(parent, e))?;
    }
    if owner.is_some() {
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o711))
            .map_err(|e| fail(parent, e))?;
    }
    crate::ownership::private_dir(dir).map_err(|e| fail(dir, e))?;
    if let Some(user) = owner {
        crate::ownership::give(dir, user).map_err(|e| fail(dir, e))?;
    }
    Ok(())
}
