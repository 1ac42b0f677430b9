//! A TCP relay in front of a real server that counts the bytes it carries
//! each way, for a benchmark's "bytes on the wire" (issue 18). It reads and
//! writes bytes only, so TLS passes through it untouched and the client
//! verifies the server as it would without it.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Counts {
    to_server: AtomicU64,
    to_client: AtomicU64,
    /// Connections whose both directions have ended.
    closed: AtomicU64,
}

/// What went through the relay since it started or was last reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// Client to server.
    pub to_server: u64,
    /// Server to client.
    pub to_client: u64,
    /// Connections that have ended.
    pub closed: u64,
}

impl Carried {
    pub fn total(&self) -> u64 {
        self.to_server + self.to_client
    }
}

/// A running relay; it stops taking connections when dropped.
pub struct Counted {
    /// Where a client connects, in place of the server.
    pub at: SocketAddr,
    counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
}

impl Counted {
    /// Relays to `server`.
    pub fn start(server: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let at = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (counting, stopping) = (counts.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let counts = counting.clone();
                        std::thread::spawn(move || relay(client, server, &counts));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Ok(Self { at, counts, stop })
    }

    /// What was carried so far.
    pub fn carried(&self) -> Carried {
        Carried {
            to_server: self.counts.to_server.load(Ordering::SeqCst),
            to_client: self.counts.to_client.load(Ordering::SeqCst),
            closed: self.counts.closed.load(Ordering::SeqCst),
        }
    }

    /// Starts counting again from nothing.
    pub fn reset(&self) {
        self.counts.to_server.store(0, Ordering::SeqCst);
        self.counts.to_client.store(0, Ordering::SeqCst);
        self.counts.closed.store(0, Ordering::SeqCst);
    }

    /// Waits up to `within` for `connections` connections to have ended,
    /// so a count taken after includes a connection's last bytes (a TLS
    /// close alert, say), which may still be in flight when the client's
    /// call returns. Whether they all ended.
    pub fn settle(&self, connections: u64, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while self.counts.closed.load(Ordering::SeqCst) < connections {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn relay(client: TcpStream, server: SocketAddr, counts: &Arc<Counts>) {
    let _ = client.set_nonblocking(false);
    let Ok(upstream) = TcpStream::connect(server) else {
        let _ = client.shutdown(Shutdown::Both);
        counts.closed.fetch_add(1, Ordering::SeqCst);
        return;
    };
    // Both ends forward small IMAP lines at once, as the client and server
    // would over a direct connection.
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (Ok(from_server), Ok(to_client)) = (upstream.try_clone(), client.try_clone()) else {
        counts.closed.fetch_add(1, Ordering::SeqCst);
        return;
    };
    let back = counts.clone();
    let answers = std::thread::spawn(move || pump(from_server, to_client, &back.to_client));
    pump(client, upstream, &counts.to_server);
    let _ = answers.join();
    counts.closed.fetch_add(1, Ordering::SeqCst);
}

/// Copies `from` to `to` until either ends, counting into `count` before
/// each write, so a byte the far side has read is always counted; then
/// passes the end on.
fn pump(mut from: TcpStream, mut to: TcpStream, count: &AtomicU64) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                count.fetch_add(n as u64, Ordering::SeqCst);
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_13_every_byte_each_way_is_counted_once_the_connection_ends() {
        let server = TcpListener::bind("127.0.0.1:0").expect("bind");
        let at = server.local_addr().expect("address");
        std::thread::spawn(move || {
            let (mut peer, _) = server.accept().expect("accept");
            let mut asked = [0u8; 5];
            peer.read_exact(&mut asked).expect("read");
            peer.write_all(b"* OK twelve!").expect("answer");
        });
        let relay = Counted::start(at).expect("relay");
        let mut client = TcpStream::connect(relay.at).expect("connect");
        client.write_all(b"hello").expect("send");
        let mut answer = Vec::new();
        client.read_to_end(&mut answer).expect("answer");
        assert_eq!(answer, b"* OK twelve!");
        drop(client);
        assert!(
            relay.settle(1, Duration::from_secs(5)),
            "{:?}",
            relay.carried()
        );
        let carried = relay.carried();
        assert_eq!(
            (carried.to_server, carried.to_client, carried.closed),
            (5, 12, 1)
        );
        assert_eq!(carried.total(), 17);
        relay.reset();
        assert_eq!(relay.carried().total(), 0);
    }
}
