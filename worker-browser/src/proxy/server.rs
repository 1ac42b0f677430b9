//! The proxy's listener on loopback and what every connection shares.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use collegium_web_scope::{Refusal, Resolver, Scope};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::body::ProxyBody;
use super::log::{ProxyLog, RefusalRecord, normalise_host};
use super::refuse::refused;
use super::{connect, forward};

/// The proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// Binding 127.0.0.1:0 failed.
    #[error("the egress proxy could not listen on 127.0.0.1: {0}")]
    Bind(#[source] std::io::Error),
}

/// The egress proxy Chromium's `--proxy-server` points at.
#[derive(Debug)]
pub struct EgressProxy;

impl EgressProxy {
    /// Listens on 127.0.0.1 at a port the kernel picks and serves until the
    /// returned handle is shut down or dropped.
    pub async fn start(scope: Arc<Scope>, resolver: Resolver) -> Result<RunningProxy, ProxyError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(ProxyError::Bind)?;
        let address = listener.local_addr().map_err(ProxyError::Bind)?;
        let (stop, stopped) = watch::channel(());
        let log = Arc::new(ProxyLog::default());
        let shared = Arc::new(Shared {
            scope,
            resolver,
            log: log.clone(),
            stopped,
        });
        tracing::info!(%address, "egress proxy listening");
        let task = tokio::spawn(accept(listener, shared));
        Ok(RunningProxy {
            address,
            log,
            stop: Some(stop),
            task,
        })
    }
}

/// A listening proxy; dropping it stops the listener and every connection
/// and tunnel it carries.
#[derive(Debug)]
pub struct RunningProxy {
    address: SocketAddr,
    log: Arc<ProxyLog>,
    stop: Option<watch::Sender<()>>,
    task: JoinHandle<()>,
}

impl RunningProxy {
    /// Where the proxy listens: `--proxy-server=http://{address}`.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The refusals it made lately.
    pub fn log(&self) -> Arc<ProxyLog> {
        self.log.clone()
    }

    /// Stops the listener, every connection and every tunnel.
    pub async fn shutdown(mut self) {
        self.stop.take();
        let _ = (&mut self.task).await;
    }
}

impl Drop for RunningProxy {
    fn drop(&mut self) {
        // Dropping the sender wakes every connection's `stopped`.
        self.stop.take();
        self.task.abort();
    }
}

/// What every connection of one proxy shares.
pub(super) struct Shared {
    pub scope: Arc<Scope>,
    pub resolver: Resolver,
    pub log: Arc<ProxyLog>,
    /// Resolves once the proxy is shut down.
    pub stopped: watch::Receiver<()>,
}

impl Shared {
    /// Records and logs a refusal, and answers it.
    pub fn refuse(
        &self,
        url: Option<String>,
        host: &str,
        port: u16,
        refusal: Refusal,
    ) -> Response<ProxyBody> {
        tracing::warn!(
            url = url.as_deref().unwrap_or(""),
            host,
            port,
            refusal = %refusal,
            "egress refused"
        );
        let response = refused(&refusal);
        self.log.record(RefusalRecord {
            url,
            host: normalise_host(host),
            port,
            refusal,
        });
        response
    }

    /// Resolves once the proxy is shut down.
    pub async fn stopped(&self) {
        let mut stopped = self.stopped.clone();
        // An error means the sender is gone: the proxy stopped.
        let _ = stopped.changed().await;
    }
}

async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, from)) => {
                    if admitted(&stream, from) {
                        tokio::spawn(serve(stream, shared.clone()));
                    }
                }
                Err(e) => {
                    // Descriptor exhaustion passes; keep accepting.
                    tracing::warn!(error = %e, "egress proxy accept failed");
                    tokio::task::yield_now().await;
                }
            },
            () = shared.stopped() => return,
        }
    }
}

/// Whether the client at `from` is this worker's own user (`peer`): any
/// other is closed at once, unanswered, and logged.
fn admitted(stream: &TcpStream, from: SocketAddr) -> bool {
    let own = nix::unistd::geteuid().as_raw();
    let owner = stream
        .local_addr()
        .ok()
        .and_then(|server| super::peer::owner(from, server));
    if owner == Some(own) {
        return true;
    }
    match owner {
        Some(uid) => {
            tracing::warn!(%from, uid, "egress proxy closed a connection from another user than its own")
        }
        None => {
            tracing::warn!(%from, "egress proxy closed a connection whose owner the kernel does not list")
        }
    }
    false
}

/// How long a request's head may take to arrive once its connection is
/// open, or the connection is idle between requests.
pub const HEAD_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

async fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let handler = shared.clone();
    let service = service_fn(move |request: Request<Incoming>| {
        let shared = handler.clone();
        async move {
            let response = if request.method() == Method::CONNECT {
                connect::tunnel(shared, request).await
            } else {
                forward::forward(shared, request).await
            };
            Ok::<_, Infallible>(response)
        }
    });
    // A client that opens a connection and never finishes its request's
    // head must not hold the connection open for ever.
    let connection = http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEAD_WITHIN)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::select! {
        _ = connection => {}
        () = shared.stopped() => {}
    }
}
