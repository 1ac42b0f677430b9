//! The launcher (ARCHITECTURE §4, the jailer pattern): a fresh, single-
//! threaded process the worker execs for each command. It reads its
//! request from stdin, then, in order: puts `/dev/null` on stdin, closes
//! every other inherited descriptor, starts a session, sets rlimits, joins
//! the command's cgroup, drops to the agent's groups, gid and uid (from
//! root, which clears every capability), checks that no capability is left,
//! makes the command's own user, PID, mount and IPC namespaces (a private
//! `/proc` and TMPDIR; `namespaces`), sets no-new-privileges and Landlock,
//! and execs `bash -c -- COMMAND` with an allowlisted environment. It never changes
//! user inside a multi-threaded process, and never runs a command it could
//! not confine: each refusal exits with `LAUNCH_REFUSED` naming its step.
//! In its reach mode (`probe-reach`, §6.4) it takes every step up to the
//! exec, then connects to the endpoints it was given instead (`reach`).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::Command;

use caps::CapSet;
use nix::sys::resource::{Resource, setrlimit};
use nix::unistd::{Gid, Uid, setgroups, setresgid, setresuid, setsid};

use crate::bounds::LaunchLimits;
use crate::reach::{self, ReachRequest};
use crate::request::{CLEAN_PATH, LAUNCH_REFUSED, LaunchRequest, REFUSED};
use crate::{confine, namespaces};

/// Runs the launcher; returns only to exit with a refusal.
pub fn main() -> std::process::ExitCode {
    refuse_or_never(launch_command)
}

/// `collegium-shell-launch probe-reach`: confined exactly as a command is,
/// but with no bash and no command, tries to connect to each endpoint the
/// request names and prints what each connect met as JSON (§6.4; `reach`).
pub fn reach_main() -> std::process::ExitCode {
    refuse_or_never(launch_reach)
}

fn refuse_or_never(
    launch: fn(&mut String) -> Result<std::convert::Infallible, String>,
) -> std::process::ExitCode {
    let mut nonce = String::new();
    match launch(&mut nonce) {
        Ok(never) => match never {},
        Err(refusal) => {
            eprintln!("{REFUSED}{nonce}: {refusal}");
            std::process::ExitCode::from(LAUNCH_REFUSED as u8)
        }
    }
}

fn launch_command(nonce: &mut String) -> Result<std::convert::Infallible, String> {
    let request: LaunchRequest = read_request()?;
    nonce.clone_from(&request.nonce);
    confine_as_agent(&request)?;
    Err(exec_bash(&request))
}

fn launch_reach(nonce: &mut String) -> Result<std::convert::Infallible, String> {
    let request: ReachRequest = read_request()?;
    nonce.clone_from(&request.launch.nonce);
    confine_as_agent(&request.launch)?;
    let attempts = reach::attempt_all(&request.endpoints);
    let text = serde_json::to_string(&attempts).map_err(|e| format!("the report: {e}"))?;
    println!("{text}");
    std::process::exit(0)
}

/// Every step between the request and the command, in order; returns in
/// the command's own process, its namespace's first process waiting
/// outside it.
fn confine_as_agent(request: &LaunchRequest) -> Result<(), String> {
    if request.command.contains('\0') {
        return Err("the command contains a NUL byte".into());
    }
    if !Uid::effective().is_root() {
        return Err("the launcher must start as root to take the agent's user".into());
    }
    detach_stdin()?;
    close_inherited()?;
    setsid().map_err(|e| format!("setsid: {e}"))?;
    setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(|e| format!("rlimit core: {e}"))?;
    limit_before_the_switch(&request.limits)?;
    if let Some(cgroup) = &request.cgroup {
        std::fs::write(cgroup.join("cgroup.procs"), "0\n")
            .map_err(|e| format!("joining {}: {e}", cgroup.display()))?;
    }
    if let Some(bytes) = request.limits.file_bytes {
        // Set after the cgroup is joined: while the home is over its cap
        // it is 0, and nothing of the launcher's own writes then.
        setrlimit(Resource::RLIMIT_FSIZE, bytes, bytes)
            .map_err(|e| format!("rlimit fsize: {e}"))?;
    }
    become_agent(request)?;
    namespaces::enter(request.uid, request.gid).map_err(|e| e.to_string())?;
    if let Some(first) = namespaces::fork_once("fork into the pid namespace")
        .map_err(|e| fork_refused(&e, request))?
    {
        std::process::exit(namespaces::wait_outside(first));
    }
    namespaces::die_with_launcher().map_err(|e| e.to_string())?;
    namespaces::mount_private(request.limits.tmpfs_bytes).map_err(|e| e.to_string())?;
    confine::restrict(request).map_err(|e| e.to_string())?;
    // The namespace's first process stays to reap what the command orphans;
    // the command is its child.
    if let Some(command) =
        namespaces::fork_once("fork the command").map_err(|e| fork_refused(&e, request))?
    {
        std::process::exit(namespaces::reap_until(command));
    }
    Ok(())
}

/// Why a fork of the launcher's failed. One refused for want of room, with
/// a process bound set, is that bound: it counts every process of the
/// agent's user on this host, so its other commands may hold it (§6.1).
fn fork_refused(error: &namespaces::NamespaceError, request: &LaunchRequest) -> String {
    match request.limits.processes {
        Some(bound) if error.out_of_processes() => format!(
            "the agent's user is at its process bound of {bound} (max_processes), which counts every process it runs on this host, its other commands' among them ({error})"
        ),
        _ => error.to_string(),
    }
}

/// The rlimits that bound processes and memory where no cgroup controller
/// does (§6.1), set as root with the hard limit equal to the soft, so the
/// command can lower them but never raise them again.
fn limit_before_the_switch(limits: &LaunchLimits) -> Result<(), String> {
    if let Some(processes) = limits.processes {
        // RLIMIT_NPROC is set here, before the user namespace is made, for
        // what the kernel (5.14 and later) charges it to: each process is
        // counted in the ucounts of its user in its own user namespace and
        // in every ancestor's (kernel/ucount.c), and a fork is refused when
        // any level is over (`is_rlimit_overlimit`). The first level is the
        // command's namespace, checked against this rlimit; the next is the
        // agent's uid on the host, checked against the limit its creator
        // held when the namespace was made (`rlimit_max`, taken then). So it
        // bounds the command's own processes and threads AND every process
        // of the agent's user on the host, its other commands and this
        // launcher among them. Set after the namespace exists, the second
        // level would stay unbounded.
        setrlimit(Resource::RLIMIT_NPROC, processes, processes)
            .map_err(|e| format!("rlimit nproc: {e}"))?;
    }
    if let Some(bytes) = limits.data_bytes {
        // RLIMIT_DATA, not RLIMIT_AS: it counts the private writable memory
        // a process maps (heap, anonymous mappings), which is what a memory
        // hog grows, and not the address space runtimes reserve without
        // using (Go, the JVM and V8 reserve gigabytes PROT_NONE, which
        // RLIMIT_AS would refuse at start). It is per process, and shared
        // memory (memfd, SysV segments) is not in it: docs/workers.md.
        setrlimit(Resource::RLIMIT_DATA, bytes, bytes).map_err(|e| format!("rlimit data: {e}"))?;
    }
    Ok(())
}

/// Execs the command; returns only why it could not.
fn exec_bash(request: &LaunchRequest) -> String {
    // std's exec resets the signal mask and SIGPIPE to their defaults.
    let error = Command::new("/bin/bash")
        .arg("-c")
        .arg("--")
        .arg(&request.command)
        .env_clear()
        .env("PATH", CLEAN_PATH)
        .env("HOME", &request.home)
        .env("TMPDIR", namespaces::TMPDIR)
        .env("LANG", "C.UTF-8")
        .env("SHELL", "/bin/bash")
        .current_dir(&request.home)
        .exec();
    format!("exec bash: {error}")
}

pub(crate) fn read_request<T: serde::de::DeserializeOwned>() -> Result<T, String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("reading the request: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("the request is not valid: {e}"))
}

/// The request came on stdin; the command reads `/dev/null` there.
fn detach_stdin() -> Result<(), String> {
    let null = std::fs::File::open("/dev/null").map_err(|e| format!("/dev/null: {e}"))?;
    nix::unistd::dup2_stdin(&null).map_err(|e| format!("dup2 stdin: {e}"))?;
    Ok(())
}

/// Closes every descriptor above stderr, so nothing of the worker's (its
/// socket, its audit log, its configuration) reaches the command.
fn close_inherited() -> Result<(), String> {
    let open: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| format!("listing descriptors: {e}"))?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in open {
        // The listing's own descriptor is gone by now: EBADF is fine.
        let _ = nix::unistd::close(fd);
    }
    let stray = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| format!("listing descriptors: {e}"))?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|fd| *fd > 2)
        .count();
    // One descriptor is the listing's own directory handle.
    if stray > 1 {
        return Err(format!("{stray} descriptors are still open"));
    }
    Ok(())
}

/// Takes the agent's groups, gid and uid.
fn become_agent(request: &LaunchRequest) -> Result<(), String> {
    become_user(request.uid, request.gid, &request.groups)
}

/// Takes a user's groups, gid and uid. The switch from root clears the
/// permitted, effective and ambient sets; the inheritable set is cleared
/// first, and all four are checked empty after.
pub(crate) fn become_user(uid: u32, gid: u32, groups: &[u32]) -> Result<(), String> {
    for set in [CapSet::Inheritable, CapSet::Ambient] {
        caps::clear(None, set).map_err(|e| format!("clearing {set:?}: {e}"))?;
    }
    let groups: Vec<Gid> = groups.iter().copied().map(Gid::from_raw).collect();
    setgroups(&groups).map_err(|e| format!("setgroups: {e}"))?;
    let (gid, uid) = (Gid::from_raw(gid), Uid::from_raw(uid));
    setresgid(gid, gid, gid).map_err(|e| format!("setresgid: {e}"))?;
    setresuid(uid, uid, uid).map_err(|e| format!("setresuid: {e}"))?;
    if uid.is_root() || Uid::effective().is_root() {
        return Err("an agent's command never runs as root".into());
    }
    for set in [
        CapSet::Inheritable,
        CapSet::Permitted,
        CapSet::Effective,
        CapSet::Ambient,
    ] {
        let left = caps::read(None, set).map_err(|e| format!("reading {set:?}: {e}"))?;
        if !left.is_empty() {
            return Err(format!(
                "capabilities left in {set:?} after the switch: {left:?}"
            ));
        }
    }
    Ok(())
}
