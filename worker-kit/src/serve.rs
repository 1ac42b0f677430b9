//! A worker's gRPC server on a Unix socket (ARCHITECTURE §4): one socket per
//! worker, its mode set before anyone can connect, and every connection's
//! peer checked by SO_PEERCRED. A peer whose uid the worker's configuration
//! does not allow is closed before a byte is read. Most workers serve
//! `Toolset`; a framework worker with a service of its own (the PDF reader,
//! §3.4) serves that under the same rules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use collegium_proto::toolset::v1::toolset_server::{Toolset, ToolsetServer};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::ReceiverStream;
use tonic::service::Routes;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{path}: {reason}")]
    Socket { path: PathBuf, reason: String },
    #[error("the server failed: {0}")]
    Server(#[from] tonic::transport::Error),
}

/// Which peers may connect: the uids the worker's own configuration names
/// (the daemon's user, and for tests the test's own).
#[derive(Debug, Clone)]
pub struct PeerPolicy {
    pub allowed_uids: BTreeSet<u32>,
}

impl PeerPolicy {
    pub fn allows(&self, uid: u32) -> bool {
        self.allowed_uids.contains(&uid)
    }
}

/// A running server. Ready once this exists: the socket is bound and its
/// mode set.
pub struct Serving {
    path: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    accept: JoinHandle<()>,
}

impl Serving {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting, lets calls in flight finish, removes the socket.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        self.accept.abort();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let result = (&mut self.server).await;
        let _ = std::fs::remove_file(&self.path);
        match result {
            Ok(served) => served.map_err(ServeError::from),
            Err(joined) => Err(ServeError::Socket {
                path: self.path.clone(),
                reason: format!("the server task ended abnormally: {joined}"),
            }),
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.accept.abort();
        self.server.abort();
    }
}

/// Serves `toolset` on `path` with `mode` (0660 in a deployment: the group is
/// shared with the daemon only), admitting only peers `policy` allows.
pub async fn serve<T: Toolset>(
    path: &Path,
    mode: u32,
    policy: PeerPolicy,
    toolset: T,
) -> Result<Serving, ServeError> {
    serve_routes(path, mode, policy, Routes::new(ToolsetServer::new(toolset))).await
}

/// Serves any tonic service (`Routes::new(SomeServer::new(..))`) on `path`
/// under the same socket rules as [`serve`].
pub async fn serve_routes(
    path: &Path,
    mode: u32,
    policy: PeerPolicy,
    routes: Routes,
) -> Result<Serving, ServeError> {
    let listener = bind(path, mode)?;
    let (admitted, incoming) = mpsc::channel::<std::io::Result<UnixStream>>(16);
    let accept = tokio::spawn(admit(listener, policy, admitted));
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_routes(routes)
            .serve_with_incoming_shutdown(ReceiverStream::new(incoming), async {
                let _ = stopped.await;
            }),
    );
    tracing::info!(socket = %path.display(), "serving");
    crate::ready::serving(path);
    Ok(Serving {
        path: path.to_path_buf(),
        stop: Some(stop),
        server,
        accept,
    })
}

/// A name beside `path` for binding before the socket is placed.
/// Listens on `path` with `mode`: an old socket there is replaced, any
/// other file refused. The socket is bound under a private name, given its
/// mode, then renamed into place, so a client finds it only once its mode is
/// what it should be (whatever the process's umask).
pub fn bind(path: &Path, mode: u32) -> Result<UnixListener, ServeError> {
    let socket_error = |reason: String| ServeError::Socket {
        path: path.to_path_buf(),
        reason,
    };
    remove_stale_socket(path).map_err(socket_error)?;
    let binding = binding_path(path).map_err(socket_error)?;
    let _ = std::fs::remove_file(&binding);
    let listener = UnixListener::bind(&binding).map_err(|e| socket_error(e.to_string()))?;
    use std::os::unix::fs::PermissionsExt;
    let placed = std::fs::set_permissions(&binding, std::fs::Permissions::from_mode(mode))
        .and_then(|()| std::fs::rename(&binding, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&binding);
        return Err(socket_error(format!(
            "cannot set its mode and place it: {e}"
        )));
    }
    Ok(listener)
}

fn binding_path(path: &Path) -> Result<PathBuf, String> {
    let name = path
        .file_name()
        .ok_or("a socket path needs a file name")?
        .to_string_lossy();
    Ok(path.with_file_name(format!(".{name}.{}.binding", std::process::id())))
}

/// A socket left by an earlier run is removed; any other file at the path is
/// not ours to delete.
fn remove_stale_socket(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            std::fs::remove_file(path).map_err(|e| format!("cannot remove the old socket: {e}"))
        }
        Ok(_) => Err("exists and is not a socket; refusing to replace it".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Accepts connections, handing on those whose peer is allowed and closing
/// the rest unread.
async fn admit(
    listener: UnixListener,
    policy: PeerPolicy,
    admitted: mpsc::Sender<std::io::Result<UnixStream>>,
) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of descriptors, say: wait before trying again rather
                // than spin and flood the log.
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        match stream.peer_cred() {
            Ok(peer) if policy.allows(peer.uid()) => {
                if admitted.send(Ok(stream)).await.is_err() {
                    return;
                }
            }
            Ok(peer) => {
                tracing::warn!(
                    uid = peer.uid(),
                    pid = peer.pid(),
                    "refused a connection from a uid this worker does not serve"
                );
                drop(stream);
            }
            Err(error) => {
                tracing::warn!(%error, "refused a connection whose peer cannot be identified");
                drop(stream);
            }
        }
    }
}
