//! `collegium-worker-shell serve --config FILE`: the shell worker
//! (ARCHITECTURE §4). It runs as root; before its runtime starts it sets up
//! its socket and audit directories, reduces every capability set to
//! CAP_SETUID, CAP_SETGID and CAP_KILL (what systemd's
//! `CapabilityBoundingSet` gives it; it drops the rest itself when started
//! by hand) and sets no-new-privileges, then serves `shell::run`. It prints
//! `ready` once its socket accepts connections and stops on SIGTERM.
//!
//! `collegium-shell-launch`, installed beside it, is the launcher it execs
//! per command.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use caps::{CapSet, Capability};
use clap::{Parser, Subcommand};
use collegium_worker_kit::admission::Admission;
use collegium_worker_kit::audit::AuditLog;
use collegium_worker_kit::grant::GrantVerifier;
use collegium_worker_kit::serve::{PeerPolicy, serve};
use collegium_worker_shell::bounds::Mechanisms;
use collegium_worker_shell::service::{AgentUser, NAMESPACE, ShellWorker};
use collegium_worker_shell::{cgroups, confine};
use nix::unistd::User;
use tokio::signal::unix::{SignalKind, signal};

#[derive(Parser)]
#[command(
    name = "collegium-worker-shell",
    version,
    about = "shell::run, as each agent's own OS user"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve `shell::run` for the agents of a configuration.
    Serve {
        /// The deployment's configuration file.
        #[arg(long)]
        config: PathBuf,
        /// A directory of a cgroup v2 hierarchy for per-command cgroups.
        /// Unset, `collegium-shell` in the host's cgroup v2 hierarchy,
        /// wherever it is mounted; on a host without one the worker says so
        /// at the handshake and the daemon refuses to boot.
        #[arg(long, conflicts_with = "delegated_cgroup")]
        cgroup_root: Option<PathBuf>,
        /// Put each command's cgroup inside the worker's own, which its
        /// unit delegates to it (systemd's `Delegate=yes`), so that
        /// stopping the unit stops every command with it. The worker moves
        /// itself into a leaf `worker` of its cgroup first.
        #[arg(long)]
        delegated_cgroup: bool,
        /// The lowest Landlock ABI the shell runs under.
        #[arg(long, default_value_t = 3)]
        landlock_floor: u8,
        /// A uid allowed to connect; the daemon's user when not given.
        #[arg(long = "allow-uid")]
        allow_uids: Vec<u32>,
    },
    /// Tries, once at the worker's start, the namespaces a launch makes.
    #[command(hide = true)]
    ProbeNamespaces,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::ProbeNamespaces => collegium_worker_shell::namespaces::probe_main(),
        Command::Serve {
            config,
            cgroup_root,
            delegated_cgroup,
            landlock_floor,
            allow_uids,
        } => match start(
            &config,
            CgroupChoice::from_flags(cgroup_root, delegated_cgroup),
            landlock_floor,
            allow_uids,
        ) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("collegium-worker-shell: {error:#}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Where the operator asked for the commands' cgroups.
enum CgroupChoice {
    /// `collegium-shell` in the host's cgroup v2 hierarchy.
    Host,
    /// A directory named with `--cgroup-root`.
    Named(PathBuf),
    /// The worker's own cgroup, delegated by its unit.
    Delegated,
}

impl CgroupChoice {
    fn from_flags(named: Option<PathBuf>, delegated: bool) -> Self {
        match (named, delegated) {
            (Some(root), _) => Self::Named(root),
            (None, true) => Self::Delegated,
            (None, false) => Self::Host,
        }
    }
}

/// What the worker serves with, set up while it still may.
struct Setup {
    worker: ShellWorker,
    /// The handles the socket's and the log's paths go through.
    _dirs: [OwnedFd; 2],
    /// Each agent's candidate commands, probed before serving (§3.4).
    candidates: BTreeMap<String, Vec<String>>,
    socket: PathBuf,
    allowed: BTreeSet<u32>,
}

fn start(
    config: &std::path::Path,
    cgroup_root: CgroupChoice,
    landlock_floor: u8,
    allow_uids: Vec<u32>,
) -> anyhow::Result<()> {
    let setup = set_up(config, cgroup_root, landlock_floor, allow_uids)?;
    reduce_capabilities()?;
    collegium_worker_kit::sandbox::forbid_new_privileges()?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve_until_stopped(setup))
}

fn set_up(
    config: &std::path::Path,
    cgroup_root: CgroupChoice,
    landlock_floor: u8,
    allow_uids: Vec<u32>,
) -> anyhow::Result<Setup> {
    if !nix::unistd::geteuid().is_root() {
        bail!("the shell worker runs as root, to run each command as its agent's user");
    }
    let landlock_abi = confine::kernel_abi();
    if landlock_abi < landlock_floor {
        bail!(
            "this kernel's Landlock ABI is {landlock_abi}, below the floor {landlock_floor}: the shell does not run unconfined"
        );
    }
    let cgroup_root = command_cgroup_root(cgroup_root)?;
    // Controllers where the host delegates them, rlimits where it does not
    // (§6.1); the handshake reports which.
    let mechanisms = cgroup_root
        .as_deref()
        .map_or(Mechanisms::RLIMITS, cgroups::delegate);
    let worker = std::env::current_exe()?;
    let launcher = launcher_beside(&worker)?;
    let namespaces = command_namespaces(&worker);
    let loaded =
        collegium_control::config::load(config).map_err(|e| anyhow::anyhow!("{}", e.report()))?;
    let layout = collegium_control::host::layout(&loaded, "collegium")?;
    let mut agents = BTreeMap::new();
    for place in &layout.agents {
        let (Some(name), Some(home)) = (&place.os_user, &place.home) else {
            continue;
        };
        let user = User::from_name(name)?.with_context(|| {
            format!(
                "agent {}: its OS user {name} does not exist; run collegium-provision host",
                place.agent
            )
        })?;
        agents.insert(
            place.agent.clone(),
            AgentUser {
                uid: user.uid.as_raw(),
                gid: user.gid.as_raw(),
                home: home.clone(),
                workspace: place.workspace.clone(),
            },
        );
    }
    let candidates = loaded
        .agents
        .iter()
        .filter(|a| agents.contains_key(&a.username))
        .map(|a| {
            let configured: Option<Vec<String>> = a
                .settings
                .get(NAMESPACE)
                .and_then(|s| s.get("probe_commands"))
                .and_then(|v| serde_json::from_value(v.clone()).ok());
            let names = configured.unwrap_or_else(|| {
                collegium_worker_shell::service::DEFAULT_PROBES
                    .iter()
                    .map(|s| (*s).to_string())
                    .collect()
            });
            (a.username.clone(), names)
        })
        .collect();
    let daemon = User::from_name(&layout.daemon_user)?;
    let allowed: BTreeSet<u32> = if allow_uids.is_empty() {
        daemon.iter().map(|u| u.uid.as_raw()).collect()
    } else {
        allow_uids.into_iter().collect()
    };
    if allowed.is_empty() {
        bail!(
            "the daemon's user {} does not exist: name the uid allowed to connect with --allow-uid",
            layout.daemon_user
        );
    }
    // The socket's directory lets the daemon's group through and no one
    // else; the socket inside may then be open to whoever reaches it.
    // Both parents belong to the daemon's user, who could have put a link
    // or a directory of its own where ours go: each is made or found root's,
    // never followed, and reached afterwards only through its own handle.
    let group = daemon.as_ref().map(|u| u.gid.as_raw());
    let socket_dir = root_dir(&layout.runtime_dir.join(NAMESPACE), 0o750, group)?;
    let audit_dir = root_dir(&layout.audit_dir.join(NAMESPACE), 0o700, None)?;
    let log = AuditLog::open(
        &through(&audit_dir).join(format!("{NAMESPACE}.audit.jsonl")),
        NAMESPACE,
    )?;
    let served: BTreeSet<String> = ["run".to_string()].into();
    let admission = Admission::new(
        NAMESPACE,
        GrantVerifier::new(NAMESPACE, served.clone(), served),
        log,
    );
    Ok(Setup {
        worker: ShellWorker {
            admission: Arc::new(admission),
            agents,
            launcher,
            namespaces,
            cgroup_root,
            mechanisms,
            homes: Default::default(),
            landlock_floor,
            landlock_abi,
            commands: BTreeMap::new(),
            reach: collegium_control::host::reach::endpoints(&loaded),
        },
        candidates,
        socket: through(&socket_dir).join("toolset.sock"),
        _dirs: [socket_dir, audit_dir],
        allowed,
    })
}

/// A directory of root's at `path`: made with `mode` where missing;
/// refused where it is a link or belongs to anyone else; opened without
/// following, then given `group` and `mode` through the handle.
fn root_dir(path: &std::path::Path, mode: u32, group: Option<u32>) -> anyhow::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    match std::fs::symlink_metadata(path) {
        Ok(found) if !found.file_type().is_dir() || found.uid() != 0 => bail!(
            "{} is not a directory of root's; remove it (collegium-provision host makes it)",
            path.display()
        ),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .mode(mode)
                .create(path)
                .with_context(|| format!("making {}", path.display()))?;
        }
        Err(e) => return Err(e).with_context(|| path.display().to_string()),
    }
    let dir = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("opening {}", path.display()))?;
    let opened = rustix::fs::fstat(&dir)?;
    if opened.st_uid != 0 {
        bail!("{} changed under the worker; refusing it", path.display());
    }
    rustix::fs::fchown(
        &dir,
        Some(rustix::process::Uid::ROOT),
        group.map(rustix::process::Gid::from_raw),
    )?;
    rustix::fs::fchmod(&dir, Mode::from_raw_mode(mode))?;
    Ok(dir)
}

/// A path through an open directory's handle: whatever is renamed or
/// linked at its old path later, this reaches the directory opened.
fn through(dir: &OwnedFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()))
}

/// Where per-command cgroups go. One named with `--cgroup-root`, or the
/// worker's own with `--delegated-cgroup`, must hold them, or the worker
/// does not start; the host's own hierarchy is used
/// where it has one. Without either the worker serves, says so at the
/// handshake, and the daemon refuses to boot (§6.1): a command is never run
/// silently without its kill switch.
fn command_cgroup_root(choice: CgroupChoice) -> anyhow::Result<Option<PathBuf>> {
    let root = match choice {
        CgroupChoice::Named(root) => {
            cgroups::prepare(&root).context("--cgroup-root")?;
            root
        }
        CgroupChoice::Delegated => cgroups::own_delegated().context("--delegated-cgroup")?,
        CgroupChoice::Host => match cgroups::host_root() {
            Some(root) => match cgroups::prepare(&root) {
                Ok(()) => root,
                Err(error) => {
                    eprintln!("collegium-worker-shell: no command cgroups: {error}");
                    return Ok(None);
                }
            },
            None => {
                eprintln!(
                    "collegium-worker-shell: no command cgroups: this host mounts no cgroup v2 hierarchy"
                );
                return Ok(None);
            }
        },
    };
    cgroups::sweep(&root, std::process::id());
    Ok(Some(root))
}

/// The launcher installed beside the worker's own executable. The worker
/// execs it as root for every command, so it must be root's and writable by
/// no one else, as the worker's own executable is.
fn launcher_beside(worker: &std::path::Path) -> anyhow::Result<PathBuf> {
    let launcher = worker.with_file_name(collegium_worker_shell::run::LAUNCHER);
    let found = std::fs::metadata(&launcher).with_context(|| {
        format!(
            "the launcher {}: install it beside {}",
            launcher.display(),
            worker.display()
        )
    })?;
    if !found.is_file() || found.uid() != 0 || found.mode() & 0o022 != 0 {
        bail!(
            "the launcher {} must be a file of root's that no one else may write (mode {:04o}, owner uid {})",
            launcher.display(),
            found.mode() & 0o7777,
            found.uid()
        );
    }
    Ok(launcher)
}

/// The namespaces each command will get, found by trying them once with
/// the launcher's own steps; none where any step fails, which the handshake
/// reports and the daemon refuses (§6.1).
fn command_namespaces(worker: &std::path::Path) -> Vec<String> {
    match std::process::Command::new(worker)
        .arg("probe-namespaces")
        .stdin(std::process::Stdio::null())
        .status()
    {
        Ok(status) if status.success() => collegium_worker_shell::namespaces::APPLIED
            .iter()
            .map(|n| (*n).to_string())
            .collect(),
        Ok(_) => Vec::new(),
        Err(error) => {
            eprintln!("collegium-worker-shell: no command namespaces: {error}");
            Vec::new()
        }
    }
}

/// Every capability set of this (still single-threaded) process reduced to
/// what running a command as another user takes; the threads the runtime
/// starts inherit it.
fn reduce_capabilities() -> anyhow::Result<()> {
    let kept: HashSet<Capability> = [
        Capability::CAP_SETUID,
        Capability::CAP_SETGID,
        Capability::CAP_KILL,
    ]
    .into();
    for capability in caps::all() {
        if !kept.contains(&capability) && caps::has_cap(None, CapSet::Bounding, capability)? {
            caps::drop(None, CapSet::Bounding, capability)?;
        }
    }
    caps::clear(None, CapSet::Inheritable)?;
    caps::clear(None, CapSet::Ambient)?;
    caps::set(None, CapSet::Effective, &kept)?;
    caps::set(None, CapSet::Permitted, &kept)?;
    Ok(())
}

async fn serve_until_stopped(mut setup: Setup) -> anyhow::Result<()> {
    // The shared initialiser: journal, text or JSON (issue 21 item 6).
    collegium_worker_kit::logging::init("collegium-worker-shell");
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let policy = PeerPolicy {
        allowed_uids: setup.allowed,
    };
    setup.worker.probe(&setup.candidates).await;
    let commands = setup.worker.cgroup_root.clone();
    // The directory gates who reaches the socket (see `set_up`).
    let serving = serve(&setup.socket, 0o666, policy, setup.worker).await?;
    println!("ready");
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    // A stopped worker leaves no command running (§6.1): under the host's
    // hierarchy its commands' cgroups are outside its own, where no unit's
    // stop reaches them. Killed first, the calls in flight end at once with
    // what their commands did, and the shutdown that waits on them is not
    // held to their deadlines; swept again after, for any command a call
    // started meanwhile.
    let me = std::process::id();
    if let Some(root) = &commands {
        cgroups::sweep(root, me);
    }
    serving.shutdown().await?;
    if let Some(root) = &commands {
        cgroups::sweep(root, me);
    }
    Ok(())
}
