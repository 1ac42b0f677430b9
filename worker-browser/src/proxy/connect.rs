//! `CONNECT host:port`: the tunnel an https load, or any WebSocket, takes
//! through the proxy. The target is judged and the tunnel opened to the
//! judged address.

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::body::{ProxyBody, empty};
use super::dial::dial;
use super::judge::{Judged, connect_target};
use super::refuse::plain;
use super::server::Shared;

pub async fn tunnel(shared: Arc<Shared>, request: Request<Incoming>) -> Response<ProxyBody> {
    let authority = request
        .uri()
        .authority()
        .map(|a| a.as_str().to_owned())
        .unwrap_or_default();
    let target = match connect_target(&shared.scope, request.uri()) {
        Judged::Target(target) => target,
        Judged::Answer(status, words) => return plain(status, words),
        Judged::Refused {
            url,
            host,
            port,
            refusal,
        } => return shared.refuse(url, &host, port, refusal),
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
