//! How a plugin reaches `Storage` (the plugin wire convention, ARCHITECTURE
//! §4, §3.14): a child plugin inherits one end of a socketpair as fd 3
//! (`COLLEGIUM_STORAGE_FD=3`) and the daemon serves its end, bound to the
//! plugin's namespace; a plugin run by its own unit connects to the
//! daemon's listening socket and is bound by its peer uid (SO_PEERCRED).
//! Either way the namespace comes from the connection, never a request.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinHandle;

use super::collections::Collections;
use super::service::StorageService;
use crate::store::StoreHandle;

/// The descriptor a child plugin finds its storage connection on.
pub const CHILD_FD: i32 = 3;

/// The environment variable that tells a child plugin where it is.
pub const FD_ENV: &str = "COLLEGIUM_STORAGE_FD";

/// The listening socket's name under the runtime directory.
pub const SOCKET_NAME: &str = "storage.sock";

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot make the storage socketpair for a plugin: {0}")]
    Pair(std::io::Error),
    #[error("cannot listen for plugin storage at {path}: {source}")]
    Listen {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the plugins `{first}` and `{second}` both run as uid {uid}, and a storage connection is bound to its plugin by its uid; give each plugin a user of its own"
    )]
    SharedUid {
        uid: u32,
        first: String,
        second: String,
    },
}

/// A socketpair whose child end a command's child will find at fd 3.
pub struct HandedOver {
    daemon: std::os::unix::net::UnixStream,
    child: OwnedFd,
}

/// Creates the pair and arranges, in `command`, for the child end to become
/// fd 3 of the child with `COLLEGIUM_STORAGE_FD=3` in its environment.
/// Call [`HandedOver::spawned`] once the command has spawned (or failed),
/// so the daemon holds no copy of the child's end.
#[allow(unsafe_code)]
pub fn hand_to_child(command: &mut tokio::process::Command) -> Result<HandedOver, ServeError> {
    let (daemon, child) = std::os::unix::net::UnixStream::pair().map_err(ServeError::Pair)?;
    // Above the standard three and fd 3 itself, so the dup2 below always
    // makes a new descriptor (a dup2 onto itself would keep close-on-exec).
    let child =
        rustix::io::fcntl_dupfd_cloexec(&child, 10).map_err(|e| ServeError::Pair(e.into()))?;
    let raw = child.as_raw_fd();
    command.env(FD_ENV, CHILD_FD.to_string());
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe work is sound: it makes one dup2 system call
    // on a descriptor number taken before the fork, allocates nothing and
    // takes no lock. dup2 clears close-on-exec on the new descriptor, so fd
    // 3 alone survives the exec; the original stays close-on-exec.
    unsafe {
        command.pre_exec(move || {
            let source = std::os::fd::BorrowedFd::borrow_raw(raw);
            use std::os::fd::FromRawFd;
            let mut target = std::mem::ManuallyDrop::new(OwnedFd::from_raw_fd(CHILD_FD));
            rustix::io::dup2(source, &mut target)?;
            Ok(())
        });
    }
    Ok(HandedOver { daemon, child })
}

impl HandedOver {
    /// Closes the daemon's copy of the child's end: the connection then
    /// ends when the child does, and a restarted child gets a fresh pair.
    pub fn spawned(self) -> DaemonEnd {
        drop(self.child);
        DaemonEnd(self.daemon)
    }
}

/// The daemon's end of a child plugin's storage connection, not yet served:
/// it is served once the plugin's description names its collections.
pub struct DaemonEnd(std::os::unix::net::UnixStream);

impl DaemonEnd {
    /// Serves `Storage` for `collections`' namespace on this connection
    /// until the plugin closes it.
    pub fn serve(self, collections: Collections, store: StoreHandle) -> std::io::Result<()> {
        self.0.set_nonblocking(true)?;
        let stream = UnixStream::from_std(self.0)?;
        connection(stream, StorageService::new(collections, store));
        Ok(())
    }
}

/// Serves one connection with one service instance: the namespace is the
/// instance's, never the request's. The connection's task runs until the
/// peer closes it.
pub fn connection(stream: UnixStream, service: StorageService) -> JoinHandle<()> {
    let namespace = service.namespace().to_owned();
    tokio::spawn(async move {
        let served = tonic::transport::Server::builder()
            .add_service(service.into_server())
            .serve_with_incoming(futures_util::stream::once(async move {
                Ok::<_, std::io::Error>(stream)
            }))
            .await;
        if let Err(error) = served {
            tracing::warn!(plugin = %namespace, %error, "a plugin's storage connection failed");
        }
    })
}

/// Which plugin each uid is: the binding of a unit-run plugin's connection
/// (§3.14). Two plugins under one uid could not be told apart, so that is
/// refused.
pub fn bindings(
    plugins: impl IntoIterator<Item = (u32, Collections)>,
) -> Result<BTreeMap<u32, Collections>, ServeError> {
    let mut by_uid: BTreeMap<u32, Collections> = BTreeMap::new();
    for (uid, collections) in plugins {
        if let Some(first) = by_uid.get(&uid) {
            return Err(ServeError::SharedUid {
                uid,
                first: first.namespace().to_owned(),
                second: collections.namespace().to_owned(),
            });
        }
        by_uid.insert(uid, collections);
    }
    Ok(by_uid)
}

/// Listens at `path` for unit-run plugins' storage connections, binding each
/// to the plugin whose user its peer uid is; a uid that maps to no plugin is
/// refused at accept (closed, and logged).
pub fn listen(
    path: &Path,
    bindings: BTreeMap<u32, Collections>,
    store: StoreHandle,
) -> Result<JoinHandle<()>, ServeError> {
    use std::os::unix::fs::PermissionsExt;
    let listen_error = |source| ServeError::Listen {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(listen_error(e)),
    }
    let listener = UnixListener::bind(path).map_err(listen_error)?;
    // Any user may connect: the peer's uid, not the file's mode, is what
    // binds a connection, and an unbound uid is refused at accept.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).map_err(listen_error)?;
    Ok(tokio::spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "cannot accept a plugin storage connection");
                    continue;
                }
            };
            match bound(&stream, &bindings) {
                Ok(collections) => {
                    connection(stream, StorageService::new(collections, store.clone()));
                }
                Err(refusal) => tracing::warn!(%refusal, "plugin storage connection refused"),
            }
        }
    }))
}

/// The plugin an accepted connection belongs to, by its peer's uid.
fn bound(
    stream: &UnixStream,
    bindings: &BTreeMap<u32, Collections>,
) -> Result<Collections, String> {
    let uid = stream
        .peer_cred()
        .map_err(|e| format!("cannot read the peer's credentials: {e}"))?
        .uid();
    bindings
        .get(&uid)
        .cloned()
        .ok_or_else(|| format!("uid {uid} is the user of no plugin"))
}
