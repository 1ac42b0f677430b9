//! A cgroup v2 `memory.max` for each read's child, where the host delegates
//! the memory controller (§3.4): the kernel then bounds the child's memory
//! at the cap even between two polls. Where it does not (a hybrid host
//! whose v2 hierarchy holds no controllers, a container), the polled
//! resident-memory cap and RLIMIT_AS bound the child alone, and Describe
//! says which.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// The directory under the hierarchy's root the worker's cgroups go in.
const DIRECTORY: &str = "collegium-pdf";

/// Where each child's cgroup is made.
#[derive(Debug)]
pub struct MemoryCgroups {
    root: PathBuf,
    next: AtomicU64,
}

/// One child's cgroup, removed when dropped (after its child is reaped).
#[derive(Debug)]
pub struct ChildCgroup {
    path: PathBuf,
}

impl MemoryCgroups {
    /// The worker's cgroup directory where the memory controller can be
    /// enabled in it: `named`, or `collegium-pdf` in the host's cgroup v2
    /// hierarchy. `None` where the host delegates no memory controller.
    pub fn detect(named: Option<PathBuf>) -> Option<Self> {
        let root = match named {
            Some(root) => root,
            None => {
                let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
                unified_mount(&mountinfo)?.join(DIRECTORY)
            }
        };
        match std::fs::create_dir(&root) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
        let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).ok()?;
        if !controllers.split_whitespace().any(|c| c == "memory") {
            return None;
        }
        std::fs::write(root.join("cgroup.subtree_control"), "+memory").ok()?;
        Some(Self {
            root,
            next: AtomicU64::new(0),
        })
    }

    /// A cgroup for the child `pid`, its memory bounded at `cap` with no
    /// swap to spill into.
    pub fn join(&self, pid: u32, cap: u64) -> std::io::Result<ChildCgroup> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self.root.join(format!("read-{}-{n}", std::process::id()));
        std::fs::create_dir(&path)?;
        let cgroup = ChildCgroup { path };
        std::fs::write(cgroup.path.join("memory.max"), cap.to_string())?;
        // Absent where the kernel has no swap accounting: nothing to spill.
        let _ = std::fs::write(cgroup.path.join("memory.swap.max"), "0");
        std::fs::write(cgroup.path.join("cgroup.procs"), pid.to_string())?;
        Ok(cgroup)
    }
}

impl ChildCgroup {
    /// Whether the kernel killed a process of this cgroup at `memory.max`.
    pub fn oom_killed(&self) -> bool {
        std::fs::read_to_string(self.path.join("memory.events"))
            .ok()
            .and_then(|events| {
                events.lines().find_map(|line| {
                    line.strip_prefix("oom_kill ")
                        .and_then(|n| n.trim().parse::<u64>().ok())
                })
            })
            .is_some_and(|n| n > 0)
    }
}

impl Drop for ChildCgroup {
    fn drop(&mut self) {
        // Empty once its child is reaped; a cgroup left behind holds no
        // process and costs nothing.
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// The mount point of the first cgroup v2 filesystem in `mountinfo`'s text
/// (proc(5): the filesystem type is the first field after " - ").
pub fn unified_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (mount, filesystem) = line.split_once(" - ")?;
        if filesystem.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        mount.split_whitespace().nth(4).map(PathBuf::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_4_the_v2_hierarchy_is_found_on_a_hybrid_host() {
        let mountinfo = "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n\
                         41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            unified_mount(mountinfo),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
    }

    #[test]
    fn s3_4_a_directory_without_a_memory_controller_gives_no_cgroups() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(MemoryCgroups::detect(Some(dir.path().join("pdf"))).is_none());
    }
}
