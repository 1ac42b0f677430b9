//! How a plugin reaches `Storage` (the plugin wire convention, ARCHITECTURE
//! §4, §3.14): a child plugin inherits one end of a socketpair as fd 3
//! (`COLLEGIUM_STORAGE_FD=3`) and the daemon serves its end, bound to the
//! plugin's namespace; a plugin run by its own unit connects to the
//! daemon's listening socket and is bound by its peer uid (SO_PEERCRED).
//! Either way the namespace comes from the connection, never a request.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::net::{UnixListener, UnixStream};
use tokio::task::{JoinHandle, JoinSet};

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
    #[error("cannot listen for plugin storage: {0}")]
    Listen(#[from] collegium_worker_kit::serve::ServeError),
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
    tokio::spawn(served(stream, service))
}

/// One connection served as HTTP/2 until the peer closes it, in this task:
/// tonic's own server would hand it to a task of its own and return at
/// once, leaving nothing to count, bound or end.
async fn served(stream: UnixStream, service: StorageService) {
    let namespace = service.namespace().to_owned();
    let served = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .serve_connection(
            hyper_util::rt::TokioIo::new(stream),
            hyper_util::service::TowerToHyperService::new(service.into_server()),
        )
        .await;
    if let Err(error) = served {
        tracing::warn!(plugin = %namespace, %error, "a plugin's storage connection failed");
    }
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

/// How many storage connections one unit-run plugin may hold open: each
/// holds a descriptor of the daemon's, and a plugin needs one.
pub const CONNECTIONS_PER_PLUGIN: usize = 16;

/// How often a refused peer is said in the log, per uid: any local user
/// may knock, and the journal is not theirs to flood.
const REFUSAL_LOGGED_EVERY: Duration = Duration::from_secs(60);

/// The listener unit-run plugins connect to, and every connection it
/// accepted. Stopping it ends them all and removes the socket.
pub struct StorageListener {
    path: std::path::PathBuf,
    task: JoinHandle<()>,
}

impl StorageListener {
    /// Stops listening, ends every connection, removes the socket.
    pub fn stop(self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Listens at `path` for unit-run plugins' storage connections, binding each
/// to the plugin whose user its peer uid is; a uid that maps to no plugin,
/// or a plugin already holding [`CONNECTIONS_PER_PLUGIN`], is closed at
/// accept.
pub fn listen(
    path: &Path,
    bindings: BTreeMap<u32, Collections>,
    store: StoreHandle,
) -> Result<StorageListener, ServeError> {
    // Any user may connect: the peer's uid, not the file's mode, is what
    // binds a connection, and an unbound uid is refused at accept.
    let listener = collegium_worker_kit::serve::bind(path, 0o666)?;
    let task = tokio::spawn(accept(listener, bindings, store));
    Ok(StorageListener {
        path: path.to_path_buf(),
        task,
    })
}

/// Accepts and serves connections until aborted; aborting drops the set of
/// connection tasks, which ends them too.
async fn accept(listener: UnixListener, bindings: BTreeMap<u32, Collections>, store: StoreHandle) {
    let mut connections: JoinSet<u32> = JoinSet::new();
    let mut open: BTreeMap<u32, usize> = BTreeMap::new();
    let mut last_said: BTreeMap<Option<u32>, Instant> = BTreeMap::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            Some(ended) = connections.join_next() => {
                if let Ok(uid) = ended
                    && let Some(count) = open.get_mut(&uid)
                {
                    *count = count.saturating_sub(1);
                }
                continue;
            }
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of descriptors, say: wait rather than spin.
                tracing::warn!(%error, "cannot accept a plugin storage connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let admitted = bound(&stream, &bindings).and_then(|(uid, collections)| {
            let count = open.entry(uid).or_default();
            if *count >= CONNECTIONS_PER_PLUGIN {
                return Err((
                    Some(uid),
                    format!(
                        "the plugin `{}` (uid {uid}) already holds {CONNECTIONS_PER_PLUGIN} storage connections",
                        collections.namespace()
                    ),
                ));
            }
            *count += 1;
            Ok((uid, collections))
        });
        match admitted {
            Ok((uid, collections)) => {
                let service = StorageService::new(collections, store.clone());
                connections.spawn(async move {
                    served(stream, service).await;
                    uid
                });
            }
            Err((uid, refusal)) => {
                let due = last_said
                    .get(&uid)
                    .is_none_or(|at| at.elapsed() >= REFUSAL_LOGGED_EVERY);
                if due {
                    last_said.insert(uid, Instant::now());
                    tracing::warn!(%refusal, "plugin storage connection refused");
                }
            }
        }
    }
}

/// The plugin an accepted connection belongs to, by its peer's uid; the
/// uid (where it could be read) beside any refusal, to say it once a while.
fn bound(
    stream: &UnixStream,
    bindings: &BTreeMap<u32, Collections>,
) -> Result<(u32, Collections), (Option<u32>, String)> {
    let uid = stream
        .peer_cred()
        .map_err(|e| (None, format!("cannot read the peer's credentials: {e}")))?
        .uid();
    bindings
        .get(&uid)
        .cloned()
        .map(|collections| (uid, collections))
        .ok_or_else(|| (Some(uid), format!("uid {uid} is the user of no plugin")))
}
