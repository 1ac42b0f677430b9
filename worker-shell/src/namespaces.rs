//! A command's own namespaces (§6.1; ARCHITECTURE §4): PID, mount and IPC,
//! made inside a user namespace the launcher creates after it has taken the
//! agent's uid, the route unprivileged sandboxes take, so the worker needs
//! no capability beyond CAP_SETUID, CAP_SETGID and CAP_KILL. Inside, the
//! command's process tree is all `/proc` shows, its TMPDIR is a tmpfs of
//! its own, and its SysV shared memory, semaphores and message queues die
//! with it. The network namespace stays the host's: A2 leaves the shell's
//! network to the approval.

use std::path::Path;

use nix::errno::Errno;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork};

/// The namespaces each command gets, as the handshake names them.
pub const APPLIED: &[&str] = &["pid", "mount", "ipc"];

/// Where the command's private temporary directory is mounted: a tmpfs
/// mount point every host has and no deployment puts homes under (`/tmp`
/// may hold them; `docs/spec-findings.md`). Covering it makes POSIX shared
/// memory private to the command as well.
pub const TMPDIR: &str = "/dev/shm";

/// A namespace step that failed; the launch is refused naming it.
#[derive(Debug, thiserror::Error)]
#[error("{step}: {source}")]
pub struct NamespaceError {
    step: &'static str,
    source: Errno,
}

impl NamespaceError {
    /// Whether the kernel refused a new process for want of room: under
    /// `RLIMIT_NPROC` the agent's user is at its process bound.
    pub fn out_of_processes(&self) -> bool {
        self.source == Errno::EAGAIN
    }
}

fn step(step: &'static str) -> impl FnOnce(Errno) -> NamespaceError {
    move |source| NamespaceError { step, source }
}

fn step_io(step: &'static str) -> impl FnOnce(std::io::Error) -> NamespaceError {
    move |e| NamespaceError {
        step,
        source: Errno::from_raw(e.raw_os_error().unwrap_or(Errno::EIO as i32)),
    }
}

/// Makes a user namespace mapping only `uid` and `gid` to themselves, then
/// new PID, mount and IPC namespaces owned by it. Called after the switch
/// to the agent's user: the capabilities the new user namespace gives hold
/// nothing outside it, and the mapping lets the command be no one but the
/// agent.
pub fn enter(uid: u32, gid: u32) -> Result<(), NamespaceError> {
    // The uid switch made this process non-dumpable, which leaves its
    // /proc/self files root's and so the maps unwritable by it; dumpable
    // for the moment of writing them, then not again, so no process of the
    // agent's may read this one's memory (Landlock keeps the command from
    // tracing it in any case).
    nix::sys::prctl::set_dumpable(true).map_err(step("set dumpable"))?;
    unshare(CloneFlags::CLONE_NEWUSER).map_err(step("unshare user namespace"))?;
    write_map("/proc/self/setgroups", "deny")?;
    write_map("/proc/self/uid_map", &format!("{uid} {uid} 1\n"))?;
    write_map("/proc/self/gid_map", &format!("{gid} {gid} 1\n"))?;
    nix::sys::prctl::set_dumpable(false).map_err(step("clear dumpable"))?;
    unshare(CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC)
        .map_err(step("unshare pid, mount and ipc namespaces"))
}

fn write_map(path: &'static str, text: &str) -> Result<(), NamespaceError> {
    std::fs::write(path, text).map_err(step_io(path))
}

/// In the new mount namespace (before Landlock, which forbids mount changes
/// after it): nothing mounted here reaches the host, `/proc` shows only
/// this PID namespace, and the TMPDIR is an empty tmpfs that goes with it,
/// of at most `tmpfs_bytes` (unbounded, a tmpfs may take half the host's
/// memory).
pub fn mount_private(tmpfs_bytes: Option<u64>) -> Result<(), NamespaceError> {
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(step("making / private"))?;
    let quiet = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        quiet | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(step("mounting /proc"))?;
    mount(
        Some("tmpfs"),
        Path::new(TMPDIR),
        Some("tmpfs"),
        quiet,
        Some(tmpfs_options(tmpfs_bytes).as_str()),
    )
    .map_err(step("mounting a tmpfs on the TMPDIR"))
}

/// The TMPDIR's mount options. Its inodes are bounded with its bytes (one
/// per 16 KiB, at least 1024): an inode costs kernel memory that `size=`
/// does not count, and a tmpfs left to its default allows one per page of
/// the host's memory.
fn tmpfs_options(bytes: Option<u64>) -> String {
    match bytes {
        Some(bytes) => format!(
            "mode=0700,size={bytes},nr_inodes={}",
            (bytes / (16 * 1024)).max(1024)
        ),
        None => "mode=0700".into(),
    }
}

/// Forks. A new PID namespace takes only the children of whoever made it,
/// so the launcher forks once: the child is the namespace's first process.
/// It cannot exec to get there: not uid 0 in its user namespace, it would
/// lose the capabilities the mounts take.
#[allow(unsafe_code)]
pub fn fork_once(what: &'static str) -> Result<Option<Pid>, NamespaceError> {
    // SAFETY: the launcher is single-threaded (the worker execs it fresh for
    // each command and it starts no thread), so the child may run any code.
    match unsafe { fork() }.map_err(step(what))? {
        ForkResult::Parent { child } => Ok(Some(child)),
        ForkResult::Child => Ok(None),
    }
}

/// The launcher outside the namespace: it waits for the namespace's first
/// process and ends with its status, so the worker's capture and exit path
/// see the command's. The deadline's SIGINT and SIGTERM reach the command
/// through the process group; this process outlives them to report how the
/// command took them (SIGKILL still ends it, and the namespace with it).
pub fn wait_outside(child: Pid) -> i32 {
    let mut held = SigSet::empty();
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        held.add(sig);
    }
    // Blocked, they stay pending until this process exits with the
    // command's status. The child forked before this keeps its own mask.
    // Should blocking fail, a signal ends this process as it would have the
    // command, and the namespace with it: only the status reported differs.
    let _ = held.thread_block();
    reap_until(child)
}

/// Reaps every child until `command` ends, then gives its status (a signal's
/// number plus 128). As the namespace's first process this reaps what the
/// command orphaned; when it exits, the kernel kills whatever is left in the
/// namespace.
pub fn reap_until(command: Pid) -> i32 {
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == command => return code,
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid == command => return 128 + sig as i32,
            Ok(_) | Err(Errno::EINTR) => {}
            // No child left: the command is gone without a status.
            Err(_) => return 128 + Signal::SIGKILL as i32,
        }
    }
}

/// The namespace's first process dies with the launcher, and the namespace
/// with it: a launcher killed outright leaves nothing running. (A launcher
/// killed in the instant before this is set is SIGKILLed by the worker,
/// which kills the command's cgroup as well.)
pub fn die_with_launcher() -> Result<(), NamespaceError> {
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(step("parent-death signal"))
}

/// The user the probe takes: the overflow id, which owns nothing.
const NOBODY: u32 = 65534;

/// `collegium-worker-shell probe-namespaces`, run once at the worker's
/// start: from root, takes an unprivileged user and makes and mounts the
/// namespaces as a launch does, so the handshake reports what commands
/// will get. Exits 0 where every step worked.
pub fn probe_main() -> std::process::ExitCode {
    match probe() {
        Ok(0) => std::process::ExitCode::SUCCESS,
        Ok(_) => std::process::ExitCode::FAILURE,
        Err(error) => {
            eprintln!("collegium-worker-shell: no command namespaces: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn probe() -> Result<i32, NamespaceError> {
    use nix::unistd::{Gid, Uid, setgroups, setresgid, setresuid};
    let (gid, uid) = (Gid::from_raw(NOBODY), Uid::from_raw(NOBODY));
    setgroups(&[gid]).map_err(step("setgroups"))?;
    setresgid(gid, gid, gid).map_err(step("setresgid"))?;
    setresuid(uid, uid, uid).map_err(step("setresuid"))?;
    enter(NOBODY, NOBODY)?;
    match fork_once("fork into the pid namespace")? {
        Some(child) => Ok(reap_until(child)),
        None => {
            // A bounded tmpfs, as every launch mounts one.
            let code = match mount_private(Some(1024 * 1024)) {
                Ok(()) => 0,
                Err(error) => {
                    eprintln!("collegium-worker-shell: no command namespaces: {error}");
                    1
                }
            };
            std::process::exit(code)
        }
    }
}
