//! One message read as far as it can be (§3.13, issue 18 "bad input"): its
//! headers decoded to text, its body as readable text, its attachments by
//! name, type and size, and a sentence for each thing that could not be
//! read. Nothing here fails: a broken message is still a message, and what
//! could not be read is said, never silently dropped.

use mail_parser::decoders::charsets::map::charset_decoder;
use mail_parser::{Address, HeaderValue, MessageParser, MimeHeaders, PartType};

/// A decoded header value longer than this is cut, and the cut said: a
/// header bomb must not flood a list or an announcement.
pub const HEADER_CHARS: usize = 4096;
/// More headers than this is a header bomb; the message is read all the
/// same, and the count said.
pub const HEADER_COUNT: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub name: String,
    pub content_type: String,
    pub size: u64,
}

/// What a message says, read.
#[derive(Debug, Clone, Default)]
pub struct Read {
    pub message_id: String,
    pub from: String,
    /// The Reply-To address if any, else the From address: where a reply goes.
    pub reply_address: Option<String>,
    pub to: String,
    pub cc: String,
    pub date: String,
    pub subject: String,
    pub in_reply_to: Vec<String>,
    pub references: Vec<String>,
    pub text: String,
    pub html: Option<String>,
    pub attachments: Vec<Attachment>,
    pub problems: Vec<String>,
}

/// Reads `raw`. `complete` is false where only a prefix of the message was
/// fetched (a listing's preview): the cut end is then not a problem of the
/// message's own.
pub fn read(raw: &[u8], complete: bool) -> Read {
    let mut problems = Vec::new();
    let Some(message) = MessageParser::default().parse(raw) else {
        return Read {
            text: String::from_utf8_lossy(raw).into_owned(),
            problems: vec![
                "The message could not be parsed as mail at all; its raw text is shown as the body."
                    .into(),
            ],
            ..Read::default()
        };
    };
    let headers = message.headers().len();
    if headers > HEADER_COUNT {
        problems.push(format!(
            "The message carries {headers} header fields, past the {HEADER_COUNT} a message is read with; those the tools show were read, the rest not."
        ));
    }
    let mut field = |name: &str, value: String| cut(name, value, &mut problems);
    let from = field("From", addresses(message.from()));
    let to = field("To", addresses(message.to()));
    let cc = field("Cc", addresses(message.cc()));
    let subject = field("Subject", message.subject().unwrap_or_default().to_string());
    let date = field(
        "Date",
        message
            .header_raw("Date")
            .map(|d| d.trim().to_string())
            .unwrap_or_default(),
    );
    let message_id = field(
        "Message-ID",
        message.message_id().unwrap_or_default().to_string(),
    );
    let reply_address = message
        .reply_to()
        .and_then(|a| a.first())
        .or_else(|| message.from().and_then(|a| a.first()))
        .and_then(|a| a.address())
        .map(str::to_string);
    let in_reply_to = ids(message.in_reply_to());
    let references = ids(message.references());

    let mut text_parts = Vec::new();
    let mut html_parts = Vec::new();
    for (index, part) in message.parts.iter().enumerate() {
        if part.is_encoding_problem {
            problems.push(format!(
                "Part {} is not well-formed MIME (a missing boundary, or an encoding that does not decode); what it held is read as plain text.",
                index + 1
            ));
        }
        if let Some(charset) = part
            .content_type()
            .and_then(|t| t.attribute("charset"))
            .filter(|c| !known_charset(c))
        {
            problems.push(format!(
                "Part {} declares the charset `{charset}`, which cannot be decoded; it was read as UTF-8, with unreadable bytes replaced.",
                index + 1
            ));
        }
    }
    for &index in &message.text_body {
        if let Some(part) = message.parts.get(index as usize) {
            match &part.body {
                PartType::Text(text) => text_parts.push(text.to_string()),
                PartType::Html(html) => html_parts.push(html.to_string()),
                _ => {}
            }
        }
    }
    for &index in &message.html_body {
        if let Some(part) = message.parts.get(index as usize)
            && let PartType::Html(html) = &part.body
            && !html_parts.contains(&html.to_string())
        {
            html_parts.push(html.to_string());
        }
    }
    // A text part the parser set aside as an attachment (an unnamed one in
    // a part it could not place, as in a multipart cut short) is the only
    // body there is: it is read as the body rather than lost.
    let mut body_attachments = Vec::new();
    if text_parts.is_empty() && html_parts.is_empty() {
        for &index in &message.attachments {
            if let Some(part) = message.parts.get(index as usize)
                && part.attachment_name().is_none()
                && let PartType::Text(text) = &part.body
            {
                text_parts.push(text.to_string());
                body_attachments.push(index);
            }
        }
    }
    let html = (!html_parts.is_empty()).then(|| html_parts.join("\n"));
    let text = if text_parts.is_empty() {
        html.as_deref()
            .map(crate::html::to_text)
            .unwrap_or_default()
    } else {
        text_parts.join("\n")
    };
    let attachments = message
        .attachments
        .iter()
        .filter(|index| !body_attachments.contains(*index))
        .filter_map(|&index| message.parts.get(index as usize))
        .map(|part| Attachment {
            name: part
                .attachment_name()
                .map(str::to_string)
                .unwrap_or_else(|| "(unnamed)".into()),
            content_type: part
                .content_type()
                .map(|t| match t.subtype() {
                    Some(sub) => format!("{}/{sub}", t.ctype()),
                    None => t.ctype().to_string(),
                })
                .unwrap_or_else(|| "application/octet-stream".into()),
            size: part.len() as u64,
        })
        .collect();
    if complete {
        multipart_problems(raw, &message, &mut problems);
    }
    Read {
        message_id,
        from,
        reply_address,
        to,
        cc,
        date,
        subject,
        in_reply_to,
        references,
        text,
        html,
        attachments,
        problems,
    }
}

/// Where a multipart message declares a boundary its body never uses, or
/// ends before its closing one.
fn multipart_problems(raw: &[u8], message: &mail_parser::Message<'_>, problems: &mut Vec<String>) {
    let Some(boundary) = message
        .root_part()
        .content_type()
        .filter(|t| t.ctype().eq_ignore_ascii_case("multipart"))
        .and_then(|t| t.attribute("boundary"))
    else {
        return;
    };
    let opening = format!("--{boundary}");
    let closing = format!("--{boundary}--");
    if !contains(raw, opening.as_bytes()) {
        problems.push(format!(
            "The message says it is in parts divided by `{boundary}`, but no part is; its body is read as one text."
        ));
    } else if !contains(raw, closing.as_bytes()) {
        problems.push(
            "The message ends before its closing part boundary: its last part may be cut short."
                .into(),
        );
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn known_charset(name: &str) -> bool {
    let lower = name.trim().to_ascii_lowercase();
    matches!(lower.as_str(), "utf-8" | "utf8" | "us-ascii" | "ascii")
        || charset_decoder(lower.as_bytes()).is_some()
}

/// `value` cut to [`HEADER_CHARS`], the cut said.
fn cut(name: &str, value: String, problems: &mut Vec<String>) -> String {
    let chars = value.chars().count();
    if chars <= HEADER_CHARS {
        return value;
    }
    problems.push(format!(
        "The {name} header is {chars} characters long; its first {HEADER_CHARS} are shown."
    ));
    value.chars().take(HEADER_CHARS).collect()
}

/// Addresses as `Name <address>`, comma-separated.
pub fn addresses(address: Option<&Address<'_>>) -> String {
    let Some(address) = address else {
        return String::new();
    };
    address
        .iter()
        .map(|a| match (a.name(), a.address()) {
            (Some(name), Some(addr)) => format!("{name} <{addr}>"),
            (None, Some(addr)) => addr.to_string(),
            (Some(name), None) => name.to_string(),
            (None, None) => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

fn ids(value: &HeaderValue<'_>) -> Vec<String> {
    match value {
        HeaderValue::Text(id) => vec![id.to_string()],
        HeaderValue::TextList(list) => list.iter().map(ToString::to_string).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_13_an_unknown_charset_is_read_and_said() {
        let raw = b"From: a@x.test\r\nSubject: hi\r\nContent-Type: text/plain; charset=x-klingon\r\n\r\nqapla\r\n";
        let read = read(raw, true);
        assert!(read.text.contains("qapla"));
        assert!(
            read.problems.iter().any(|p| p.contains("x-klingon")),
            "{:?}",
            read.problems
        );
    }

    #[test]
    fn s3_13_a_multipart_without_its_parts_is_read_as_one_text() {
        let raw = b"From: a@x.test\r\nSubject: hi\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\nno parts here\r\n";
        let read = read(raw, true);
        assert!(!read.problems.is_empty());
        let cut = b"From: a@x.test\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain\r\n\r\nkept\r\n";
        let read = super::read(cut, true);
        assert!(read.text.contains("kept"), "{read:?}");
        assert!(read.attachments.is_empty(), "{read:?}");
    }

    #[test]
    fn s3_13_a_header_bomb_is_cut_and_said() {
        let subject = "x".repeat(HEADER_CHARS * 3);
        let raw = format!("From: a@x.test\r\nSubject: {subject}\r\n\r\nbody\r\n");
        let read = read(raw.as_bytes(), true);
        assert_eq!(read.subject.chars().count(), HEADER_CHARS);
        assert!(read.problems.iter().any(|p| p.contains("Subject")));
    }
}
