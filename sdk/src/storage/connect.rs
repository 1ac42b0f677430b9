//! How the plugin reaches the daemon's `Storage` (the plugin wire
//! convention): a child plugin inherits one end of a socketpair as fd 3,
//! named by `COLLEGIUM_STORAGE_FD`, and speaks gRPC over that one
//! connection with no reconnect; a plugin its own systemd unit runs is given
//! `--storage-socket PATH` and connects there, the daemon binding the
//! connection to its namespace by the peer's uid.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint};

/// The environment variable naming the inherited storage descriptor.
pub const STORAGE_FD_ENV: &str = "COLLEGIUM_STORAGE_FD";

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("{STORAGE_FD_ENV}={0:?} is not a descriptor number")]
    NotAnFd(String),
    #[error("fd {0}, the storage connection, was already taken by this process; take it once")]
    AlreadyTaken(i32),
    #[error("fd {fd} is not a Unix stream socket: {reason}")]
    NotASocket { fd: i32, reason: String },
    #[error("the storage connection could not be opened: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// Takes the descriptor `COLLEGIUM_STORAGE_FD` names, once per process: a
/// second call is refused, so no two owners ever close it.
#[allow(unsafe_code)]
pub fn inherited(value: &str) -> Result<std::os::fd::OwnedFd, ConnectError> {
    use std::os::fd::FromRawFd;
    use std::sync::atomic::{AtomicBool, Ordering};
    static TAKEN: AtomicBool = AtomicBool::new(false);
    let fd = fd_number(value)?;
    if TAKEN.swap(true, Ordering::SeqCst) {
        return Err(ConnectError::AlreadyTaken(fd));
    }
    // SAFETY: the daemon hands this descriptor to the process at exec
    // (the plugin wire convention) and nothing else in the process opens or
    // owns it; the flag above makes this the only place that ever takes it.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Parses `COLLEGIUM_STORAGE_FD`'s value.
pub fn fd_number(value: &str) -> Result<i32, ConnectError> {
    value
        .trim()
        .parse::<i32>()
        .ok()
        .filter(|fd| *fd >= 0)
        .ok_or_else(|| ConnectError::NotAnFd(value.to_string()))
}

/// A channel over the storage connection `fd`, which this takes over. The
/// one connection is the namespace's binding (it is never read from a
/// request), so a dropped connection is not reopened: every later call
/// fails instead. The descriptor is made close-on-exec first: the daemon's
/// hand-over cleared the flag so it would survive exec, and a process the
/// plugin starts must not inherit the plugin's storage.
pub async fn from_fd(owned: std::os::fd::OwnedFd) -> Result<Channel, ConnectError> {
    use std::os::fd::AsRawFd;
    let fd = owned.as_raw_fd();
    let not_a_socket = |reason: String| ConnectError::NotASocket { fd, reason };
    rustix::io::fcntl_setfd(&owned, rustix::io::FdFlags::CLOEXEC)
        .map_err(|e| not_a_socket(e.to_string()))?;
    let std_stream = std::os::unix::net::UnixStream::from(owned);
    // A descriptor that is no socket fails here rather than at first use.
    std_stream
        .peer_addr()
        .map_err(|e| not_a_socket(e.to_string()))?;
    std_stream
        .set_nonblocking(true)
        .map_err(|e| not_a_socket(e.to_string()))?;
    let stream = UnixStream::from_std(std_stream).map_err(|e| not_a_socket(e.to_string()))?;
    let once = Arc::new(Mutex::new(Some(stream)));
    let channel = endpoint()
        .connect_with_connector(tower::service_fn(move |_| {
            let taken = once.lock().ok().and_then(|mut slot| slot.take());
            async move {
                taken.map(TokioIo::new).ok_or_else(|| {
                    std::io::Error::new(
                        std::io::ErrorKind::NotConnected,
                        "the storage connection closed; it is the plugin's one connection and is not reopened",
                    )
                })
            }
        }))
        .await?;
    Ok(channel)
}

/// A channel to the daemon's storage socket at `path`, served by a process
/// whose uid is one of `daemon_uids` (the `--allow-uid` the daemon passed):
/// a socket served by anyone else is not spoken to. It connects at the first
/// call and again after the daemon restarts: a plugin its own unit runs is
/// started before the daemon listens (`Before=collegium.service`) and
/// outlives the daemon's restarts. A call that cannot connect fails with
/// `UNAVAILABLE`, naming the socket and why.
pub fn from_socket(path: &Path, daemon_uids: BTreeSet<u32>) -> Channel {
    let socket = path.to_path_buf();
    endpoint().connect_with_connector_lazy(tower::service_fn(move |_| {
        let socket = socket.clone();
        let daemon_uids = daemon_uids.clone();
        async move {
            let stream = UnixStream::connect(&socket)
                .await
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", socket.display())))?;
            let uid = stream.peer_cred()?.uid();
            if !daemon_uids.contains(&uid) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!(
                        "{} is served by uid {uid}, not the daemon's ({daemon_uids:?})",
                        socket.display()
                    ),
                ));
            }
            Ok::<_, std::io::Error>(TokioIo::new(stream))
        }
    }))
}

/// The URI is required by the builder and never dialled: the connector
/// hands over the socket.
fn endpoint() -> Endpoint {
    Endpoint::from_static("http://storage.invalid")
}

#[cfg(test)]
mod tests {
    use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};

    use super::*;

    /// §3.14: the daemon's hand-over cleared close-on-exec so fd 3 survives
    /// exec; the SDK sets it again, so a process the plugin starts inherits
    /// none of the plugin's storage.
    #[tokio::test]
    async fn s3_14_the_taken_storage_descriptor_is_close_on_exec() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("pair");
        let theirs: OwnedFd = theirs.into();
        rustix::io::fcntl_setfd(&theirs, rustix::io::FdFlags::empty()).expect("clear");
        let fd = theirs.as_raw_fd();
        let _channel = from_fd(theirs).await.expect("a channel");
        let flags = rustix::io::fcntl_getfd(unsafe_borrow(fd)).expect("flags");
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        drop(ours);
    }

    /// §3.14: the inherited descriptor is taken once; a second taking is
    /// refused rather than making a second owner that would close it twice.
    #[test]
    fn s3_14_the_inherited_descriptor_is_taken_once() {
        let (_ours, theirs) = std::os::unix::net::UnixStream::pair().expect("pair");
        let fd = theirs.into_raw_fd();
        let taken = inherited(&fd.to_string()).expect("first taking");
        assert!(matches!(
            inherited(&fd.to_string()),
            Err(ConnectError::AlreadyTaken(n)) if n == fd
        ));
        drop(taken);
    }

    #[allow(unsafe_code)]
    fn unsafe_borrow(fd: i32) -> std::os::fd::BorrowedFd<'static> {
        // SAFETY: the test's channel holds `fd` open for the test's length.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }
    }
}
