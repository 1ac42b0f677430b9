//! Work inside a namespace without moving the test process: a network
//! namespace belongs to each thread, so a dedicated thread enters it, and
//! the sockets it makes keep that namespace wherever they are used after.

use std::fs::File;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nix::sched::{CloneFlags, setns};

use super::LabError;

/// Runs `work` on a thread inside the network namespace whose handle is
/// `namespace`, returning what it returns.
pub(super) fn within<T: Send>(
    namespace: &Path,
    work: impl FnOnce() -> T + Send,
) -> Result<T, LabError> {
    let handle = File::open(namespace).map_err(|source| LabError::Enter {
        namespace: namespace.display().to_string(),
        message: source.to_string(),
    })?;
    std::thread::scope(|scope| {
        let thread = scope.spawn(move || {
            setns(&handle, CloneFlags::CLONE_NEWNET).map_err(|errno| LabError::Enter {
                namespace: namespace.display().to_string(),
                message: errno.desc().to_string(),
            })?;
            Ok(work())
        });
        match thread.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// A TCP listener bound inside `namespace`, non-blocking for tokio.
pub(super) fn bind_tcp(namespace: &Path, addr: SocketAddr) -> Result<TcpListener, LabError> {
    within(namespace, || {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(listener)
    })?
    .map_err(|source: std::io::Error| LabError::Bind {
        addr,
        message: source.to_string(),
    })
}

/// A UDP socket bound inside `namespace`, non-blocking for tokio.
pub(super) fn bind_udp(namespace: &Path, addr: SocketAddr) -> Result<UdpSocket, LabError> {
    within(namespace, || {
        let socket = UdpSocket::bind(addr)?;
        socket.set_nonblocking(true)?;
        Ok(socket)
    })?
    .map_err(|source: std::io::Error| LabError::Bind {
        addr,
        message: source.to_string(),
    })
}

/// A network namespace's identity: the device and inode of its nsfs file,
/// the same through `/run/netns/NAME` and `/proc/PID/ns/net`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NamespaceId {
    dev: u64,
    ino: u64,
}

pub(super) fn id_of(path: &Path) -> std::io::Result<NamespaceId> {
    let meta = std::fs::metadata(path)?;
    Ok(NamespaceId {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}
