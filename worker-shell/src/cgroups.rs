//! Where per-command cgroups live (§6.1, ARCHITECTURE §4): a directory of
//! the host's cgroup v2 hierarchy, wherever the host mounts it. A systemd
//! host in unified mode mounts it at `/sys/fs/cgroup`; a hybrid host at
//! `/sys/fs/cgroup/unified`, beside the v1 controllers. Looking only at the
//! first left a hybrid host running every command without its kill switch,
//! so the mount is found the way the kernel reports it, in
//! `/proc/self/mountinfo`.
//!
//! Several workers may share one root (two deployments on a host, a test
//! suite's workers): each names its commands' cgroups after its own pid, and
//! a starting worker sweeps only what a worker no longer running left.

use std::path::{Path, PathBuf};

use collegium_control::tools::shell_bounds::ShellBounds;

use crate::bounds::{Mechanisms, Via};
use crate::run::CommandCgroup;

/// The directory under the hierarchy's root the worker's cgroups go in.
const DIRECTORY: &str = "collegium-shell";
/// `statfs`'s filesystem type of a cgroup v2 mount.
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;

#[derive(Debug, thiserror::Error)]
pub enum CgroupRootError {
    #[error("{root}: {source}")]
    Io {
        root: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is not in a cgroup v2 hierarchy")]
    NotCgroup2(PathBuf),
    #[error(
        "{0} has no cgroup.kill: this kernel cannot kill a cgroup whole (Linux 5.14 or later can)"
    )]
    NoKill(PathBuf),
    #[error("this host mounts no cgroup v2 hierarchy")]
    NoHierarchy,
    #[error("/proc/self/cgroup names no cgroup v2 path for this process")]
    NoOwnCgroup,
}

/// The worker's directory in the host's cgroup v2 hierarchy, where the host
/// mounts one.
pub fn host_root() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    unified_mount(&mountinfo).map(|mount| mount.join(DIRECTORY))
}

/// The leaf the worker moves itself into, inside a cgroup delegated to it.
pub const WORKER_LEAF: &str = "worker";

/// The worker's own cgroup, which its unit delegates to it (systemd's
/// `Delegate=yes`), made ready to hold its commands' cgroups: the worker
/// moves itself into the leaf [`WORKER_LEAF`] first, since cgroup v2 lets
/// a cgroup with children enable controllers for them only while it holds
/// no process itself. Each command's cgroup then sits inside the unit's,
/// so stopping the unit, or the worker dying, takes every command with it
/// (`KillMode=control-group`), and a restarted unit starts from an empty
/// cgroup. Runs before the worker starts any thread.
pub fn own_delegated() -> Result<PathBuf, CgroupRootError> {
    let read = |path: &str| {
        std::fs::read_to_string(path).map_err(|source| CgroupRootError::Io {
            root: PathBuf::from(path),
            source,
        })
    };
    let mount =
        unified_mount(&read("/proc/self/mountinfo")?).ok_or(CgroupRootError::NoHierarchy)?;
    let cgroup = read("/proc/self/cgroup")?;
    let own = own_path(&cgroup).ok_or(CgroupRootError::NoOwnCgroup)?;
    let own = mount.join(own.trim_start_matches('/'));
    prepare(&own)?;
    let leaf = own.join(WORKER_LEAF);
    let io = |source| CgroupRootError::Io {
        root: leaf.clone(),
        source,
    };
    std::fs::create_dir_all(&leaf).map_err(io)?;
    std::fs::write(leaf.join("cgroup.procs"), std::process::id().to_string()).map_err(io)?;
    Ok(own)
}

/// The cgroup v2 path in `/proc/self/cgroup`'s text: its `0::PATH` line.
pub fn own_path(cgroup: &str) -> Option<&str> {
    cgroup
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .filter(|path| path.starts_with('/'))
}

/// The mount point of the first cgroup v2 filesystem in `mountinfo`'s text.
pub fn unified_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        // Fields before " - " are the mount's own; the first after it is
        // the filesystem type (proc(5)).
        let (mount, filesystem) = line.split_once(" - ")?;
        if filesystem.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        mount
            .split_whitespace()
            .nth(4)
            .map(|p| PathBuf::from(unescape(p)))
    })
}

/// A mountinfo path with its octal escapes (`\040` for a space) decoded.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4);
        match code.and_then(|c| u8::from_str_radix(c, 8).ok()) {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Makes `root` where missing and checks it can hold killable cgroups:
/// it is on a cgroup v2 mount and the kernel offers `cgroup.kill`.
pub fn prepare(root: &Path) -> Result<(), CgroupRootError> {
    let io = |source| CgroupRootError::Io {
        root: root.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(root).map_err(io)?;
    let stat = rustix::fs::statfs(root).map_err(|e| io(e.into()))?;
    #[allow(clippy::useless_conversion)] // f_type's width differs by target.
    if i64::from(stat.f_type) != CGROUP2_SUPER_MAGIC {
        return Err(CgroupRootError::NotCgroup2(root.to_path_buf()));
    }
    if !root.join("cgroup.kill").exists() {
        return Err(CgroupRootError::NoKill(root.to_path_buf()));
    }
    Ok(())
}

/// The controllers that bound a command whole (§6.1).
const BOUNDING: [&str; 2] = ["pids", "memory"];

/// How each command under `root` can be bounded: by a controller where
/// `root`'s parent delegates it (it is in `root`'s `cgroup.controllers`) and
/// it can be enabled for `root`'s children (`cgroup.subtree_control`), by an
/// rlimit otherwise. The worker never enables a controller above `root`: the
/// hierarchy's upper levels are the host's (systemd's) to arrange.
pub fn delegate(root: &Path) -> Mechanisms {
    let offered = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
    for controller in BOUNDING {
        if offered.split_whitespace().any(|c| c == controller)
            && let Err(error) = std::fs::write(
                root.join("cgroup.subtree_control"),
                format!("+{controller}"),
            )
        {
            // The rlimit takes over; the handshake says which.
            eprintln!(
                "collegium-worker-shell: the {controller} controller is offered but could not be enabled under {}: {error}",
                root.display()
            );
        }
    }
    let enabled = std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
    let via = |controller: &str| {
        if enabled
            .split_whitespace()
            .any(|c| c.trim_start_matches('+') == controller)
        {
            Via::Cgroup
        } else {
            Via::Rlimit
        }
    };
    Mechanisms {
        processes: via("pids"),
        memory: via("memory"),
    }
}

/// Writes a command's bounds into its cgroup, before the launcher joins
/// it: processes and threads (`pids.max`), memory (`memory.max`, no swap
/// to spill into, and the whole command killed when the kernel must kill
/// one of it, so no half-killed command runs on), for each bound a
/// controller enforces.
pub fn limit(
    cgroup: &Path,
    bounds: &ShellBounds,
    mechanisms: &Mechanisms,
) -> Result<(), std::io::Error> {
    let write = |file: &str, value: String| {
        std::fs::write(cgroup.join(file), value)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{file}: {e}")))
    };
    if mechanisms.processes == Via::Cgroup {
        write("pids.max", bounds.max_processes.to_string())?;
    }
    if mechanisms.memory == Via::Cgroup {
        write("memory.max", bounds.memory_bytes().to_string())?;
        // Absent where the host has no swap accounting or no oom.group.
        for (file, value) in [("memory.swap.max", "0"), ("memory.oom.group", "1")] {
            if cgroup.join(file).exists() {
                write(file, value.into())?;
            }
        }
    }
    Ok(())
}

/// What the kernel counted of a command meeting its cgroup's bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Events {
    /// Forks refused at `pids.max` (`pids.events`, `max`).
    pub forks_refused: u64,
    /// Processes the kernel killed at `memory.max` (`memory.events`,
    /// `oom_kill`).
    pub oom_kills: u64,
}

/// The events of a command's cgroup, read before it is removed; a file a
/// controller that is not enabled lacks counts nothing.
pub fn events(cgroup: &Path) -> Events {
    let count = |file: &str, key: &str| {
        std::fs::read_to_string(cgroup.join(file))
            .ok()
            .and_then(|text| counter(&text, key))
            .unwrap_or(0)
    };
    Events {
        forks_refused: count("pids.events", "max"),
        oom_kills: count("memory.events", "oom_kill"),
    }
}

/// The value of `key` in a flat-keyed cgroup file (`key value` lines).
fn counter(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok())?
    })
}

/// The name of a command's cgroup: the worker's pid, then the call's digest.
pub fn command_name(worker: u32, call: &str) -> String {
    format!("cmd-{worker}-{call}")
}

/// Kills and removes what a worker no longer running left under `root`,
/// and what the worker `me` made: at its start that is nothing, at its
/// stop every command still running. Nothing an agent starts outlives its
/// command, even across a crash or a stop.
pub fn sweep(root: &Path, me: u32) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(worker) = name.to_str().and_then(owner) else {
            continue;
        };
        if worker == me || !is_running_worker(worker) {
            drop(CommandCgroup::adopt(entry.path()));
        }
    }
}

/// The pid of the worker a command cgroup's name says made it; a name from
/// before names carried it (`cmd-DIGEST`) counts as left by no one.
fn owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("cmd-")?;
    match rest.split_once('-') {
        Some((pid, _)) => pid.parse().ok().or(Some(0)),
        None => Some(0),
    }
}

/// Whether `pid` is a running process of this same program.
fn is_running_worker(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    let (Ok(theirs), Ok(mine)) = (
        std::fs::read_link(format!("/proc/{pid}/exe")),
        std::env::current_exe(),
    ) else {
        return false;
    };
    theirs == mine
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIFIED: &str = "\
24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
31 24 0:27 / /sys/fs/cgroup rw,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate
";
    const HYBRID: &str = "\
30 24 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
40 30 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 30 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const V1_ONLY: &str = "\
30 24 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
";

    #[test]
    fn s6_1_the_own_cgroup_is_the_v2_line_of_proc_self_cgroup() {
        let hybrid = "9:name=systemd:/system.slice/x.service\n4:memory:/x\n0::/system.slice/collegium-worker-shell.service\n";
        assert_eq!(
            own_path(hybrid),
            Some("/system.slice/collegium-worker-shell.service")
        );
        assert_eq!(own_path("0::/\n"), Some("/"));
        assert_eq!(own_path("4:memory:/x\n"), None);
        assert_eq!(own_path("0::garbage\n"), None);
    }

    #[test]
    fn s6_1_the_v2_hierarchy_is_found_where_a_unified_host_mounts_it() {
        assert_eq!(unified_mount(UNIFIED), Some("/sys/fs/cgroup".into()));
    }

    #[test]
    fn s6_1_the_v2_hierarchy_is_found_where_a_hybrid_host_mounts_it() {
        assert_eq!(unified_mount(HYBRID), Some("/sys/fs/cgroup/unified".into()));
    }

    #[test]
    fn s6_1_a_host_with_v1_controllers_only_has_no_v2_hierarchy() {
        assert_eq!(unified_mount(V1_ONLY), None);
    }

    #[test]
    fn a_mount_point_with_a_space_is_decoded() {
        let line = "41 30 0:38 / /srv/cg\\040two rw - cgroup2 cgroup2 rw\n";
        assert_eq!(unified_mount(line), Some("/srv/cg two".into()));
    }

    #[test]
    fn s6_1_controllers_the_parent_delegates_bound_commands_and_others_fall_to_rlimits() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::write(root.join("cgroup.controllers"), "cpu pids hugetlb\n").expect("write");
        assert_eq!(
            delegate(root),
            Mechanisms {
                processes: Via::Cgroup,
                memory: Via::Rlimit
            }
        );
        assert_eq!(
            std::fs::read_to_string(root.join("cgroup.subtree_control")).expect("read"),
            "+pids",
            "only what is offered is asked for"
        );
        let bare = tempfile::tempdir().expect("tempdir");
        std::fs::write(bare.path().join("cgroup.controllers"), "hugetlb\n").expect("write");
        assert_eq!(delegate(bare.path()), Mechanisms::RLIMITS);
    }

    #[test]
    fn s6_1_a_cgroups_bounds_are_written_and_its_events_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cgroup = dir.path();
        std::fs::write(cgroup.join("memory.swap.max"), "max\n").expect("write");
        let bounds = ShellBounds {
            max_processes: 64,
            memory_mib: 2,
            max_file_mib: 1,
            home_cap_mib: 1,
        };
        let both = Mechanisms {
            processes: Via::Cgroup,
            memory: Via::Cgroup,
        };
        limit(cgroup, &bounds, &both).expect("limited");
        let read = |f: &str| std::fs::read_to_string(cgroup.join(f)).expect("read");
        assert_eq!(read("pids.max"), "64");
        assert_eq!(read("memory.max"), (2u64 << 20).to_string());
        assert_eq!(read("memory.swap.max"), "0");
        assert!(!cgroup.join("memory.oom.group").exists());
        std::fs::write(cgroup.join("pids.events"), "max 7\n").expect("write");
        std::fs::write(
            cgroup.join("memory.events"),
            "low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\noom_group_kill 1\n",
        )
        .expect("write");
        assert_eq!(
            events(cgroup),
            Events {
                forks_refused: 7,
                oom_kills: 2
            }
        );
        let none = tempfile::tempdir().expect("tempdir");
        assert_eq!(events(none.path()), Events::default());
        limit(none.path(), &bounds, &Mechanisms::RLIMITS).expect("nothing to write");
        assert!(!none.path().join("pids.max").exists());
    }

    #[test]
    fn s6_1_a_directory_outside_a_cgroup_hierarchy_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("cgroups");
        assert!(matches!(
            prepare(&root),
            Err(CgroupRootError::NotCgroup2(_))
        ));
    }

    #[test]
    fn s6_1_a_sweep_leaves_a_running_workers_commands_alone() {
        assert_eq!(owner("cmd-41-abc"), Some(41));
        assert_eq!(owner("cmd-abc"), Some(0), "an older name: left by no one");
        assert_eq!(owner("other"), None, "not a command's cgroup");
        assert!(is_running_worker(std::process::id()));
        assert!(!is_running_worker(0));
    }
}
