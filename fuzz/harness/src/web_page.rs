//! A fetched page read as the browser worker reads it (§3.4, web-page):
//! HTML to markdown with main-content extraction, and the Cloudflare email
//! decoder. Properties: what is read of a page is never more readable text
//! than the page holds; the whole page leaves nothing out; a page cut at the
//! nesting limit says how much went unread, within the page; a title is
//! bounded; an address the decoder uncloaks is the one Cloudflare's own
//! encoding (a key byte, then each byte XORed with it) would carry, and
//! every such encoding of an address with no control character decodes.

use collegium_web_page::{decode_cloudflare_email, read_html, window};
use url::Url;

use crate::split;

/// Cloudflare's cloaking of `address` under `key`, as its script reverses.
pub fn cloak(key: u8, address: &str) -> String {
    std::iter::once(key)
        .chain(address.bytes().map(|b| b ^ key))
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn run(data: &[u8]) {
    let parts = split::parts(data, 2);
    let html = split::text(parts[0]);
    let cloaked = split::text(parts[1]);

    let page = Url::parse("https://example.org/a/b.html").expect("a literal URL");
    let main = read_html(&html, &page, false);
    assert!(
        main.read_readable_chars <= main.readable_chars,
        "read more than the page holds: {main:?}"
    );
    if let Some(unread) = main.unread_past_nesting {
        assert!(unread <= html.len(), "more unread than the page's length");
    }
    if let Some(title) = &main.title {
        assert!(title.chars().count() <= 250, "an unbounded title");
    }
    let whole = read_html(&html, &page, true);
    assert_eq!(whole.left_out_chars, 0, "the whole page left something out");
    assert_eq!(whole.readable_chars, whole.read_readable_chars);
    let shown = window(&main.markdown, main.markdown.chars().count() / 2);
    assert!(shown.offset <= shown.total && shown.end <= shown.total);

    if let Some(address) = decode_cloudflare_email(&cloaked) {
        let hex = cloaked.trim().to_ascii_lowercase();
        // Like the script's parseInt, a pair may carry a sign; only an
        // all-hex cipher is compared byte for byte.
        if hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            let key = u8::from_str_radix(&hex[..2], 16).expect("hex digits");
            assert_eq!(cloak(key, &address), hex, "decoded to another address");
        }
    }
    if !cloaked.chars().any(char::is_control) && !cloaked.is_empty() {
        let key = parts[0].first().copied().unwrap_or(0x5a);
        assert_eq!(
            decode_cloudflare_email(&cloak(key, &cloaked)).as_deref(),
            Some(cloaked.as_str()),
            "a cloaked address does not decode"
        );
    }
}
