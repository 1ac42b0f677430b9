//! Settling the honeypots before their hits are read. A connection the
//! kernel has completed waits in its listener's queue until the lab's
//! server accepts it, and a datagram in its socket's buffer until read; an
//! attempt that has already returned may so far have left no hit. The lab
//! sends each honeypot a sentinel of its own from the worker namespace,
//! the way attempts come, and waits until every sentinel has arrived:
//! queues are served in order, so whatever came before has been counted.

use std::net::{IpAddr, SocketAddr, SocketAddrV6, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use super::hits::{Hits, Transport};
use super::{Honeypot, Lab, LabError, Ns};

/// How long a honeypot may take to take in its sentinel.
const SETTLING: Duration = Duration::from_secs(10);

pub(super) fn settle(lab: &Lab) -> Result<(), LabError> {
    let worker_link = lab.link_index(Ns::Worker)?;
    let sent = lab.within(Ns::Worker, || send_sentinels(lab.honeypots(), worker_link))??;
    wait_for(&lab.hits, sent)
}

/// A honeypot's address as the worker reaches it: a link-scoped address of
/// the net namespace is scoped to the worker's end of the link.
fn from_worker(honeypot: &Honeypot, worker_link: u32) -> SocketAddr {
    match (honeypot.ns, honeypot.at) {
        (Ns::Net, SocketAddr::V6(v6)) if v6.scope_id() != 0 => {
            SocketAddr::V6(SocketAddrV6::new(*v6.ip(), v6.port(), 0, worker_link))
        }
        (_, at) => at,
    }
}

/// One sentinel sent: from where, to which honeypot.
#[derive(Debug)]
struct Sentinel {
    transport: Transport,
    from: SocketAddr,
    to: SocketAddr,
}

fn send_sentinels(honeypots: &[Honeypot], worker_link: u32) -> Result<Vec<Sentinel>, LabError> {
    let failed = |at: SocketAddr, e: std::io::Error| LabError::Unsettled {
        why: format!("the sentinel to {at} could not be sent: {e}"),
    };
    let mut sent = Vec::new();
    for honeypot in honeypots {
        let to = honeypot.at;
        let at = from_worker(honeypot, worker_link);
        let from = match honeypot.transport {
            Transport::Tcp => TcpStream::connect_timeout(&at, SETTLING)
                .and_then(|stream| stream.local_addr())
                .map_err(|e| failed(at, e))?,
            Transport::Udp => {
                let any: IpAddr = if at.is_ipv4() {
                    IpAddr::from([0u8; 4])
                } else {
                    IpAddr::from([0u8; 16])
                };
                let socket = UdpSocket::bind(SocketAddr::new(any, 0)).map_err(|e| failed(at, e))?;
                // The limited broadcast address has a honeypot too.
                if at.is_ipv4() {
                    socket.set_broadcast(true).map_err(|e| failed(at, e))?;
                }
                // Connected, so its source address is fixed before it
                // sends and is the one the honeypot sees.
                socket
                    .connect(at)
                    .and_then(|()| socket.send(b"sentinel"))
                    .and_then(|_| socket.local_addr())
                    .map_err(|e| failed(at, e))?
            }
        };
        sent.push(Sentinel {
            transport: honeypot.transport,
            from,
            to,
        });
    }
    Ok(sent)
}

fn wait_for(hits: &Hits, mut missing: Vec<Sentinel>) -> Result<(), LabError> {
    let deadline = Instant::now() + SETTLING;
    loop {
        missing.retain(|s| !hits.claim_sentinel(s.transport, s.from, s.to));
        if missing.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(LabError::Unsettled {
                why: format!("sentinels from {missing:?} never reached their honeypots"),
            });
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
