//! Headers a proxy must not pass on (RFC 9110 §7.6.1): those of the hop
//! between the client and the proxy, and the proxy's own.

use hyper::header::{self, HeaderMap, HeaderName};

const HOP_BY_HOP: &[HeaderName] = &[
    header::CONNECTION,
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

/// Removes hop-by-hop headers, those the `Connection` header names, and
/// every `Proxy-*` header (`Proxy-Connection` included).
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in HOP_BY_HOP.iter().chain(named.iter()) {
        headers.remove(name);
    }
    headers.remove("keep-alive");
    let proxy_headers: Vec<HeaderName> = headers
        .keys()
        .filter(|name| name.as_str().starts_with("proxy-"))
        .cloned()
        .collect();
    for name in proxy_headers {
        headers.remove(name);
    }
}

/// A site's answer as the proxy passes it on: hop-by-hop headers gone, and
/// any refusal header a site sent of its own, which only the proxy's own
/// refusals may carry (the browser reports a response with it as the
/// proxy's refusal).
pub fn strip_upstream(headers: &mut HeaderMap) {
    strip_hop_by_hop(headers);
    headers.remove(super::REFUSAL_HEADER);
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn s3_4_a_site_cannot_pass_its_answer_off_as_the_proxys_refusal() {
        let mut headers = HeaderMap::new();
        headers.insert(
            super::super::REFUSAL_HEADER,
            HeaderValue::from_static("127.0.0.1 is a loopback address"),
        );
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
        strip_upstream(&mut headers);
        assert!(headers.get(super::super::REFUSAL_HEADER).is_none());
        assert!(headers.get(header::CONTENT_TYPE).is_some());
    }
}
