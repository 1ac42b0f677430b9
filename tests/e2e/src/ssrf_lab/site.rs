//! Test hosts: HTTP/1.1 servers answering what a test scripts, path by path
//! (status, headers, body; redirects), and recording every request.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use super::hits::{Hit, Hits, Transport};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Bytes,
}

impl Reply {
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// A 200 HTML page.
    pub fn html(body: impl Into<String>) -> Self {
        Self::new(200)
            .header("content-type", "text/html; charset=utf-8")
            .body(body.into())
    }

    /// A 200 plain-text body.
    pub fn text(body: impl Into<String>) -> Self {
        Self::new(200)
            .header("content-type", "text/plain; charset=utf-8")
            .body(body.into())
    }

    /// A redirect (301, 302, 303, 307, 308) to `location`, sent as given.
    pub fn redirect(status: u16, location: impl Into<String>) -> Self {
        Self::new(status).header("location", location)
    }

    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }
}

/// What a test host answers: a reply per path (with or without its query),
/// and a fallback for the rest (404 unless set).
#[derive(Debug, Clone)]
pub struct Site {
    routes: HashMap<String, Reply>,
    fallback: Reply,
}

impl Default for Site {
    fn default() -> Self {
        Self::new()
    }
}

impl Site {
    pub fn new() -> Self {
        Self {
            routes: HashMap::new(),
            fallback: Reply::new(404)
                .header("content-type", "text/plain; charset=utf-8")
                .body("not found"),
        }
    }

    /// Serves `path` (`/a/b` or `/a?b=c`) with `reply`.
    pub fn route(mut self, path: impl Into<String>, reply: Reply) -> Self {
        self.routes.insert(path.into(), reply);
        self
    }

    /// Serves `path` as a 200 HTML page.
    pub fn page(self, path: impl Into<String>, html: impl Into<String>) -> Self {
        self.route(path, Reply::html(html))
    }

    /// Answers every path no route names with `reply`.
    pub fn fallback(mut self, reply: Reply) -> Self {
        self.fallback = reply;
        self
    }

    /// A honeypot's answer to anything: a page saying where it was reached,
    /// so an attempt the policy wrongly lets through shows it in its result
    /// as well as in the hit count.
    pub(super) fn honeypot(addr: SocketAddr) -> Self {
        Self::new().fallback(Reply::text(format!("honeypot {addr}")))
    }

    fn reply_for(&self, target: &str) -> &Reply {
        let path = target.split('?').next().unwrap_or(target);
        self.routes
            .get(target)
            .or_else(|| self.routes.get(path))
            .unwrap_or(&self.fallback)
    }
}

/// A request a test host answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub method: String,
    /// The path and query, as requested.
    pub target: String,
    /// The `Host` header, if any.
    pub host: Option<String>,
    pub from: SocketAddr,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Requests(Arc<Mutex<Vec<Served>>>);

impl Requests {
    fn record(&self, served: Served) {
        // A panic while holding the lock cannot leave a half-pushed Vec.
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(served);
    }

    pub fn all(&self) -> Vec<Served> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

fn respond(reply: &Reply) -> Response<Full<Bytes>> {
    let mut builder = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .body(Full::new(reply.body.clone()))
        .unwrap_or_else(|error| {
            let mut response = Response::new(Full::new(Bytes::from(format!(
                "the test scripted a reply hyper cannot send: {error}"
            ))));
            *response.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
            response
        })
}

/// Serves `site` on `listener` until the lab's runtime stops, recording each
/// connection in `hits` and each request in `requests`.
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    site: Arc<Site>,
    hits: Hits,
    requests: Requests,
) {
    let Ok(local) = listener.local_addr() else {
        return;
    };
    loop {
        let (stream, from) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                // Out of descriptors, say: wait rather than spin.
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                continue;
            }
        };
        hits.add(Hit {
            transport: Transport::Tcp,
            addr: local.ip(),
            port: local.port(),
            from,
        });
        let site = site.clone();
        let requests = requests.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let target = request
                    .uri()
                    .path_and_query()
                    .map_or_else(|| request.uri().to_string(), |p| p.as_str().to_string());
                requests.record(Served {
                    method: request.method().to_string(),
                    host: request
                        .headers()
                        .get(hyper::header::HOST)
                        .and_then(|h| h.to_str().ok())
                        .map(str::to_string),
                    target: target.clone(),
                    from,
                });
                let response = respond(site.reply_for(&target));
                async move { Ok::<_, Infallible>(response) }
            });
            // A client that hangs up or speaks something else (TLS to a
            // honeypot's 443) ends only its own connection.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Records every datagram `socket` receives in `hits`, answering none.
pub(super) async fn sink_udp(socket: tokio::net::UdpSocket, hits: Hits) {
    let Ok(local) = socket.local_addr() else {
        return;
    };
    let mut buffer = vec![0u8; 65536];
    loop {
        let from = match socket.recv_from(&mut buffer).await {
            Ok((_, from)) => from,
            Err(_) => {
                // An ICMP error queued on the socket, say: wait rather than spin.
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                continue;
            }
        };
        hits.add(Hit {
            transport: Transport::Udp,
            addr: local.ip(),
            port: local.port(),
            from,
        });
    }
}
