//! The daemon's end of a worker's socket. Both ends check their peer
//! (ARCHITECTURE §4): a socket served by any user but the worker's own is
//! not spoken to.

use std::path::{Path, PathBuf};

use collegium_proto::toolset::v1::toolset_client::ToolsetClient;
use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint};

/// Connects to the `Toolset` served on `socket`, by a process running as
/// `served_by` when that is given.
pub async fn connect(
    socket: &Path,
    served_by: Option<u32>,
) -> Result<ToolsetClient<Channel>, tonic::transport::Error> {
    Ok(ToolsetClient::new(channel(socket, served_by).await?))
}

/// A channel to whatever service is served on `socket`, by a process
/// running as `served_by` when that is given. The URI is required by the
/// builder and never dialled: the connector opens the socket.
pub async fn channel(
    socket: &Path,
    served_by: Option<u32>,
) -> Result<Channel, tonic::transport::Error> {
    let path: PathBuf = socket.to_path_buf();
    let channel = Endpoint::from_static("http://worker.invalid")
        .connect_with_connector(tower::service_fn(move |_| {
            let path = path.clone();
            async move {
                let stream = UnixStream::connect(&path).await?;
                if let Some(expected) = served_by {
                    let uid = stream.peer_cred()?.uid();
                    if uid != expected {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::PermissionDenied,
                            format!(
                                "{} is served by uid {uid}, not the worker's uid {expected}",
                                path.display()
                            ),
                        ));
                    }
                }
                Ok::<_, std::io::Error>(TokioIo::new(stream))
            }
        }))
        .await?;
    Ok(channel)
}
