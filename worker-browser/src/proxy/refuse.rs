//! The proxy's answers that are not the site's: refusals (403 with the
//! refusal's text, in the body and in a header) and its own failures.

use collegium_web_scope::Refusal;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};

use super::REFUSAL_HEADER;
use super::body::{ProxyBody, text};

/// A 403 naming what the scope refused.
pub fn refused(refusal: &Refusal) -> Response<ProxyBody> {
    let words = refusal.to_string();
    let mut response = plain(StatusCode::FORBIDDEN, words.clone());
    // Header values may carry UTF-8 bytes (the `§`) but no control
    // characters; the Display text has none.
    if let Ok(value) = HeaderValue::from_bytes(words.as_bytes()) {
        response.headers_mut().insert(REFUSAL_HEADER, value);
    }
    response
}

/// A plain-text answer of the proxy's own.
pub fn plain(status: StatusCode, words: String) -> Response<ProxyBody> {
    let mut response = Response::new(text(words));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
