//! Chromium's DevTools over a pipe, never a port (§3.4 scope; §6.4: an
//! agent's user never reaches what drives the framework).
//!
//! A DevTools port on loopback is open to every local process: an agent's
//! shell command could find it in `/proc/net/tcp` and drive another turn's
//! browser, or open a `file:` URL as the worker's user, which no proxy
//! sees. So Chromium runs with `--remote-debugging-pipe`: it reads commands
//! on its fd 3 and writes answers and events on its fd 4, each message
//! ended by a NUL, and listens on no port.
//!
//! chromiumoxide speaks CDP over a WebSocket only, so the worker bridges
//! it: a listener on `127.0.0.1:0` that admits the one connection whose
//! path carries a 256-bit secret known only to this process, then closes.
//! Until chromiumoxide has connected (milliseconds after the bind) a local
//! process can reach the listener, but without the secret it is refused
//! before any message passes; after, nothing listens.

use std::io;
use std::os::fd::OwnedFd;
use std::time::Duration;

use async_tungstenite::WebSocketStream;
use async_tungstenite::tokio::TokioAdapter;
use async_tungstenite::tungstenite::Message;
use async_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use async_tungstenite::tungstenite::http::StatusCode;
use async_tungstenite::tungstenite::protocol::WebSocketConfig;
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// The largest message Chromium may send. A page can make a snapshot large,
/// but not this large; one over it ends the session rather than the
/// worker's memory.
pub const MESSAGE_CAP: usize = 256 * 1024 * 1024;
/// How long the bridge waits for chromiumoxide to connect.
const ADMIT_WITHIN: Duration = Duration::from_secs(20);
/// How long one connection may take over its WebSocket handshake.
const HANDSHAKE_WITHIN: Duration = Duration::from_secs(5);
/// How many handshakes may be under way at once; a flood beyond it is
/// closed at accept.
const PENDING_HANDSHAKES: usize = 16;

/// The two ends Chromium gets: it reads commands on fd 3 and writes on fd 4.
pub struct ChromiumEnds {
    pub reads: OwnedFd,
    pub writes: OwnedFd,
}

/// The worker's ends of the two pipes.
pub struct WorkerEnds {
    to_chromium: OwnedFd,
    from_chromium: OwnedFd,
}

/// Two pipes, both close-on-exec on the worker's side so that no other
/// Chromium the worker starts inherits them.
pub fn pipes() -> io::Result<(WorkerEnds, ChromiumEnds)> {
    let (command_reader, command_writer) = io::pipe()?;
    let (event_reader, event_writer) = io::pipe()?;
    Ok((
        WorkerEnds {
            to_chromium: command_writer.into(),
            from_chromium: event_reader.into(),
        },
        ChromiumEnds {
            reads: command_reader.into(),
            writes: event_writer.into(),
        },
    ))
}

/// The bridge between chromiumoxide's WebSocket and Chromium's pipe.
pub struct Bridge {
    /// The address chromiumoxide connects to, secret included.
    pub url: String,
    task: JoinHandle<()>,
}

impl Bridge {
    /// Listens for chromiumoxide and, once it has connected, carries
    /// messages both ways until either side closes.
    pub async fn open(ends: WorkerEnds) -> io::Result<Self> {
        let to_chromium = pipe::Sender::from_owned_fd(ends.to_chromium)?;
        let from_chromium = pipe::Receiver::from_owned_fd(ends.from_chromium)?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let path = format!("/devtools/browser/{}", secret()?);
        let url = format!("ws://127.0.0.1:{port}{path}");
        let task = tokio::spawn(async move {
            let Some(socket) = admit(listener, path).await else {
                return;
            };
            carry(socket, to_chromium, from_chromium).await;
        });
        Ok(Self { url, task })
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// 256 bits from the operating system's generator, in hex.
fn secret() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

type Socket = WebSocketStream<TokioAdapter<TcpStream>>;

/// Accepts until one connection asks for `path`; the listener closes with
/// this function, so nothing listens once the bridge is in use.
async fn admit(listener: TcpListener, path: String) -> Option<Socket> {
    let mut handshakes = JoinSet::new();
    let deadline = tokio::time::sleep(ADMIT_WITHIN);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, from)) = accepted else { continue };
                if handshakes.len() >= PENDING_HANDSHAKES {
                    tracing::warn!("DevTools bridge: {from} refused, {PENDING_HANDSHAKES} handshakes already under way");
                    continue;
                }
                let path = path.clone();
                handshakes.spawn(async move {
                    let result = tokio::time::timeout(HANDSHAKE_WITHIN, handshake(stream, path)).await;
                    (from, result)
                });
            }
            Some(done) = handshakes.join_next() => {
                match done {
                    Ok((_, Ok(Ok(socket)))) => return Some(socket),
                    Ok((from, _)) => tracing::warn!("DevTools bridge: {from} refused, it did not ask for the secret path"),
                    Err(_) => {}
                }
            }
            () = &mut deadline => {
                tracing::warn!("DevTools bridge: nothing connected within {ADMIT_WITHIN:?}");
                return None;
            }
        }
    }
}

// tungstenite's handshake callback fixes its error type, large or not.
#[allow(clippy::result_large_err)]
async fn handshake(
    stream: TcpStream,
    path: String,
) -> Result<Socket, async_tungstenite::tungstenite::Error> {
    let check = move |request: &Request, response: Response| {
        if same_secret(request.uri().path().as_bytes(), path.as_bytes()) {
            Ok(response)
        } else {
            let mut refusal = ErrorResponse::new(None);
            *refusal.status_mut() = StatusCode::NOT_FOUND;
            Err(refusal)
        }
    };
    // The one client is this process's chromiumoxide, which sets no cap of
    // its own; Chromium's side is capped where it is read.
    let config = WebSocketConfig::default()
        .max_message_size(None)
        .max_frame_size(None);
    async_tungstenite::tokio::accept_hdr_async_with_config(stream, check, Some(config)).await
}

/// Compares in time independent of where the two differ.
fn same_secret(offered: &[u8], expected: &[u8]) -> bool {
    offered.len() == expected.len()
        && offered
            .iter()
            .zip(expected)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

/// Carries chromiumoxide's messages to Chromium and Chromium's back until
/// either side closes; then closes the other.
async fn carry(socket: Socket, mut to_chromium: pipe::Sender, from_chromium: pipe::Receiver) {
    let (mut outgoing, mut incoming) = socket.split();
    let commands = async {
        while let Some(Ok(message)) = incoming.next().await {
            let bytes = match message {
                Message::Text(text) => text.as_bytes().to_vec(),
                Message::Binary(bytes) => bytes.to_vec(),
                Message::Close(_) => break,
                _ => continue,
            };
            let written = async {
                to_chromium.write_all(&bytes).await?;
                to_chromium.write_all(&[0]).await
            };
            if let Err(error) = written.await {
                tracing::debug!("DevTools bridge: Chromium's pipe closed: {error}");
                break;
            }
        }
    };
    let events = async {
        let mut reader = BufReader::new(from_chromium);
        loop {
            match read_message(&mut reader).await {
                Ok(Some(text)) => {
                    if outgoing.send(Message::text(text)).await.is_err() {
                        break;
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!("DevTools bridge: {error}; the session ends");
                    break;
                }
            }
        }
        let _ = outgoing.close(None).await;
    };
    tokio::select! {
        () = commands => {}
        () = events => {}
    }
}

/// One NUL-ended message from Chromium; `None` once it has closed its end.
async fn read_message<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
) -> io::Result<Option<String>> {
    let mut bytes = Vec::new();
    let cap = u64::try_from(MESSAGE_CAP).unwrap_or(u64::MAX);
    let read = reader.take(cap + 1).read_until(0, &mut bytes).await?;
    if read == 0 {
        return Ok(None);
    }
    if bytes.last() != Some(&0) {
        if bytes.len() > MESSAGE_CAP {
            return Err(io::Error::other(format!(
                "Chromium sent a DevTools message over {} MiB",
                MESSAGE_CAP / (1024 * 1024)
            )));
        }
        // Its end closed partway through a message: nothing more comes.
        return Ok(None);
    }
    bytes.pop();
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| io::Error::other("Chromium sent a DevTools message that is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn s3_4_messages_from_chromium_are_split_at_each_nul() {
        let mut input: &[u8] = b"{\"id\":1}\0{\"id\":2}\0{\"partial";
        assert_eq!(
            read_message(&mut input).await.expect("read").as_deref(),
            Some("{\"id\":1}")
        );
        assert_eq!(
            read_message(&mut input).await.expect("read").as_deref(),
            Some("{\"id\":2}")
        );
        assert_eq!(read_message(&mut input).await.expect("read"), None);
    }

    #[test]
    fn s6_4_the_bridge_s_secret_must_match_in_full() {
        assert!(same_secret(
            b"/devtools/browser/ab",
            b"/devtools/browser/ab"
        ));
        assert!(!same_secret(
            b"/devtools/browser/a",
            b"/devtools/browser/ab"
        ));
        assert!(!same_secret(
            b"/devtools/browser/ac",
            b"/devtools/browser/ab"
        ));
    }
}

#[cfg(test)]
mod bridge_tests {
    use super::*;
    use async_tungstenite::tokio::connect_async;
    use tokio::io::AsyncWriteExt;

    /// A stand-in for Chromium: the far ends of the pipes, as async halves.
    fn far_ends(ends: ChromiumEnds) -> (BufReader<pipe::Receiver>, pipe::Sender) {
        (
            BufReader::new(pipe::Receiver::from_owned_fd(ends.reads).expect("reads")),
            pipe::Sender::from_owned_fd(ends.writes).expect("writes"),
        )
    }

    fn port_of(url: &str) -> u16 {
        let rest = url.strip_prefix("ws://127.0.0.1:").expect("a loopback url");
        rest.split('/')
            .next()
            .expect("a port")
            .parse()
            .expect("a port")
    }

    #[tokio::test]
    async fn s3_4_a_connection_without_the_secret_is_refused_and_the_one_with_it_carries_messages()
    {
        let (worker, chromium) = pipes().expect("pipes");
        let bridge = Bridge::open(worker).await.expect("open");
        let port = port_of(&bridge.url);
        let guessed = format!("ws://127.0.0.1:{port}/devtools/browser/0000");
        let refused = connect_async(&guessed).await;
        assert!(refused.is_err(), "a guessed path was let in");
        let (mut socket, _) = connect_async(&bridge.url).await.expect("connect");
        // Once admitted, nothing listens: a second caller meets a closed port.
        let mut closed = false;
        for _ in 0..100 {
            if TcpStream::connect(("127.0.0.1", port)).await.is_err() {
                closed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            closed,
            "the bridge still listens after admitting its client"
        );

        let (mut reads, mut writes) = far_ends(chromium);
        socket
            .send(Message::text(
                "{\"id\":1,\"method\":\"Browser.getVersion\"}",
            ))
            .await
            .expect("send");
        let command = read_message(&mut reads).await.expect("read");
        assert_eq!(
            command.as_deref(),
            Some("{\"id\":1,\"method\":\"Browser.getVersion\"}")
        );
        writes
            .write_all(b"{\"id\":1,\"result\":{}}\0")
            .await
            .expect("write");
        let answer = socket.next().await.expect("an answer").expect("a message");
        assert_eq!(answer, Message::text("{\"id\":1,\"result\":{}}"));

        // Chromium gone: its end closes and so does the socket.
        drop(writes);
        let ending = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match socket.next().await {
                    None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
                    Some(Ok(_)) => {}
                }
            }
        })
        .await;
        assert!(ending.is_ok(), "the socket outlived Chromium's pipe");
    }
}
