//! `CONNECT host:port`: the tunnel an https load, or any WebSocket, takes
//! through the proxy. The target is judged and the tunnel opened to the
//! judged address.

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use url::Url;

use super::body::{ProxyBody, empty};
use super::dial::dial;
use super::refuse::plain;
use super::server::Shared;

pub async fn tunnel(shared: Arc<Shared>, request: Request<Incoming>) -> Response<ProxyBody> {
    let Some(authority) = request.uri().authority().map(|a| a.as_str().to_owned()) else {
        return plain(
            StatusCode::BAD_REQUEST,
            "a CONNECT request names host:port, and this one does not".to_owned(),
        );
    };
    let target = match shared.scope.judge_authority(&authority) {
        Ok(target) => target,
        Err(refusal) => {
            let (host, port) = host_and_port(&authority);
            return shared.refuse(None, &host, port, refusal);
        }
    };
    let host = target.url.host_str().unwrap_or_default().to_owned();
    let addresses = match shared
        .scope
        .connect_addresses(&shared.resolver, &target)
        .await
    {
        Ok(addresses) => addresses,
        Err(refusal) => return shared.refuse(None, &host, target.port, refusal),
    };
    let (mut upstream, address) = match dial(&host, &addresses).await {
        Ok(connected) => connected,
        Err(e) => {
            tracing::info!(target = %authority, error = %e, "egress tunnel failed");
            return plain(StatusCode::BAD_GATEWAY, e.to_string());
        }
    };
    tracing::info!(target = %authority, %address, "egress tunnel opened");
    tokio::spawn(async move {
        let upgraded = match hyper::upgrade::on(request).await {
            Ok(upgraded) => upgraded,
            Err(e) => {
                tracing::debug!(error = %e, "egress tunnel's client left before the upgrade");
                return;
            }
        };
        let mut client = TokioIo::new(upgraded);
        tokio::select! {
            _ = tokio::io::copy_bidirectional(&mut client, &mut upstream) => {}
            () = shared.stopped() => {}
        }
    });
    Response::new(empty())
}

/// The host and port a refused target named, as `url` would spell them,
/// for the refusal record.
fn host_and_port(authority: &str) -> (String, u16) {
    match Url::parse(&format!("https://{authority}/")) {
        Ok(url) => (
            url.host_str().unwrap_or(authority).to_owned(),
            url.port_or_known_default().unwrap_or(0),
        ),
        Err(_) => (authority.to_owned(), 0),
    }
}
