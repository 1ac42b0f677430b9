//! What bounds each command (§6.1; issue 16 item 3): its processes and
//! memory through the cgroup controllers where the host delegates them to
//! the worker's cgroup directory, through rlimits the launcher sets where it
//! does not; the size of a file it writes always through `RLIMIT_FSIZE`; its
//! agent's home through a measure after each command. The handshake reports
//! which, and the daemon refuses a worker that reports none.

use collegium_control::tools::shell_bounds::ShellBounds;
use serde::{Deserialize, Serialize};

/// How one bound is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// A controller of the command's own cgroup: it bounds the command
    /// whole, and the kernel counts each time the bound is met.
    Cgroup,
    /// An rlimit the launcher sets: per process (for processes, per user),
    /// and the kernel reports meeting it only as a failed call.
    Rlimit,
}

impl Via {
    fn name(self) -> &'static str {
        match self {
            Self::Cgroup => "cgroup",
            Self::Rlimit => "rlimit",
        }
    }
}

/// How this worker bounds each command, decided once at its start from what
/// its cgroup directory may delegate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mechanisms {
    pub processes: Via,
    pub memory: Via,
}

impl Mechanisms {
    /// Rlimits alone: a worker without controllers to delegate.
    pub const RLIMITS: Self = Self {
        processes: Via::Rlimit,
        memory: Via::Rlimit,
    };

    /// The handshake's `bounds`, one `what=how` each.
    pub fn report(&self) -> Vec<String> {
        vec![
            format!("processes={}", self.processes.name()),
            format!("memory={}", self.memory.name()),
            "file_size=rlimit".into(),
            "home=measured".into(),
        ]
    }
}

/// The rlimits and sizes the launcher applies to one command; what is
/// unset is left as the worker's own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchLimits {
    /// `RLIMIT_NPROC`, where no pids controller bounds the command.
    pub processes: Option<u64>,
    /// `RLIMIT_DATA` in bytes, where no memory controller bounds the command.
    pub data_bytes: Option<u64>,
    /// `RLIMIT_FSIZE` in bytes: 0 while the home is over its cap.
    pub file_bytes: Option<u64>,
    /// The size of the command's private TMPDIR, in bytes.
    pub tmpfs_bytes: Option<u64>,
}

/// The bounds one command runs under, and how each is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InForce {
    pub bounds: ShellBounds,
    pub mechanisms: Mechanisms,
    /// The home is over its cap: no file may grow.
    pub shrink_only: bool,
}

impl InForce {
    /// What the launcher sets for this command.
    pub fn launch_limits(&self) -> LaunchLimits {
        LaunchLimits {
            processes: (self.mechanisms.processes == Via::Rlimit)
                .then_some(self.bounds.max_processes),
            data_bytes: (self.mechanisms.memory == Via::Rlimit)
                .then_some(self.bounds.memory_bytes()),
            file_bytes: Some(if self.shrink_only {
                0
            } else {
                self.bounds.file_bytes()
            }),
            // Never larger than the memory bound: a tmpfs is memory, and
            // unbounded it could take half the host's (§6.1).
            tmpfs_bytes: Some(self.bounds.memory_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_1_the_launcher_gets_rlimits_only_where_no_controller_bounds() {
        let bounds = ShellBounds {
            max_processes: 10,
            memory_mib: 2,
            max_file_mib: 3,
            home_cap_mib: 4,
        };
        let rlimits = InForce {
            bounds,
            mechanisms: Mechanisms::RLIMITS,
            shrink_only: false,
        };
        assert_eq!(
            rlimits.launch_limits(),
            LaunchLimits {
                processes: Some(10),
                data_bytes: Some(2 << 20),
                file_bytes: Some(3 << 20),
                tmpfs_bytes: Some(2 << 20),
            }
        );
        let cgroup = InForce {
            bounds,
            mechanisms: Mechanisms {
                processes: Via::Cgroup,
                memory: Via::Cgroup,
            },
            shrink_only: true,
        };
        assert_eq!(
            cgroup.launch_limits(),
            LaunchLimits {
                processes: None,
                data_bytes: None,
                file_bytes: Some(0),
                tmpfs_bytes: Some(2 << 20),
            }
        );
        assert_eq!(
            Mechanisms::RLIMITS.report(),
            [
                "processes=rlimit",
                "memory=rlimit",
                "file_size=rlimit",
                "home=measured"
            ]
        );
    }
}
