//! `bookmark::list` (ungated, concurrent): bookmarks through the query
//! grammar (§3.14). `contains` looks in the title, the address and the note,
//! one query each, merged; `tag` is an equality; nothing past the limit is
//! dropped without saying so.

use std::collections::BTreeMap;

use collegium_sdk::{Context, NoSettings, Reply, Storage, Stored, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::record::{self, Bookmark};

/// How many a listing shows unless asked for another number.
pub const DEFAULT_LIMIT: u32 = 20;
/// The most one listing shows.
pub const MAX_LIMIT: u32 = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct List {
    /// Text the title, address or note holds, in any case.
    #[serde(default)]
    pub contains: Option<String>,
    /// The tag, exactly.
    #[serde(default)]
    pub tag: Option<String>,
    /// How many to show, 1 to 200; 20 when not given.
    #[serde(default)]
    pub limit: Option<u32>,
}

const SEARCHED: [&str; 3] = ["title", "url", "note"];

/// One query of the grammar: `contains` in `field` (when given), the tag,
/// one more than `limit` so a longer answer is known to be longer.
async fn one(
    storage: &Storage,
    field: Option<(&str, &str)>,
    tag: Option<&str>,
    limit: u32,
) -> Result<Vec<Stored<Bookmark>>, ToolError> {
    let mut query = storage.query::<Bookmark>().limit(limit + 1);
    if let Some((field, text)) = field {
        query = query.contains(field, text);
    }
    if let Some(tag) = tag {
        query = query.equals("tag", tag);
    }
    Ok(query.fetch().await?)
}

pub async fn run(cx: Context<NoSettings>, args: List) -> Result<Reply, ToolError> {
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ToolError::invalid(format!(
            "limit {limit} is outside 1 to {MAX_LIMIT}: ask for fewer, or narrow the list with `contains` or `tag`"
        )));
    }
    let contains = args
        .contains
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty());
    let tag = args.tag.as_deref().map(str::trim).filter(|t| !t.is_empty());
    let storage = cx.storage();
    let found: Vec<Stored<Bookmark>> = match contains {
        None => one(storage, None, tag, limit).await?,
        Some(text) => {
            let (a, b, c) = tokio::join!(
                one(storage, Some((SEARCHED[0], text)), tag, limit),
                one(storage, Some((SEARCHED[1], text)), tag, limit),
                one(storage, Some((SEARCHED[2], text)), tag, limit),
            );
            let mut merged = BTreeMap::new();
            for record in a?.into_iter().chain(b?).chain(c?) {
                merged.entry(record.id.clone()).or_insert(record);
            }
            merged.into_values().collect()
        }
    };
    let mut found = found;
    found.sort_by(|x, y| (x.created_at_unix_ms, &x.id).cmp(&(y.created_at_unix_ms, &y.id)));
    let more = found.len() > limit as usize;
    found.truncate(limit as usize);
    let asked = describe(contains, tag);
    if found.is_empty() {
        return Ok(Reply::text(format!("No bookmark {asked}."))
            .summary(format!("listed no bookmark {asked}")));
    }
    let mut text = format!("Bookmarks {asked}:\n");
    text.push_str(
        &found
            .iter()
            .map(record::line)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    if more {
        text.push_str(&format!(
            "\n\nThe first {limit} are shown and more match: ask with a higher limit, or narrow it with `contains` or `tag`."
        ));
    }
    Ok(Reply::text(text).summary(format!("listed {} bookmarks {asked}", found.len())))
}

fn describe(contains: Option<&str>, tag: Option<&str>) -> String {
    match (contains, tag) {
        (None, None) => "saved".into(),
        (Some(c), None) => format!("holding \"{c}\""),
        (None, Some(t)) => format!("tagged {t}"),
        (Some(c), Some(t)) => format!("tagged {t} holding \"{c}\""),
    }
}
