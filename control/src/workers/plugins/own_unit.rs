//! Where a plugin runs (issue 22, ARCHITECTURE §6): as the daemon's child,
//! under the daemon's own user or, from a root daemon, under the user the
//! configuration names; or, where a daemon that is not root is told a user
//! of the plugin's own, from that plugin's systemd unit
//! (`collegium-plugin@NAME.service`) as that user. The daemon never needs
//! root for the last: it connects to the socket the unit serves, as it does
//! to a worker, and serves the plugin's `Storage` on its listening socket,
//! bound to the plugin by the peer's uid (`plugin_storage::serve`).

use std::path::Path;
use std::time::{Duration, Instant};

use nix::unistd::User;

use crate::plugin_storage::Collections;
use crate::plugin_storage::serve::{self, ServeError};
use crate::store::StoreHandle;
use crate::workers::handshake::SandboxExpectation;

/// How a plugin's process comes to be.
#[derive(Debug, Clone)]
pub enum Placement {
    /// The daemon starts it: as its own user (`None`) or, being root, as
    /// the user named.
    Child(Option<User>),
    /// Its own unit runs it as this user; the daemon connects to it.
    OwnUnit(User),
}

impl Placement {
    /// The user the plugin runs as, where it is not the daemon's.
    pub fn user(&self) -> Option<&User> {
        match self {
            Self::Child(user) => user.as_ref(),
            Self::OwnUnit(user) => Some(user),
        }
    }
}

/// Where the plugin configured with `user` runs, for a daemon running as
/// `daemon`. A user that is the daemon's own is no user of its own.
pub fn placement(user: Option<&str>, daemon: &SandboxExpectation) -> Result<Placement, String> {
    let Some(name) = user else {
        return Ok(Placement::Child(None));
    };
    let user = User::from_name(name)
        .map_err(|e| format!("cannot look up the OS user {name}: {e}"))?
        .ok_or_else(|| format!("plugins.*.user names {name}, and there is no such OS user"))?;
    if user.uid.as_raw() == daemon.uid {
        return Ok(Placement::Child(None));
    }
    if daemon.uid == 0 {
        return Ok(Placement::Child(Some(user)));
    }
    Ok(Placement::OwnUnit(user))
}

/// Waits until something accepts connections on `socket`: a unit-run
/// plugin is started before the daemon (`Before=collegium.service`), but
/// `Type=simple` says only that it was started, not that it serves.
pub async fn await_socket(
    namespace: &str,
    user: &User,
    socket: &Path,
    within: Duration,
) -> Result<(), String> {
    let started = Instant::now();
    let mut last = String::from("it does not exist");
    while started.elapsed() < within {
        match tokio::net::UnixStream::connect(socket).await {
            Ok(_) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!(
        "it runs from its own unit as {} (a daemon that is not root starts no plugin as another user), and nothing served {} within {} s ({last}); start collegium-plugin@{namespace}.service, or name no user for it to run it as the daemon's child",
        user.name,
        socket.display(),
        within.as_secs()
    ))
}

/// The unit-run plugins whose storage connections the daemon binds by uid.
#[derive(Default)]
pub struct UnitRun {
    plugins: Vec<(u32, Collections)>,
}

impl UnitRun {
    /// Binds connections from `uid` to `collections`' namespace.
    pub fn bind(&mut self, uid: u32, collections: Collections) {
        self.plugins.push((uid, collections));
    }

    /// Listens at `socket` for every unit-run plugin's storage connection;
    /// nothing when no plugin runs from its own unit. Two plugins under one
    /// uid are refused: their connections could not be told apart.
    pub fn listen(
        self,
        socket: &Path,
        store: &StoreHandle,
    ) -> Result<Option<serve::StorageListener>, ServeError> {
        if self.plugins.is_empty() {
            return Ok(None);
        }
        let bindings = serve::bindings(self.plugins)?;
        serve::listen(socket, bindings, store.clone()).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn daemon(uid: u32) -> SandboxExpectation {
        SandboxExpectation {
            uid,
            gid: uid,
            allowed_capabilities: 0,
            landlock_floor: None,
            command_cgroups: false,
            command_namespaces: &[],
            command_bounds: &[],
        }
    }

    #[test]
    fn s3_14_a_plugin_without_a_user_is_the_daemons_child() {
        assert!(matches!(
            placement(None, &daemon(1000)),
            Ok(Placement::Child(None))
        ));
    }

    #[test]
    fn s3_14_a_user_that_is_the_daemons_own_is_no_user_of_its_own() {
        let root = User::from_uid(0.into()).ok().flatten().expect("root");
        assert!(matches!(
            placement(Some(&root.name), &daemon(0)),
            Ok(Placement::Child(None))
        ));
    }

    #[test]
    fn s3_14_a_root_daemon_starts_a_plugin_as_its_user_and_any_other_connects_to_its_unit() {
        let root = User::from_uid(0.into()).ok().flatten().expect("root");
        match placement(Some(&root.name), &daemon(1000)) {
            Ok(Placement::OwnUnit(user)) => assert_eq!(user.uid.as_raw(), 0),
            other => panic!("{other:?}"),
        }
        let nobody = User::from_name("nobody").ok().flatten().expect("nobody");
        match placement(Some("nobody"), &daemon(0)) {
            Ok(Placement::Child(Some(user))) => assert_eq!(user.uid, nobody.uid),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn s3_14_an_unknown_plugin_user_is_named() {
        let refused = placement(Some("no-such-collegium-user"), &daemon(0)).unwrap_err();
        assert_eq!(
            refused,
            "plugins.*.user names no-such-collegium-user, and there is no such OS user"
        );
    }

    #[tokio::test]
    async fn s3_14_a_unit_socket_nobody_serves_is_named_with_the_unit_to_start() {
        let dir = tempfile::tempdir().expect("dir");
        let nobody = User::from_name("nobody").ok().flatten().expect("nobody");
        let socket = dir.path().join("toolset.sock");
        let refused = await_socket("bookmark", &nobody, &socket, Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(
            refused.starts_with(&format!(
                "it runs from its own unit as nobody (a daemon that is not root starts no plugin as another user), and nothing served {} within 0 s",
                socket.display()
            )),
            "{refused}"
        );
        assert!(
            refused.ends_with("start collegium-plugin@bookmark.service, or name no user for it to run it as the daemon's child"),
            "{refused}"
        );
        let _listener = tokio::net::UnixListener::bind(&socket).expect("bind");
        await_socket("bookmark", &nobody, &socket, Duration::from_secs(1))
            .await
            .expect("served");
    }
}
