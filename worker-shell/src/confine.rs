//! The command's Landlock ruleset (ARCHITECTURE §4): the agent's home
//! read-write, its workspace read-only, its private TMPDIR read-write, the
//! system's directories read and execute, a few devices usable, its own
//! `/proc` readable, and nothing else. The
//! network is not restricted: A2 leaves the shell's network to the
//! approval. Below the configured ABI floor the launcher refuses to run.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus,
};

use crate::request::LaunchRequest;

/// The ABI this build asks for; the kernel may offer less.
const ASKED: ABI = ABI::V5;

/// Directories a command may read and execute from.
const SYSTEM: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt"];
/// Devices a command may read and write.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/urandom", "/dev/tty"];

#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error("Landlock: {0}")]
    Landlock(String),
    #[error(
        "this kernel's Landlock ABI is {found}, below the configured floor {floor}; the shell does not run unconfined"
    )]
    BelowFloor { found: u8, floor: u8 },
}

/// The kernel's Landlock ABI, 0 where it has none.
pub fn kernel_abi() -> u8 {
    // Probing with each ABI from the newest down: the first the kernel
    // enforces fully is what it offers.
    for (abi, number) in [
        (ABI::V5, 5),
        (ABI::V4, 4),
        (ABI::V3, 3),
        (ABI::V2, 2),
        (ABI::V1, 1),
    ] {
        let probe = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .and_then(Ruleset::create);
        if probe.is_ok() {
            return number;
        }
    }
    0
}

/// Restricts this (single-threaded) process to the ruleset; it sets
/// no-new-privileges as it does (§6.1).
pub fn restrict(request: &LaunchRequest) -> Result<(), ConfineError> {
    let found = kernel_abi();
    if found < request.landlock_floor {
        return Err(ConfineError::BelowFloor {
            found,
            floor: request.landlock_floor,
        });
    }
    let landlock = |e: &dyn std::fmt::Display| ConfineError::Landlock(e.to_string());
    let all = AccessFs::from_all(ASKED);
    let read = AccessFs::from_read(ASKED);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .map_err(|e| landlock(&e))?
        .create()
        .map_err(|e| landlock(&e))?;
    let mut allow = |path: &Path, access| -> Result<(), ConfineError> {
        // A system directory this host lacks is simply not granted.
        let Ok(fd) = PathFd::new(path) else {
            return Ok(());
        };
        ruleset
            .as_mut()
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| landlock(&e))?;
        Ok(())
    };
    allow(&request.home, all)?;
    // The command's own tmpfs, mounted by now (`namespaces`).
    allow(Path::new(crate::namespaces::TMPDIR), all)?;
    if let Some(workspace) = &request.workspace {
        allow(workspace, read)?;
    }
    for dir in SYSTEM {
        allow(Path::new(dir), read)?;
    }
    for device in DEVICES {
        allow(
            Path::new(device),
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev,
        )?;
    }
    allow(
        Path::new("/proc"),
        AccessFs::from_read(ASKED) & !AccessFs::Execute,
    )?;
    let status = ruleset.restrict_self().map_err(|e| landlock(&e))?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(ConfineError::BelowFloor {
            found: 0,
            floor: request.landlock_floor.max(1),
        });
    }
    Ok(())
}
