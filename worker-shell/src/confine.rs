//! The command's Landlock ruleset (ARCHITECTURE §4): the agent's home
//! read-write, its workspace read-only, its private TMPDIR read-write, the
//! system's directories read and execute, a few devices usable, its own
//! `/proc` readable, and nothing else. The
//! network is not restricted: A2 leaves the shell's network to the
//! approval. Below the configured ABI floor the launcher refuses to run.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope,
};

use crate::request::LaunchRequest;

/// The ABI this build asks for: the newest this build knows. The kernel may
/// offer less, and what it lacks is dropped (best effort) down to the floor
/// the launch checks first; what it offers is all used, so a newer kernel
/// confines further without a new build. From ABI 6 the command's domain
/// is scoped: it can neither connect to an abstract Unix socket made outside
/// it nor signal a process outside it (§6.1).
const ASKED: ABI = ABI::V10;

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
#[allow(unsafe_code)]
pub fn kernel_abi() -> u8 {
    // SAFETY: with a null attribute, a size of 0 and only the VERSION flag,
    // landlock_create_ruleset reads no memory and creates nothing: it
    // returns the ABI number, or -1 where Landlock is absent or disabled.
    // The crate keeps this query private, and probing rulesets cannot tell
    // ABIs apart that add no access right (6 adds scopes, 7 only flags).
    let version = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_landlock_create_ruleset,
            std::ptr::null::<nix::libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u8::try_from(version.max(0)).unwrap_or(u8::MAX)
}

/// `landlock_create_ruleset`'s flag asking for the ABI version (uapi).
const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;

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
        .scope(Scope::from_all(ASKED))
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
