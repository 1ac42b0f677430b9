//! Absolute-form requests (`GET http://host/path`): how a plain http load
//! reaches the proxy. The URL is judged, the request forwarded to the
//! judged address without its hop-by-hop headers, the answer streamed back.

use std::sync::Arc;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HOST, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri, Version};
use hyper_util::rt::TokioIo;
use url::Position;

use super::body::ProxyBody;
use super::dial::dial;
use super::headers::{strip_hop_by_hop, strip_upstream};
use super::judge::{Judged, forward_target};
use super::refuse::plain;
use super::server::Shared;

pub async fn forward(shared: Arc<Shared>, mut request: Request<Incoming>) -> Response<ProxyBody> {
    let target = match forward_target(&shared.scope, request.uri()) {
        Judged::Target(target) => target,
        Judged::Answer(status, words) => return plain(status, words),
        Judged::Refused {
            url,
            host,
            port,
            refusal,
        } => return shared.refuse(url, &host, port, refusal),
    };
    let url = target.url.to_string();
    let host = target.url.host_str().unwrap_or_default().to_owned();
    let addresses = match shared
        .scope
        .connect_addresses(&shared.resolver, &target)
        .await
    {
        Ok(addresses) => addresses,
        Err(refusal) => return shared.refuse(Some(url), &host, target.port, refusal),
    };
    let (stream, address) = match dial(&host, &addresses).await {
        Ok(connected) => connected,
        Err(e) => {
            tracing::info!(%url, error = %e, "egress request failed");
            return plain(StatusCode::BAD_GATEWAY, e.to_string());
        }
    };
    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await {
            Ok(handshake) => handshake,
            Err(_) => return closed_early(&url),
        };
    let connection_shared = shared.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = connection => {}
            () = connection_shared.stopped() => {}
        }
    });

    let origin_form = &target.url[Position::BeforePath..Position::AfterQuery];
    let Ok(origin_form) = origin_form.parse::<Uri>() else {
        return plain(
            StatusCode::BAD_REQUEST,
            format!("{url} has a path this proxy cannot pass on"),
        );
    };
    *request.uri_mut() = origin_form;
    *request.version_mut() = Version::HTTP_11;
    strip_hop_by_hop(request.headers_mut());
    // RFC 9112 §3.2.2: a proxy replaces Host with the target's authority.
    let authority = &target.url[Position::BeforeHost..Position::AfterPort];
    if let Ok(value) = HeaderValue::from_str(authority) {
        request.headers_mut().insert(HOST, value);
    }
    tracing::info!(method = %request.method(), %url, %address, "egress request");
    match sender.send_request(request).await {
        Ok(mut response) => {
            strip_upstream(response.headers_mut());
            response.map(|body| body.boxed())
        }
        Err(_) => closed_early(&url),
    }
}

fn closed_early(url: &str) -> Response<ProxyBody> {
    plain(
        StatusCode::BAD_GATEWAY,
        format!("{url}: the site closed the connection before answering"),
    )
}
