//! The daemon runs unprivileged (issue 21 item 5; ARCHITECTURE §1): it
//! talks to the network, to workers over Unix sockets, and writes only
//! files it owns, so root would only widen what a compromise reaches. Boot
//! refuses uid 0 before it touches the store or Mattermost, unless the
//! configuration says `deployment.allow_root = true` on purpose (a test
//! host or a demo that runs everything as root).

use tracing::warn;

/// The refusal of a daemon started as root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "boot refused: the daemon is running as root (uid 0), and it needs no privilege (issue 21, §6.1). Run it as the `collegium` user that deploy/sysusers.d/collegium.conf creates (collegium.service says User=collegium; by hand: `runuser -u collegium -- collegium run --config FILE`, with the state directory owned by that user), or, to run it as root on purpose, set `allow_root = true` under [deployment] in the configuration"
)]
pub struct RunningAsRoot;

/// Whether a daemon whose effective uid is `euid` may run, under a
/// configuration whose `deployment.allow_root` is `allow_root`.
pub fn check(euid: u32, allow_root: bool) -> Result<(), RunningAsRoot> {
    match (euid, allow_root) {
        (0, false) => Err(RunningAsRoot),
        (0, true) => {
            warn!("running as root: the configuration allows it (deployment.allow_root = true)");
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The check, for this process.
pub fn check_self(allow_root: bool) -> Result<(), RunningAsRoot> {
    check(rustix::process::geteuid().as_raw(), allow_root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a21_root_is_refused_unless_the_configuration_allows_it() {
        assert_eq!(check(0, false), Err(RunningAsRoot));
        assert_eq!(check(0, true), Ok(()));
        assert_eq!(check(998, false), Ok(()));
        assert_eq!(check(998, true), Ok(()));
    }

    #[test]
    fn a21_the_refusal_names_the_key_and_both_fixes() {
        let text = RunningAsRoot.to_string();
        assert!(
            text.contains("running as root (uid 0)")
                && text.contains("`collegium` user")
                && text.contains("deploy/sysusers.d/collegium.conf")
                && text.contains("`allow_root = true` under [deployment]"),
            "{text}"
        );
    }
}
