//! The lab's namespace names: unique per lab (process id and a counter), so
//! parallel tests and test binaries never share one, and recognisable, so a
//! lab whose process was killed is removed by the next one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::ip::ip;

const PREFIX: &str = "cglab-";

/// Where `ip netns` keeps a namespace's handle.
pub(super) fn handle(name: &str) -> PathBuf {
    Path::new("/run/netns").join(name)
}

/// Where `ip netns exec` finds a namespace's own `/etc` files.
pub(super) fn etc(name: &str) -> PathBuf {
    Path::new("/etc/netns").join(name)
}

/// The two namespaces of one lab.
pub(super) struct Names {
    pub worker: String,
    pub net: String,
}

pub(super) fn fresh() -> Names {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    Names {
        worker: format!("{PREFIX}{pid}-{n}-worker"),
        net: format!("{PREFIX}{pid}-{n}-net"),
    }
}

/// Removes namespaces, and their `/etc/netns` entries, left by labs whose
/// process no longer runs.
pub(super) fn remove_stale() {
    let Ok(entries) = std::fs::read_dir("/run/netns") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        remove(&name);
    }
}

/// Removes one namespace and its `/etc/netns` entry, whatever is left of them.
pub(super) fn remove(name: &str) {
    if handle(name).exists() {
        let _ = ip(&["netns", "delete", name]);
    }
    let _ = std::fs::remove_dir_all(etc(name));
}
