//! The one body type the proxy answers with: a forwarded stream or a
//! text of its own.

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};

/// Every response body the proxy sends.
pub type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// A body the proxy writes itself.
pub fn text(text: String) -> ProxyBody {
    Full::new(Bytes::from(text))
        .map_err(|never| match never {})
        .boxed()
}

/// An empty body (a tunnel's 200).
pub fn empty() -> ProxyBody {
    text(String::new())
}
