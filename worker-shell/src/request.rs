//! What the worker asks the launcher to run: everything the launcher needs,
//! computed by the worker from its own configuration, handed over on the
//! launcher's stdin so it never shows in a process listing.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::bounds::LaunchLimits;

/// One command to run as an agent's user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchRequest {
    pub uid: u32,
    pub gid: u32,
    /// The agent's supplementary groups (its own group only, normally).
    pub groups: Vec<u32>,
    /// The agent's home: read-write, and where the command starts.
    pub home: PathBuf,
    /// The agent's workspace: read-only to the command.
    pub workspace: Option<PathBuf>,
    /// The approved bytes, in one argument slot of `bash -c --`.
    pub command: String,
    /// The per-command cgroup to join, where the host has cgroup v2.
    pub cgroup: Option<PathBuf>,
    /// The lowest Landlock ABI the launcher runs under (§6.1).
    pub landlock_floor: u8,
    /// The rlimits and TMPDIR size the command runs under (§6.1).
    #[serde(default)]
    pub limits: LaunchLimits,
    /// A secret of this launch that a refusal's line carries: the request
    /// is gone by the time the command runs, so a command that exits with
    /// the refusal's status and words cannot pass for a refusal.
    #[serde(default)]
    pub nonce: String,
}

/// The exit status the launcher uses when it refuses before the command
/// ran; its stderr then starts with [`REFUSED`].
pub const LAUNCH_REFUSED: i32 = 125;
/// How a refusal's line on stderr begins; the launch's nonce and `: `
/// follow.
pub const REFUSED: &str = "collegium-launch refused ";

/// The directories a clean `PATH` lists: root-owned system directories.
pub const CLEAN_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
