//! What a body is (HTML, text, PDF or something unread) and how its bytes become text.

use encoding_rs::{Encoding, UTF_8};

/// How a body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Html,
    /// Textual but not HTML: returned as served (§3.4).
    Text,
    Pdf,
    /// Anything else: not read.
    Binary,
}

/// A `Content-Type` split into its lower-case essence and its charset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentType {
    pub essence: String,
    pub charset: Option<String>,
}

impl ContentType {
    pub fn parse(header: &str) -> Option<Self> {
        let mut parts = header.split(';');
        let essence = parts.next()?.trim().to_ascii_lowercase();
        if essence.is_empty() {
            return None;
        }
        let charset = parts.find_map(|p| {
            let (name, value) = p.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| value.trim().trim_matches('"').to_owned())
        });
        Some(Self { essence, charset })
    }
}

const TEXTUAL_APPLICATION_TYPES: &[&str] = &[
    "application/json",
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/x-ndjson",
    "application/ndjson",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/csv",
    "application/sql",
    "application/graphql",
    "application/x-sh",
    "application/x-httpd-php",
    "application/rtf",
    "application/x-www-form-urlencoded",
    "application/jsonl",
    "application/x-tex",
];

pub fn kind(content_type: Option<&ContentType>, body: &[u8]) -> BodyKind {
    // A PDF is recognised by its own header whatever it is labelled: servers label PDFs
    // application/octet-stream as often as not.
    if body.starts_with(b"%PDF-") {
        return BodyKind::Pdf;
    }
    let Some(essence) = content_type.map(|c| c.essence.as_str()) else {
        return sniff(body);
    };
    match essence {
        "text/html" | "application/xhtml+xml" => BodyKind::Html,
        "application/pdf" | "application/x-pdf" => BodyKind::Pdf,
        _ if essence.starts_with("text/") => BodyKind::Text,
        _ if essence.ends_with("+json") || essence.ends_with("+xml") => BodyKind::Text,
        _ if TEXTUAL_APPLICATION_TYPES.contains(&essence) => BodyKind::Text,
        _ => BodyKind::Binary,
    }
}

/// A body served with no type: HTML where it opens as HTML, text where it is valid UTF-8
/// without control bytes, else unread.
fn sniff(body: &[u8]) -> BodyKind {
    let head = &body[..body.len().min(512)];
    let head = String::from_utf8_lossy(head)
        .trim_start_matches('\u{feff}')
        .trim_start()
        .to_ascii_lowercase();
    if ["<!doctype html", "<html", "<head", "<body"]
        .iter()
        .any(|o| head.starts_with(o))
    {
        return BodyKind::Html;
    }
    match std::str::from_utf8(body) {
        Ok(text) if !text.chars().any(|c| c.is_control() && !c.is_whitespace()) => BodyKind::Text,
        _ => BodyKind::Binary,
    }
}

/// The body as text: its byte-order mark, else its declared charset, else (for HTML) a
/// `<meta charset>` in its first kilobyte, else UTF-8. Bytes that do not decode become U+FFFD.
pub fn decode(body: &[u8], content_type: Option<&ContentType>, html: bool) -> String {
    let declared = content_type
        .and_then(|c| c.charset.as_deref())
        .and_then(|label| Encoding::for_label(label.as_bytes()));
    let meta = || html.then(|| meta_charset(body)).flatten();
    let encoding = Encoding::for_bom(body)
        .map(|(encoding, _)| encoding)
        .or(declared)
        .or_else(meta)
        .unwrap_or(UTF_8);
    let (text, _) = encoding.decode_with_bom_removal(body);
    text.into_owned()
}

/// The `charset` a page's own `<meta>` declares, as the HTML prescan finds it.
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")?;
    let label: String = head[at + "charset=".len()..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    let encoding = Encoding::for_label(label.as_bytes())?;
    // A page that says UTF-16 in an ASCII-compatible prescan is UTF-8 (HTML's prescan rule).
    Some(
        if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
            UTF_8
        } else {
            encoding
        },
    )
}
