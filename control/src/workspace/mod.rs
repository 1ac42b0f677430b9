//! The workspace toolset (A2, §3.4, §6.1), served by the daemon: an agent's
//! workspace is a directory the daemon writes and the agent's shell only
//! reads. Every path is resolved by the kernel beneath the workspace's
//! directory handle (`openat2` with `RESOLVE_BENEATH` and no magic links)
//! and acted on with `*at` calls, never followed on its last component, so
//! `..`, absolute paths, symbolic links that leave and `/proc` magic links
//! are refused however they are spelled. Every refusal is a result the
//! model reads (§7.2).

mod captures;
mod read;
mod search;
mod serve;
mod write;

use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

pub use captures::keep_capture;
pub use read::{read, stat};
pub use search::{find, grep, list};
pub use serve::{describe, serve};
pub use write::write;

/// Caps on what one call returns (the `workspace` settings, §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub list_entries: usize,
    pub find_matches: usize,
    pub grep_hits: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Self {
            list_entries: 200,
            find_matches: 200,
            grep_hits: 100,
        }
    }
}

impl Caps {
    /// The caps an agent's `workspace` settings set, defaults elsewhere.
    pub fn from_settings(settings: Option<&serde_json::Value>) -> Self {
        let cap = |key: &str, default: usize| {
            settings
                .and_then(|s| s.get(key))
                .and_then(serde_json::Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(default)
        };
        let defaults = Self::default();
        Self {
            list_entries: cap("list_entry_cap", defaults.list_entries),
            find_matches: cap("find_count_cap", defaults.find_matches),
            grep_hits: cap("grep_hit_cap", defaults.grep_hits),
        }
    }
}

/// Why a call did not do what it asked: the text the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// One agent's workspace, as an open directory handle.
pub struct Workspace {
    root: OwnedFd,
}

impl Workspace {
    /// Opens the workspace directory itself; it must not be a symbolic link.
    pub fn open(dir: &Path) -> Result<Self, Refusal> {
        rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map(|root| Self { root })
        .map_err(|e| Refusal(format!("Your workspace cannot be opened ({e}).")))
    }

    /// Opens `path` beneath the workspace with `flags`, never following a
    /// link on its last component.
    fn open_beneath(&self, path: &str, flags: OFlags, mode: Mode) -> Result<OwnedFd, Refusal> {
        let relative = relative(path)?;
        rustix::fs::openat2(
            &self.root,
            relative,
            flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            mode,
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|errno| match errno {
            // With O_NOFOLLOW a link where a directory is wanted reads as
            // "not a directory": say what it is.
            Errno::NOTDIR if self.is_link(relative) => refusal(path, Errno::LOOP),
            other => refusal(path, other),
        })
    }

    /// Whether `relative` names a symbolic link beneath the workspace.
    fn is_link(&self, relative: &str) -> bool {
        rustix::fs::openat2(
            &self.root,
            relative,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .and_then(|handle| rustix::fs::fstat(&handle))
        .is_ok_and(|s| {
            rustix::fs::FileType::from_raw_mode(s.st_mode) == rustix::fs::FileType::Symlink
        })
    }
}

/// Opens the one component `name` of the directory `dir`, never following
/// a link and never leaving `dir`.
fn open_in(dir: &OwnedFd, name: &std::ffi::OsStr, flags: OFlags) -> Result<OwnedFd, Errno> {
    rustix::fs::openat2(
        dir,
        name,
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    )
}

/// The path as the kernel will resolve it: relative, without `..`, without
/// a NUL. An empty path is the workspace itself.
fn relative(path: &str) -> Result<&str, Refusal> {
    if path.contains('\0') {
        return Err(Refusal(
            "The path contains a NUL byte; no file is named that way.".into(),
        ));
    }
    let parsed = Path::new(path);
    if parsed.is_absolute() {
        return Err(Refusal(format!(
            "`{path}` is an absolute path; workspace paths are relative to your workspace."
        )));
    }
    if parsed.components().any(|c| c == Component::ParentDir) {
        return Err(Refusal(format!(
            "`{path}` climbs with `..`; workspace paths stay inside your workspace."
        )));
    }
    Ok(if path.is_empty() { "." } else { path })
}

/// What the kernel's refusal means for the model.
fn refusal(path: &str, errno: Errno) -> Refusal {
    Refusal(match errno {
        Errno::XDEV => format!("`{path}` leads outside your workspace."),
        Errno::LOOP => format!(
            "`{path}` is or passes through a symbolic link the workspace tools do not follow."
        ),
        Errno::NOENT => format!("There is no `{path}` in your workspace."),
        Errno::NOTDIR => format!("A part of `{path}` is not a directory."),
        Errno::ISDIR => format!("`{path}` is a directory."),
        Errno::ACCESS | Errno::PERM => format!("`{path}` may not be opened."),
        other => format!("`{path}` could not be opened ({other})."),
    })
}

/// Whether `bytes` look like a binary file: a NUL in the first 8 KiB, or
/// not UTF-8.
fn binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0) || std::str::from_utf8(bytes).is_err()
}

#[cfg(test)]
mod tests;
