//! `collegium-provision host --config FILE` (A2, §6.1): converges the host
//! to the configuration's layout (`collegium_control::host`). One OS user
//! and group per shell-holding agent; its home, owned by it, mode 0700; its
//! workspace, which the daemon writes and the agent's group only reads
//! (setgid, so what the daemon creates inside keeps the group); the state,
//! runtime and audit directories the daemon owns, closed to agents; the
//! configuration tree open only to the daemon's group, which no agent or
//! plugin user is ever in; the plugin tree open to the daemon and the
//! plugin users (`plugin_group`); and an nftables table rejecting the
//! agents' users' connections to the callback port (`reach`, §6.4); and
//! the framework workers' own users, `collegium-pdf`, `collegium-browser`
//! and `collegium-mail` (`framework_users`, §3.4, §3.13). Every
//! run converges; a second run changes nothing, and each change is printed.

pub mod framework_users;
mod reach;

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use collegium_control::config::LoadedConfig;
use collegium_control::host::{self, Layout, LayoutError};
use nix::unistd::{Uid, User};

/// The daemon's user where the configuration names none.
pub const DEFAULT_DAEMON_USER: &str = "collegium";

/// What a run changed, a line each.
#[derive(Debug, Default)]
pub struct Outcome {
    pub changes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("host provisioning creates users and sets owners: run it as root")]
    NotRoot,
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error("{what} failed: {reason}")]
    Command { what: String, reason: String },
    #[error("cannot look up {0}: {1}")]
    Lookup(String, nix::Error),
    #[error("the {kind} `{name}` does not exist after creating it")]
    Missing { kind: &'static str, name: String },
    #[error("{0} is not a directory (a link or a file is never followed); remove it and run again")]
    NotADirectory(PathBuf),
    #[error(
        "the configuration's directory {0} is shared with the system; keep the configuration in a directory of its own, such as /etc/collegium"
    )]
    SharedConfigDir(PathBuf),
    #[error(
        "{key} {path} is inside the configuration's directory {config}, which only the daemon's group may pass, and plugins.{plugin}.user runs a plugin as a user outside that group who must reach it: put it elsewhere (the defaults are outside /etc/collegium)"
    )]
    PluginPathUnderConfig {
        key: &'static str,
        path: PathBuf,
        config: PathBuf,
        plugin: String,
    },
    #[error(
        "the nft command is not installed; install the nftables package (apt-get install nftables): agents' users are kept from the callback port by an nftables rule (§6.4)"
    )]
    NftMissing,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Who owns a directory, and its mode.
struct Wanted {
    uid: u32,
    gid: u32,
    mode: u32,
}

pub fn provision(loaded: &LoadedConfig) -> Result<Outcome, HostError> {
    if !Uid::effective().is_root() {
        return Err(HostError::NotRoot);
    }
    let _turn = one_at_a_time()?;
    let layout = host::layout(loaded, DEFAULT_DAEMON_USER)?;
    // The configuration's directory is made the daemon's group's alone:
    // never a directory the rest of the system lives in.
    let shared = [
        "/", "/etc", "/usr", "/var", "/var/lib", "/opt", "/home", "/root", "/tmp", "/srv",
    ];
    if layout.config_dir.as_os_str().is_empty()
        || shared.iter().any(|d| layout.config_dir == Path::new(d))
    {
        return Err(HostError::SharedConfigDir(layout.config_dir.clone()));
    }
    let plugin_users: Vec<&str> = loaded
        .config
        .plugins
        .values()
        .filter_map(|p| p.user.as_deref())
        .collect();
    if let Some((plugin, _)) = loaded.config.plugins.iter().find(|(_, p)| p.user.is_some()) {
        // A plugin user reaches its code, its socket's directory and its
        // audit log's; none of them may lie behind the configuration's.
        let reached = [
            ("deployment.plugins_root", &layout.plugins_root),
            ("deployment.runtime_dir", &layout.runtime_dir),
            ("deployment.audit_dir", &layout.audit_dir),
        ];
        if let Some((key, path)) = reached
            .into_iter()
            .find(|(_, path)| path.starts_with(&layout.config_dir))
        {
            return Err(HostError::PluginPathUnderConfig {
                key,
                path: path.clone(),
                config: layout.config_dir.clone(),
                plugin: plugin.clone(),
            });
        }
    }
    let mut outcome = Outcome::default();
    let daemon = ensure_user(&layout.daemon_user, &layout.state_dir, &mut outcome)?;
    let plugins_gid = crate::plugin_group::converge(&daemon, &plugin_users, &mut outcome)?;
    converge_framework(&layout, &daemon, plugins_gid.as_raw(), &mut outcome)?;
    let workers = framework_users::converge(&mut outcome)?;
    for (user, dir) in framework_users::WORKER_DIRS {
        let Some(worker) = workers.iter().find(|u| u.name == *user) else {
            continue;
        };
        let uid = worker.uid.as_raw();
        converge_dir(
            &layout.runtime_dir.join(dir),
            &Wanted {
                uid,
                gid: daemon.gid.as_raw(),
                mode: 0o750,
            },
            &mut outcome,
        )?;
        converge_dir(
            &layout.audit_dir.join(dir),
            &Wanted {
                uid,
                gid: worker.gid.as_raw(),
                mode: 0o700,
            },
            &mut outcome,
        )?;
    }
    let mut agent_uids = std::collections::BTreeSet::new();
    for place in &layout.agents {
        let agent = match &place.os_user {
            Some(name) => {
                let home = place.home.clone().unwrap_or_default();
                Some(ensure_user(name, &home, &mut outcome)?)
            }
            None => None,
        };
        if let Some(user) = &agent {
            agent_uids.insert(user.uid.as_raw());
        }
        if let (Some(home), Some(user)) = (&place.home, &agent) {
            converge_dir(
                home,
                &Wanted {
                    uid: user.uid.as_raw(),
                    gid: user.gid.as_raw(),
                    mode: 0o700,
                },
                &mut outcome,
            )?;
        }
        if let Some(workspace) = &place.workspace {
            // The daemon writes; the agent's group reads; setgid keeps the
            // group on what is created inside (A2).
            let gid = agent.as_ref().map_or(daemon.gid, |u| u.gid).as_raw();
            converge_dir(
                workspace,
                &Wanted {
                    uid: daemon.uid.as_raw(),
                    gid,
                    mode: 0o2750,
                },
                &mut outcome,
            )?;
        }
    }
    reach::converge(
        &host::reach::table_name(&layout.state_dir),
        &agent_uids,
        &host::reach::blocked_ports(loaded),
        &mut outcome,
    )?;
    Ok(outcome)
}

/// The daemon's own directories and the framework's tree.
fn converge_framework(
    layout: &Layout,
    daemon: &User,
    plugins_gid: u32,
    outcome: &mut Outcome,
) -> Result<(), HostError> {
    let (uid, gid) = (daemon.uid.as_raw(), daemon.gid.as_raw());
    let own = |mode| Wanted { uid, gid, mode };
    let root_group = |mode| Wanted { uid: 0, gid, mode };
    let open = Wanted {
        uid: 0,
        gid: 0,
        mode: 0o755,
    };
    converge_dir(&layout.state_dir, &own(0o700), outcome)?;
    // Passable, not listable: each worker's own directory inside is what
    // gates its socket and its log, and a root worker holds no
    // CAP_DAC_OVERRIDE to pass a closed one (ARCHITECTURE §4).
    converge_dir(&layout.runtime_dir, &own(0o711), outcome)?;
    converge_dir(&layout.audit_dir, &own(0o711), outcome)?;
    converge_dir(&layout.config_dir, &root_group(0o750), outcome)?;
    converge_dir(
        &layout.plugins_root,
        &Wanted {
            uid: 0,
            gid: plugins_gid,
            mode: 0o750,
        },
        outcome,
    )?;
    converge_dir(&layout.homes_root, &open, outcome)?;
    converge_dir(&layout.workspaces_root, &open, outcome)?;
    Ok(())
}

/// Where a provisioner takes its turn on the host: `/run`, which only root
/// writes and every host has.
const HOST_LOCK: &str = "/run/collegium-provision.lock";

/// Holds the host for this provisioner until dropped. `useradd` looks
/// whether a name is free before it takes the user database's lock
/// (shadow 4.13): two provisioners making the same user both succeed, the
/// later replacing the earlier's entry under another uid, and what the
/// earlier gave that user is left to a uid no user has. A deployment runs
/// one provisioning unit, but an operator may run `collegium-provision
/// host` beside it.
fn one_at_a_time() -> Result<std::fs::File, HostError> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = Path::new(HOST_LOCK);
    let io = |source| HostError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(io)?;
    file.lock().map_err(io)?;
    Ok(file)
}

/// A system user with a group of its own name, home `home`, no login shell.
fn ensure_user(name: &str, home: &Path, outcome: &mut Outcome) -> Result<User, HostError> {
    if let Some(user) = lookup_user(name)? {
        return Ok(user);
    }
    run(
        Command::new("useradd")
            .args(["--system", "--user-group", "--no-create-home"])
            .arg("--home-dir")
            .arg(home)
            .args(["--shell", "/usr/sbin/nologin", name]),
        &format!("creating the user {name}"),
    )?;
    outcome
        .changes
        .push(format!("created the OS user and group {name}"));
    lookup_user(name)?.ok_or_else(|| HostError::Missing {
        kind: "user",
        name: name.to_string(),
    })
}

fn lookup_user(name: &str) -> Result<Option<User>, HostError> {
    User::from_name(name).map_err(|e| HostError::Lookup(format!("the user {name}"), e))
}

/// Runs one of the system's user tools. The tools take a lock on the user
/// and group files and give up at once when another holds it (another
/// provisioning, an administrator's `usermod`): a held lock is waited out
/// for a few seconds before it counts as a failure.
pub(crate) fn run(command: &mut Command, what: &str) -> Result<(), HostError> {
    const TRIES: u32 = 25;
    let mut tries = 0;
    loop {
        let output = command.output().map_err(|e| HostError::Command {
            what: what.to_string(),
            reason: e.to_string(),
        })?;
        if output.status.success() {
            return Ok(());
        }
        let reason = String::from_utf8_lossy(&output.stderr).trim().to_string();
        tries += 1;
        if !reason.contains("cannot lock") || tries == TRIES {
            return Err(HostError::Command {
                what: what.to_string(),
                reason,
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Creates `dir` (parents mode 0755) and gives it `wanted`'s owner and
/// mode, printing what changed.
fn converge_dir(dir: &Path, wanted: &Wanted, outcome: &mut Outcome) -> Result<(), HostError> {
    let io = |source| HostError::Io {
        path: dir.to_path_buf(),
        source,
    };
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .map_err(io)?;
        outcome.changes.push(format!("created {}", dir.display()));
    }
    let metadata = std::fs::symlink_metadata(dir).map_err(io)?;
    if !metadata.file_type().is_dir() {
        // Root never changes what a link (or a file) in a directory someone
        // else may write points at.
        return Err(HostError::NotADirectory(dir.to_path_buf()));
    }
    if metadata.uid() != wanted.uid || metadata.gid() != wanted.gid {
        std::os::unix::fs::chown(dir, Some(wanted.uid), Some(wanted.gid)).map_err(io)?;
        outcome.changes.push(format!(
            "gave {} to uid {} gid {}",
            dir.display(),
            wanted.uid,
            wanted.gid
        ));
    }
    // chown clears setgid on some filesystems: read the mode afresh.
    let mode = std::fs::symlink_metadata(dir).map_err(io)?.mode() & 0o7777;
    if mode != wanted.mode {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(wanted.mode)).map_err(io)?;
        outcome.changes.push(format!(
            "set the mode of {} to {:04o} (was {:04o})",
            dir.display(),
            wanted.mode,
            mode
        ));
    }
    Ok(())
}
