//! One IMAP connection per call (§3.13): connected, secured, logged in and
//! the INBOX selected, every step held to a timeout. A connection lives for
//! one call and no longer: calls are rare and short, and a session kept open
//! would need its own liveness and reconnect logic for nothing. A failure
//! fails that call only, never the worker.

use std::fmt::Debug;
use std::time::Duration;

use async_imap::{Client, Session};
use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, BufWriter};
use tokio::net::TcpStream;

use crate::settings::{Server, Tls};
use crate::tls::Trust;

/// How long one network step (connect, handshake, a command's answer) may
/// take before the call fails.
pub const STEP: Duration = Duration::from_secs(30);

pub trait Io: AsyncRead + AsyncWrite + Unpin + Send + Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + Debug> Io for T {}

/// A logged-in session with the INBOX selected.
pub type ImapSession = Session<Box<dyn Io>>;

/// Why a connection could not be had, sorted as the boot check needs it.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The server answered and refused the login: waiting cannot fix it.
    #[error("{server} refused the login of {username}: {said}")]
    Refused {
        server: String,
        username: String,
        said: String,
    },
    /// No answer, or none that settles the credentials.
    #[error("{server} could not be reached: {reason}")]
    Unreachable { server: String, reason: String },
}

/// What a selected INBOX says of itself.
#[derive(Debug, Clone, Copy)]
pub struct Selected {
    pub uidvalidity: u32,
    pub exists: u32,
    pub uid_next: Option<u32>,
}

/// Connects to `server`, logs in and selects the INBOX.
pub async fn open(server: &Server, trust: &Trust) -> Result<(ImapSession, Selected), ConnectError> {
    let named = server.named();
    let unreachable = |reason: String| ConnectError::Unreachable {
        server: named.clone(),
        reason,
    };
    let stream = connect(server).await.map_err(&unreachable)?;
    // async-imap writes a command in four pieces (tag, space, command, CRLF)
    // and then flushes: buffered, the command leaves as one TLS record in
    // one segment, not four (docs/benchmarks.md, "Polling a big INBOX").
    let stream: Box<dyn Io> = match server.tls {
        Tls::Implicit => Box::new(BufWriter::new(
            secure(stream, server, trust).await.map_err(&unreachable)?,
        )),
        Tls::None => Box::new(BufWriter::new(stream)),
        Tls::Starttls => {
            let mut client = Client::new(stream);
            greeting(&mut client).await.map_err(&unreachable)?;
            step(client.run_command_and_check_ok("STARTTLS", None))
                .await
                .map_err(&unreachable)?
                .map_err(|e| unreachable(format!("STARTTLS: {e}")))?;
            let plain = client.into_inner();
            Box::new(BufWriter::new(
                secure(plain, server, trust).await.map_err(&unreachable)?,
            ))
        }
    };
    let mut client = Client::new(stream);
    if server.tls != Tls::Starttls {
        greeting(&mut client).await.map_err(&unreachable)?;
    }
    let login = step(client.login(&server.username, server.password.expose()))
        .await
        .map_err(&unreachable)?;
    let mut session = match login {
        Ok(session) => session,
        Err((async_imap::error::Error::No(said), _)) => {
            return Err(ConnectError::Refused {
                server: named,
                username: server.username.clone(),
                said,
            });
        }
        Err((async_imap::error::Error::Bad(said), _)) => {
            return Err(ConnectError::Refused {
                server: named,
                username: server.username.clone(),
                said,
            });
        }
        Err((other, _)) => return Err(unreachable(format!("logging in: {other}"))),
    };
    let mailbox = step(session.select("INBOX"))
        .await
        .map_err(&unreachable)?
        .map_err(|e| unreachable(format!("selecting the INBOX: {e}")))?;
    let uidvalidity = mailbox
        .uid_validity
        .ok_or_else(|| unreachable("the INBOX reports no UIDVALIDITY".into()))?;
    Ok((
        session,
        Selected {
            uidvalidity,
            exists: mailbox.exists,
            uid_next: mailbox.uid_next,
        },
    ))
}

/// Logs out, best effort and bounded: the call's answer does not wait on a
/// server slow to say goodbye.
pub async fn close(mut session: ImapSession) {
    let _ = tokio::time::timeout(Duration::from_secs(5), session.logout()).await;
}

/// Runs one network step under [`STEP`].
pub async fn step<T>(future: impl std::future::Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(STEP, future)
        .await
        .map_err(|_| format!("no answer within {} s", STEP.as_secs()))
}

/// A TCP connection to `server` with Nagle's algorithm off. IMAP is one
/// short command, then its answer: with Nagle on, a command's later pieces
/// wait for the server to acknowledge its first, which the server delays
/// (40 ms on Linux) while it waits for the rest of the command. That was
/// 40 ms a command, 190 ms an idle poll and 88 ms an arrival, whatever the
/// INBOX held (docs/benchmarks.md).
async fn connect(server: &Server) -> Result<TcpStream, String> {
    let stream = step(TcpStream::connect((server.host.as_str(), server.port)))
        .await?
        .map_err(|e| e.to_string())?;
    stream
        .set_nodelay(true)
        .map_err(|e| format!("setting TCP_NODELAY: {e}"))?;
    Ok(stream)
}

async fn greeting<T: Io>(client: &mut Client<T>) -> Result<(), String> {
    match step(client.read_response()).await? {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err("the server closed the connection before greeting".into()),
        Err(e) => Err(format!("reading the greeting: {e}")),
    }
}

async fn secure(
    stream: TcpStream,
    server: &Server,
    trust: &Trust,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, String> {
    let config = trust
        .client_config()
        .map_err(|e| format!("TLS configuration: {e}"))?;
    let name = ServerName::try_from(server.host.clone())
        .map_err(|e| format!("`{}` is not a server name TLS can verify: {e}", server.host))?;
    step(tokio_rustls::TlsConnector::from(config).connect(name, stream))
        .await?
        .map_err(|e| format!("TLS: {e}"))
}

#[cfg(test)]
mod tests {
    use crate::settings::{Password, Server, Tls};

    #[tokio::test]
    async fn s3_13_a_connection_sends_each_command_without_waiting_for_an_acknowledgement() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listen");
        let port = listener.local_addr().expect("address").port();
        let server = Server {
            host: "127.0.0.1".into(),
            port,
            username: "mira@mail.test".into(),
            password: Password::new("unused".into()),
            tls: Tls::Implicit,
        };
        let stream = super::connect(&server).await.expect("connect");
        assert!(stream.nodelay().expect("read TCP_NODELAY"));
    }
}
