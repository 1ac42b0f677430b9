//! A TCP relay in front of a real SMTP server that hangs up on its client
//! right after forwarding the message's final `CRLF.CRLF`: the server gets
//! the whole message and delivers it, and the client never hears that it
//! did. This is the send whose outcome cannot be established (§7.1).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A running relay; it stops taking connections when dropped.
pub struct CutAfterDot {
    /// Where a client connects, in place of the server.
    pub at: SocketAddr,
    stop: Arc<AtomicBool>,
}

const END_OF_DATA: &[u8] = b"\r\n.\r\n";

impl CutAfterDot {
    /// Relays to `server`.
    pub fn start(server: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let at = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        std::thread::spawn(move || relay(client, server));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Ok(Self { at, stop })
    }
}

impl Drop for CutAfterDot {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn relay(client: TcpStream, server: SocketAddr) {
    let _ = client.set_nonblocking(false);
    let Ok(upstream) = TcpStream::connect(server) else {
        return;
    };
    let (Ok(mut from_server), Ok(mut to_client)) = (upstream.try_clone(), client.try_clone())
    else {
        return;
    };
    // The server's words go to the client until the client is cut off.
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n) = from_server.read(&mut buffer) {
            if n == 0 || to_client.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
    });
    let (mut from_client, mut to_server) = (client, upstream);
    let mut tail: Vec<u8> = Vec::new();
    let mut buffer = [0u8; 4096];
    while let Ok(n) = from_client.read(&mut buffer) {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buffer[..n]);
        if tail.windows(END_OF_DATA.len()).any(|w| w == END_OF_DATA) {
            // The client is cut off BEFORE the server has the final dot:
            // forwarded first, the server's 250 could reach the client in
            // the moment before the cut (seen under load). The server then
            // gets the whole message, and its side stays open long enough
            // to answer and deliver.
            let _ = from_client.shutdown(Shutdown::Both);
            let _ = to_server.write_all(&buffer[..n]);
            std::thread::sleep(Duration::from_secs(2));
            let _ = to_server.write_all(b"QUIT\r\n");
            return;
        }
        if to_server.write_all(&buffer[..n]).is_err() {
            break;
        }
        let keep = tail.len().saturating_sub(END_OF_DATA.len());
        tail.drain(..keep);
    }
}
