//! What the proxy makes of a request's target before it connects anywhere
//! (§3.4): an absolute-form request's URL, or a CONNECT's `host:port`,
//! judged by the scope. The one place both routes read the target, kept
//! apart from the dial so the fuzz harness (fuzz/harness) can drive it on
//! any request without connecting.

use collegium_web_scope::{Refusal, Scope, Target};
use hyper::{Method, StatusCode, Uri};
use url::Url;

/// A request's target, judged.
#[derive(Debug)]
pub enum Judged {
    /// In scope: connect to what the scope judged, and nothing else.
    Target(Target),
    /// Answered at once, connecting nowhere: not a request this proxy takes.
    Answer(StatusCode, String),
    /// Refused by the scope: recorded and answered as the refusal.
    Refused {
        url: Option<String>,
        host: String,
        port: u16,
        refusal: Refusal,
    },
}

/// Judges the target of a request with `method` to `uri`.
pub fn judge(scope: &Scope, method: &Method, uri: &Uri) -> Judged {
    if method == Method::CONNECT {
        connect_target(scope, uri)
    } else {
        forward_target(scope, uri)
    }
}

/// An absolute-form request (`GET http://host/path`): only plain http,
/// since https goes through CONNECT.
pub(super) fn forward_target(scope: &Scope, uri: &Uri) -> Judged {
    if uri.scheme().is_none() || uri.authority().is_none() {
        tracing::warn!(%uri, "egress proxy got a request that is not a proxy request");
        return Judged::Answer(
            StatusCode::BAD_REQUEST,
            format!(
                "{uri} is not a proxy request: this egress proxy takes absolute-form requests (GET http://host/path) and CONNECT host:port"
            ),
        );
    }
    let asked = uri.to_string();
    let target = match scope.judge_url(&asked) {
        Ok(target) => target,
        Err(refusal) => {
            // Keyed as `url` spells it, as the worker's own `Url` will be.
            let (url, host, port) = match Url::parse(&asked) {
                Ok(parsed) => (
                    parsed.to_string(),
                    parsed.host_str().unwrap_or_default().to_owned(),
                    parsed.port_or_known_default().unwrap_or(0),
                ),
                Err(_) => (asked, uri.host().unwrap_or_default().to_owned(), 0),
            };
            return Judged::Refused {
                url: Some(url),
                host,
                port,
                refusal,
            };
        }
    };
    if target.url.scheme() != "http" {
        return Judged::Answer(
            StatusCode::BAD_REQUEST,
            format!(
                "{} is an https URL: it goes through CONNECT, not as a plain request",
                target.url
            ),
        );
    }
    Judged::Target(target)
}

/// `CONNECT host:port`.
pub(super) fn connect_target(scope: &Scope, uri: &Uri) -> Judged {
    let Some(authority) = uri.authority().map(|a| a.as_str().to_owned()) else {
        return Judged::Answer(
            StatusCode::BAD_REQUEST,
            "a CONNECT request names host:port, and this one does not".to_owned(),
        );
    };
    match scope.judge_authority(&authority) {
        Ok(target) => Judged::Target(target),
        Err(refusal) => {
            let (host, port) = host_and_port(&authority);
            Judged::Refused {
                url: None,
                host,
                port,
                refusal,
            }
        }
    }
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
