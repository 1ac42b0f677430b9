//! Cloudflare's email obfuscation, undone as its decoding script does (§3.4): the address is
//! hex, its first byte the key every later byte is XORed with, the result UTF-8. An element
//! carrying `data-cfemail` is replaced by the address; a link to
//! `/cdn-cgi/l/email-protection#HEX` becomes a `mailto:` link. One that does not decode is
//! left as served.

use markup5ever_rcdom::Handle;

use crate::dom;

const LINK_MARKER: &str = "/cdn-cgi/l/email-protection#";

/// Decodes one cloaked address; `None` where it is not what Cloudflare's script would decode.
pub fn decode(hex: &str) -> Option<String> {
    let hex = hex.trim();
    if hex.len() < 4 || !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        })
        .collect::<Option<_>>()?;
    let (key, cipher) = bytes.split_first()?;
    let plain: Vec<u8> = cipher.iter().map(|b| b ^ key).collect();
    let address = String::from_utf8(plain).ok()?;
    // The script would show control characters too, but an address holding them is not an
    // address: it is a cipher that happened to decode, and stays as served.
    if address.chars().any(char::is_control) {
        return None;
    }
    Some(address)
}

/// Uncloaks one element: `true` where it was replaced by the address it hid.
pub(crate) fn uncloak(node: &Handle) -> bool {
    if let Some(address) = dom::with_attr(node, "data-cfemail", decode).flatten() {
        dom::replace(node, dom::text_node(&address));
        return true;
    }
    if dom::is(node, "a") {
        let address = dom::with_attr(node, "href", |href| {
            href.find(LINK_MARKER)
                .and_then(|at| decode(&href[at + LINK_MARKER.len()..]))
        });
        if let Some(address) = address.flatten() {
            dom::set_attr(node, "href", &format!("mailto:{address}"));
        }
    }
    false
}
