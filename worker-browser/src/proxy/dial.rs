//! Connecting to the addresses the scope judged, and only to them
//! (§3.4 "connect to the address judged; never resolve twice").

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpStream;

/// How long one address may take to accept before the next is tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Every judged address failed; the text is the framework's, naming them.
#[derive(Debug, thiserror::Error)]
#[error("no connection to {host}: {} ({})", reason(*.kind), list(.addresses))]
pub struct DialError {
    /// The host asked for.
    pub host: String,
    /// The addresses tried, in order.
    pub addresses: Vec<SocketAddr>,
    /// How the last attempt failed.
    pub kind: io::ErrorKind,
}

fn reason(kind: io::ErrorKind) -> &'static str {
    match kind {
        io::ErrorKind::ConnectionRefused => "the site refused the connection",
        io::ErrorKind::TimedOut => "the site did not answer in time",
        io::ErrorKind::NetworkUnreachable | io::ErrorKind::HostUnreachable => {
            "the site is unreachable from here"
        }
        _ => "the connection failed",
    }
}

fn list(addresses: &[SocketAddr]) -> String {
    addresses
        .iter()
        .map(SocketAddr::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Connects to the first judged address that accepts.
pub async fn dial(
    host: &str,
    addresses: &[SocketAddr],
) -> Result<(TcpStream, SocketAddr), DialError> {
    let mut kind = io::ErrorKind::NotFound;
    for address in addresses {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => {
                // Latency over throughput: requests are small and interactive.
                let _ = stream.set_nodelay(true);
                return Ok((stream, *address));
            }
            Ok(Err(e)) => kind = e.kind(),
            Err(_) => kind = io::ErrorKind::TimedOut,
        }
    }
    Err(DialError {
        host: host.to_owned(),
        addresses: addresses.to_vec(),
        kind,
    })
}
