//! A message to send, built from the approved call (§3.13, §3.7): From is
//! the mailbox's own address, the recipients are exactly To and Cc (no
//! blind copies exist), a reply carries In-Reply-To and References, and a
//! mailbox with an HTML template sends the markdown body rendered into it
//! beside the plain text, raw HTML in the body escaped. The payload a person
//! approves is built from the same value the message is built from, so what
//! they read is what goes.

use lettre::Address;
use lettre::message::{Mailbox as Party, MultiPart, SinglePart};
use pulldown_cmark::{Event, Parser, html};

/// Where a template takes the rendered body.
pub const BODY_SLOT: &str = "{{body}}";

/// What a reply answers: read from the original message.
#[derive(Debug, Clone)]
pub struct Original {
    /// The original's id as the tools name it.
    pub id: String,
    pub from: String,
    pub subject: String,
    /// Where the reply goes: the Reply-To address, else From.
    pub recipient: Address,
    pub message_id: Option<String>,
    pub references: Vec<String>,
}

/// A message ready to build and to show.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub from: Address,
    pub to: Vec<Address>,
    pub cc: Vec<Address>,
    pub subject: String,
    pub body: String,
    pub replying_to: Option<Original>,
    /// The mailbox's template, where it has one.
    pub template: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ComposeError {
    #[error("the message could not be built: {0}")]
    Build(String),
}

/// `Re: ` once before a subject.
pub fn reply_subject(subject: &str) -> String {
    let trimmed = subject.trim();
    if trimmed.len() >= 3 && trimmed[..3].eq_ignore_ascii_case("re:") {
        trimmed.to_string()
    } else {
        format!("Re: {trimmed}")
    }
}

impl Outgoing {
    /// Every envelope recipient: To then Cc, each once.
    pub fn recipients(&self) -> Vec<Address> {
        let mut all: Vec<Address> = Vec::new();
        for address in self.to.iter().chain(&self.cc) {
            if !all.contains(address) {
                all.push(address.clone());
            }
        }
        all
    }

    /// What the person approving the send reads: From, every recipient,
    /// the subject and the whole body, never cut (§3.7).
    pub fn payload(&self) -> String {
        let list = |addresses: &[Address]| {
            addresses
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = format!("From: {}\nTo: {}\n", self.from, list(&self.to));
        if !self.cc.is_empty() {
            text.push_str(&format!("Cc: {}\n", list(&self.cc)));
        }
        text.push_str(&format!("Subject: {}\n", self.subject));
        if let Some(original) = &self.replying_to {
            text.push_str(&format!(
                "In reply to: message {} from {}, \"{}\"\n",
                original.id, original.from, original.subject
            ));
        }
        text.push_str(if self.template.is_some() {
            "Sent as: plain text, and HTML from the mailbox's template\n"
        } else {
            "Sent as: plain text\n"
        });
        text.push('\n');
        text.push_str(&self.body);
        text
    }

    /// The RFC 5322 message.
    pub fn build(&self) -> Result<Vec<u8>, ComposeError> {
        let mut builder = lettre::Message::builder()
            .from(Party::new(None, self.from.clone()))
            .subject(self.subject.clone())
            .message_id(Some(new_message_id(self.from.domain())))
            .date_now();
        for to in &self.to {
            builder = builder.to(Party::new(None, to.clone()));
        }
        for cc in &self.cc {
            builder = builder.cc(Party::new(None, cc.clone()));
        }
        if let Some(original) = &self.replying_to
            && let Some(id) = &original.message_id
        {
            let mut references: Vec<String> = original
                .references
                .iter()
                .map(|r| format!("<{r}>"))
                .collect();
            references.push(format!("<{id}>"));
            builder = builder
                .in_reply_to(format!("<{id}>"))
                .references(references.join(" "));
        }
        let message = match &self.template {
            Some(template) => builder.multipart(MultiPart::alternative_plain_html(
                self.body.clone(),
                template.replace(BODY_SLOT, &markdown(&self.body)),
            )),
            None => builder.singlepart(SinglePart::plain(self.body.clone())),
        }
        .map_err(|e| ComposeError::Build(e.to_string()))?;
        Ok(message.formatted())
    }
}

/// The markdown body as HTML, any raw HTML in it shown as text: the agent
/// writes the body, and markup it wrote must not become markup the
/// recipient's client runs.
pub fn markdown(body: &str) -> String {
    let events = Parser::new(body).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

/// A fresh Message-ID under the mailbox's own domain, so nothing of the
/// worker's host is named in mail it sends.
fn new_message_id(domain: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut parts = [0u64; 2];
    for (i, part) in parts.iter_mut().enumerate() {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(i);
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        *part = hasher.finish();
    }
    format!("<{:016x}{:016x}@{domain}>", parts[0], parts[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_13_raw_html_in_a_markdown_body_is_escaped() {
        let html = markdown("**hi** <script>alert(1)</script>\n\n<b>x</b>");
        assert!(html.contains("<strong>hi</strong>"));
        assert!(html.contains("&lt;script&gt;"));
        assert!(!html.contains("<script>"));
        assert!(!html.contains("<b>"));
    }

    #[test]
    fn s3_13_re_is_added_once() {
        assert_eq!(reply_subject("Hello"), "Re: Hello");
        assert_eq!(reply_subject("RE: Hello"), "RE: Hello");
    }
}
