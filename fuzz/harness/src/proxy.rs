//! The egress proxy's request parser (§3.4, worker-browser/src/proxy): the
//! bytes a client sends, read by hyper's HTTP/1 server as the proxy serves
//! it (pipelined requests, upgrades for CONNECT), each request's target
//! then judged by the proxy's own judgement (`proxy::judge`, which both of
//! its routes use before they dial). Nothing is dialled: the harness
//! answers each request with the judgement. Properties: whatever a client
//! sends, a target the proxy would connect to passes the scope as the
//! `web_scope` target holds it (no forbidden literal address, no closed
//! host, `localhost` only where declared); a plain request is only ever
//! forwarded to an http URL; a CONNECT only ever to an explicit port.

use std::convert::Infallible;

use bytes::Bytes;
use collegium_web_scope::Scope;
use collegium_worker_browser::proxy::{Judged, judge};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{split, web_scope};

fn answer(scope: &Scope, declared: bool, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    let what = format!("{} {}", request.method(), request.uri());
    let status = match judge(scope, request.method(), request.uri()) {
        Judged::Target(target) => {
            web_scope::judged_in(scope, declared, &target.host, &what);
            if request.method() == Method::CONNECT {
                assert!(
                    target.url.port().is_some() || target.port == 443,
                    "{what}: a tunnel to an unstated port"
                );
            } else {
                assert_eq!(target.url.scheme(), "http", "{what}: forwarded as plain");
            }
            StatusCode::OK
        }
        Judged::Answer(status, words) => {
            assert!(!words.is_empty(), "{what}: answered without words");
            status
        }
        Judged::Refused { refusal, .. } => {
            assert!(!refusal.to_string().is_empty());
            StatusCode::FORBIDDEN
        }
    };
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response
}

pub fn run(data: &[u8]) {
    let (flags, bytes) = split::selector(data);
    let declared = flags & 1 == 1;
    let scope = web_scope::scope(declared);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(async {
        let (mut client, server) = tokio::io::duplex(bytes.len() + 64 * 1024);
        let scope = &scope;
        let service = service_fn(move |request: Request<Incoming>| {
            let response = answer(scope, declared, &request);
            async move { Ok::<_, Infallible>(response) }
        });
        let serving = http1::Builder::new()
            .serve_connection(TokioIo::new(server), service)
            .with_upgrades();
        let talking = async {
            let _ = client.write_all(bytes).await;
            let _ = client.shutdown().await;
            let mut answers = Vec::new();
            let _ = client.read_to_end(&mut answers).await;
        };
        let (_, ()) = tokio::join!(serving, talking);
    });
}
