//! A mail call's arguments as the worker reads them (§3.13, §7.2). The
//! daemon's schema already holds each tool to its keys; the worker reads the
//! same keys and refuses anything else rather than guess. A request for an
//! attachment's content is refused by name: the tools describe attachments
//! and never return them.

use lettre::Address;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// How many entries a list or search shows when not told.
pub const DEFAULT_COUNT: u32 = 20;
/// The most a list or search shows at once.
pub const MAX_COUNT: u32 = 50;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct List {
    pub count: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Search {
    pub phrase: String,
    pub count: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OneMessage {
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Send {
    pub to: Vec<String>,
    #[serde(default)]
    pub cc: Vec<String>,
    pub subject: String,
    pub body: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    pub message: String,
    pub body: String,
    #[serde(default)]
    pub cc: Vec<String>,
}

/// Why a call's arguments were not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// A key or value the tool does not take: invalid arguments (§7.2).
    #[error("{0}")]
    Invalid(String),
    /// A request for an attachment's content: refused by what the tools
    /// are, not by a mistake in the call.
    #[error(
        "the mail tools describe attachments by name, type and size and never return their content; `{0}` asks for content, which no mail tool gives"
    )]
    AttachmentContent(String),
}

/// Keys that ask for an attachment's content.
fn asks_for_content(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.contains("attach")
        || matches!(
            key.as_str(),
            "content" | "part" | "download" | "raw" | "save"
        )
}

/// Reads `bytes` as the arguments `T`.
pub fn read<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ArgumentError> {
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ArgumentError::Invalid(format!("the arguments are not JSON: {e}")))?;
    if let Some(key) = value
        .as_object()
        .and_then(|o| o.keys().find(|k| asks_for_content(k)))
    {
        return Err(ArgumentError::AttachmentContent(key.clone()));
    }
    serde_json::from_value(value).map_err(|e| {
        ArgumentError::Invalid(format!("the arguments are not what this tool takes: {e}"))
    })
}

/// The count asked for, held to 1..=[`MAX_COUNT`].
pub fn count(asked: Option<u32>) -> Result<u32, ArgumentError> {
    match asked {
        None => Ok(DEFAULT_COUNT),
        Some(n) if (1..=MAX_COUNT).contains(&n) => Ok(n),
        Some(n) => Err(ArgumentError::Invalid(format!(
            "count: {n} is not between 1 and {MAX_COUNT}"
        ))),
    }
}

/// Every address parsed, or the first that does not parse named. A
/// recipient is a bare address (`name@example.org`): a display name or a
/// list in one string would hide who receives the mail from the person
/// approving it.
pub fn addresses(field: &str, given: &[String]) -> Result<Vec<Address>, ArgumentError> {
    given
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let trimmed = text.trim();
            trimmed.parse::<Address>().map_err(|e| {
                ArgumentError::Invalid(format!(
                    "{field}[{i}]: `{}` is not an e-mail address ({e}); give each recipient as name@domain",
                    text.chars().take(200).collect::<String>()
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_13_bcc_and_attachment_requests_are_refused() {
        let bcc =
            read::<Send>(br#"{"to":["a@x.test"],"subject":"s","body":"b","bcc":["c@x.test"]}"#);
        assert!(matches!(bcc, Err(ArgumentError::Invalid(m)) if m.contains("bcc")));
        let content = read::<OneMessage>(br#"{"message":"1.2","attachment":"a.pdf"}"#);
        assert!(matches!(content, Err(ArgumentError::AttachmentContent(k)) if k == "attachment"));
    }

    #[test]
    fn s3_13_an_address_that_does_not_parse_is_named() {
        let refused = addresses("to", &["ok@x.test".into(), "not an address".into()]);
        assert!(matches!(refused, Err(ArgumentError::Invalid(m)) if m.starts_with("to[1]")));
        assert!(addresses("cc", &["Bob <b@x.test>".into()]).is_err());
    }
}
