//! The rules of web::fetch's reading (§3.4), each against realistic HTML or text.

mod classify;
mod extent;
mod find;
mod markdown;
mod retry;
mod window;

use collegium_web_page::{Fetched, Reading, Response, Retried, classify, read_html};
use url::Url;

pub const PAGE_URL: &str = "https://coastal.example/news/2026/bridge.html";

pub fn page(name: &str) -> String {
    let path = format!("{}/tests/pages/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn url(text: &str) -> Url {
    Url::parse(text).expect("a test URL parses")
}

/// Reads HTML as a fetch of `PAGE_URL` would, main content only.
pub fn markdown_of(html: &str) -> collegium_web_page::PageText {
    read_html(html, &url(PAGE_URL), false)
}

/// One fetched response, as the HTTP client would hand it over.
pub struct Served<'a> {
    pub status: u16,
    pub content_type: Option<&'a str>,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
    pub retried: Option<Retried>,
    pub requested: &'a str,
}

impl<'a> Served<'a> {
    pub fn html(status: u16, body: &'a str) -> Self {
        Self {
            status,
            content_type: Some("text/html; charset=utf-8"),
            headers: &[],
            body: body.as_bytes(),
            retried: None,
            requested: PAGE_URL,
        }
    }

    pub fn fetch(&self, reading: &Reading) -> Fetched {
        let requested = url(self.requested);
        let final_url = url(PAGE_URL);
        let response = Response {
            requested: &requested,
            final_url: &final_url,
            status: self.status,
            content_type: self.content_type,
            headers: self.headers,
            body: self.body,
            retried: self.retried,
        };
        classify(&response, reading)
    }
}

pub fn holds_navigate(tool: &str) -> bool {
    tool == "web::navigate"
}

pub fn holds_nothing(_: &str) -> bool {
    false
}
