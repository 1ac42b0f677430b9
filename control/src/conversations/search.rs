//! `conversations::search` (§3.8): a case-insensitive substring over post
//! text, optionally bounded by author and date, in the channels the agent
//! may search from here, newest first. The trigram index serves a phrase of
//! three characters or more; a shorter one is a scan of the same reach.

use chrono::{NaiveDate, TimeZone};
use serde_json::Value;

use crate::store::{Millis, ObservedPost, PostQuery, Store, StoreError};

use super::matching::{self, around};
use super::render::{self, Style};
use super::{Caller, Reach, reach};

/// The longest phrase searched, in characters: a post is at most the
/// substrate's post limit, and a phrase is a part of one worth finding.
pub const PHRASE_CAP_CHARS: usize = 500;

/// The shortest phrase the trigram index serves.
pub const INDEX_MIN_CHARS: usize = 3;

/// Below this many matches in the whole index, the index's matches are
/// collected and sorted by time; at or above it the phrase is common, and a
/// newest-first walk of the reach meets enough hits sooner.
pub const SELECTIVE_MATCHES: u32 = 2_000;

/// Characters shown either side of a match.
pub const HIT_CONTEXT_CHARS: usize = 150;

/// Hits returned when the deployment sets no `max_hits`.
pub const DEFAULT_MAX_HITS: u32 = 20;

/// A search as the model asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    pub phrase: String,
    pub author: Option<String>,
    /// (as written, from): posts written at or after it.
    pub after: Option<(String, Millis)>,
    /// (as written, until): posts written before it.
    pub before: Option<(String, Millis)>,
}

/// Reads the call's arguments; a refusal is the text the model reads.
pub fn parse(value: &Value, timezone: chrono_tz::Tz) -> Result<SearchRequest, String> {
    let phrase = value
        .get("phrase")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let length = phrase.chars().count();
    if phrase.is_empty() {
        return Err(
            "Give the phrase to search for: search finds posts whose text contains it.".to_string(),
        );
    }
    if length > PHRASE_CAP_CHARS {
        return Err(format!(
            "The phrase is {length} characters; search takes at most {PHRASE_CAP_CHARS}. Search for a shorter, distinctive part of it."
        ));
    }
    let author = value
        .get("author")
        .and_then(Value::as_str)
        .map(|a| a.trim().trim_start_matches('@').to_string())
        .filter(|a| !a.is_empty());
    let after = time_bound(value, "after", timezone)?;
    let before = time_bound(value, "before", timezone)?;
    if let (Some((a, from)), Some((b, until))) = (&after, &before)
        && from >= until
    {
        return Err(format!(
            "after ({a}) is not earlier than before ({b}), so no post could match. Give an earlier after or a later before."
        ));
    }
    Ok(SearchRequest {
        phrase,
        author,
        after,
        before,
    })
}

/// A date (the start of that day in the operator's timezone) or an RFC 3339
/// time.
fn time_bound(
    value: &Value,
    key: &str,
    timezone: chrono_tz::Tz,
) -> Result<Option<(String, Millis)>, String> {
    let Some(text) = value.get(key).and_then(Value::as_str).map(str::trim) else {
        return Ok(None);
    };
    if text.is_empty() {
        return Ok(None);
    }
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(Some((text.to_string(), time.timestamp_millis())));
    }
    let day = NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| {
        format!(
            "{key} `{text}` is not a date or a time. Write a date as 2026-03-14 (the operator's timezone) or a time as 2026-03-14T09:30:00Z."
        )
    })?;
    let midnight = day
        .and_hms_opt(0, 0, 0)
        .map(|t| timezone.from_local_datetime(&t));
    match midnight.and_then(|t| t.earliest()) {
        Some(time) => Ok(Some((text.to_string(), time.timestamp_millis()))),
        None => Err(format!(
            "{key} `{text}` has no midnight in the operator's timezone. Give a time instead, such as {text}T01:00:00Z."
        )),
    }
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct Found {
    pub hits: Vec<ObservedPost>,
    /// More posts match than are returned.
    pub more: bool,
    pub reach: Reach,
}

/// Runs a search on the store thread.
pub fn find(
    store: &Store,
    caller: &Caller<'_>,
    request: &SearchRequest,
    max_hits: u32,
    display_names: &std::collections::BTreeMap<String, String>,
) -> Result<Found, StoreError> {
    let reach = reach(store, caller)?;
    let channels: Vec<(String, Millis)> = reach
        .channels
        .iter()
        .map(|c| (c.channel.id.clone(), c.floor))
        .collect();
    let exclude: Vec<String> = store
        .answers(caller.turn_id)?
        .into_iter()
        .map(|(post, _)| post)
        .collect();
    let authors = request
        .author
        .as_deref()
        .map(|a| authors_named(a, display_names))
        .unwrap_or_default();
    let query = PostQuery {
        reach: &channels,
        phrase: &request.phrase,
        authors: &authors,
        after: request.after.as_ref().map(|a| a.1),
        before: request.before.as_ref().map(|b| b.1),
        exclude: &exclude,
        limit: max_hits.saturating_add(1),
    };
    let folded = matching::fold(&request.phrase);
    let matches = |post: &ObservedPost| matching::find(&post.message, &folded).is_some();
    let indexed = request.phrase.chars().count() >= INDEX_MIN_CHARS
        && store.index_matches(&request.phrase, SELECTIVE_MATCHES)? < SELECTIVE_MATCHES;
    let (mut hits, more) = if indexed {
        let candidates = store.search_indexed(&query)?;
        let more = candidates.len() > max_hits as usize;
        (candidates.into_iter().filter(matches).collect(), more)
    } else {
        let like = request
            .phrase
            .is_ascii()
            .then(|| format!("%{}%", escape_like(&request.phrase)));
        let hits = store.scan_posts(&query, like.as_deref(), matches)?;
        let more = hits.len() > max_hits as usize;
        (hits, more)
    };
    hits.truncate(max_hits as usize);
    Ok(Found { hits, more, reach })
}

/// The usernames an author filter names: as given, and the agent whose
/// display name it is, since the window names an agent by that (§3.8).
fn authors_named(
    author: &str,
    display_names: &std::collections::BTreeMap<String, String>,
) -> Vec<String> {
    let mut names = vec![author.to_string()];
    names.extend(
        display_names
            .iter()
            .filter(|(_, display)| display.eq_ignore_ascii_case(author))
            .map(|(username, _)| username.clone()),
    );
    names
}

/// LIKE is ASCII-case-insensitive, so it narrows an ASCII phrase's scan;
/// the match itself is decided in [`matching`].
fn escape_like(phrase: &str) -> String {
    let mut out = String::with_capacity(phrase.len());
    for c in phrase.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The result the model reads.
pub fn render(request: &SearchRequest, found: &Found, here: &str, style: &Style<'_>) -> String {
    let filters = filters(request);
    let scope = scope_line(&found.reach);
    if found.hits.is_empty() {
        return format!("No post matches \"{}\"{filters}.\n{scope}", request.phrase);
    }
    let count = found.hits.len();
    let mut out = format!(
        "{count} post{} match \"{}\"{filters}, newest first.",
        if count == 1 { "" } else { "s" },
        request.phrase
    );
    if found.more {
        out.push_str(&format!(
            " More posts match than the {count} shown: narrow the search with author, after or before, or a longer phrase."
        ));
    }
    out.push('\n');
    out.push_str(&scope);
    let folded = matching::fold(&request.phrase);
    for post in &found.hits {
        let span = matching::find(&post.message, &folded).unwrap_or((0, 0));
        let shown = around(&post.message, span, HIT_CONTEXT_CHARS);
        let channel = found
            .reach
            .channels
            .iter()
            .find(|c| c.channel.id == post.channel_id)
            .map(|c| render::channel_label(&c.channel, here))
            .unwrap_or_else(|| post.channel_id.clone());
        out.push_str("\n\n");
        out.push_str(&render::post(
            post,
            &channel,
            &shown,
            render::hit_left_out(&post.id, &shown),
            style,
        ));
    }
    out
}

fn filters(request: &SearchRequest) -> String {
    let mut out = String::new();
    if let Some(author) = &request.author {
        out.push_str(&format!(" by {author}"));
    }
    if let Some((after, _)) = &request.after {
        out.push_str(&format!(" written at or after {after}"));
    }
    if let Some((before, _)) = &request.before {
        out.push_str(&format!(" written before {before}"));
    }
    out
}

/// What was searched, so a bound the model cannot see is not one it
/// searches around (§3.8).
fn scope_line(reach: &Reach) -> String {
    let audience = if reach.here_public {
        "from a public channel, public channels only"
    } else {
        "public channels, and private ones whose members include everyone here"
    };
    format!(
        "Searched: posts in {} channel{} you are in ({audience}), each back to your latest episode boundary there. Search returns posts only — never a trace, stored reasoning, a status post, an approval prompt or a notice — and never the posts this turn answers, which you have already.",
        reach.channels.len(),
        if reach.channels.len() == 1 { "" } else { "s" },
    )
}

/// The line a later turn reads in place of the result (§3.8).
pub fn replay_line(request: &SearchRequest, hits: usize) -> String {
    let phrase: String = request.phrase.chars().take(80).collect();
    let cut = if request.phrase.chars().count() > 80 {
        "…"
    } else {
        ""
    };
    format!("[searched posts for \"{phrase}{cut}\": {hits} hits]")
}
