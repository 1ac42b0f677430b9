//! A stored bookmark and how a person reads one (§3.14: the prompt shows
//! the record as stored). Every field is a top-level scalar, so each can be
//! queried by the one grammar; an absent note or tag is an empty string.

use collegium_sdk::{Collection, Stored};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One saved link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bookmark {
    /// The address, `http://` or `https://`.
    pub url: String,
    pub title: String,
    /// Why it was saved; empty when none was given.
    #[serde(default)]
    pub note: String,
    /// One lowercase tag; empty when none was given.
    #[serde(default)]
    pub tag: String,
    /// The agent that saved it.
    pub saved_by: String,
    /// The channel it was saved from; empty in a direct or group message.
    #[serde(default)]
    pub channel: String,
}

impl Collection for Bookmark {
    const NAME: &'static str = "bookmarks";
}

fn or_none(text: &str) -> &str {
    if text.is_empty() { "(none)" } else { text }
}

/// The fields a person approves, each on its own line, exactly as they will
/// be stored.
pub fn fields(url: &str, title: &str, note: &str, tag: &str) -> String {
    format!(
        "url:   {url}\ntitle: {title}\nnote:  {}\ntag:   {}",
        or_none(note),
        or_none(tag)
    )
}

/// A stored bookmark as a person reads it: its id, its fields, who saved
/// it and where.
pub fn stored(record: &Stored<Bookmark>) -> String {
    let b = &record.data;
    let place = if b.channel.is_empty() {
        "in a direct message".to_string()
    } else {
        format!("in ~{}", b.channel)
    };
    format!(
        "id:    {}\n{}\nsaved by @{} {place}",
        record.id,
        fields(&b.url, &b.title, &b.note, &b.tag),
        b.saved_by
    )
}

/// One line of a listing.
pub fn line(record: &Stored<Bookmark>) -> String {
    let b = &record.data;
    let mut line = format!("- {} · {} · {}", record.id, b.title, b.url);
    if !b.tag.is_empty() {
        line.push_str(&format!(" [{}]", b.tag));
    }
    if !b.note.is_empty() {
        line.push_str(&format!(" — {}", b.note));
    }
    line
}
