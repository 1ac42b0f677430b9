//! `conversations::read` (§3.8): one post whole by its id, under the same
//! bounds as search — posts only, in channels the agent may search from
//! here, back to each one's episode boundary, never a forgotten one. A post
//! out of reach reads exactly as one never written, so a read cannot probe
//! what search hides.

use serde_json::Value;

use crate::store::{ObservedPost, Store, StoreError};

use super::matching;
use super::render::{self, Style};
use super::{Caller, Reach, reach};

/// The longest part of a post one read returns, in characters; a longer
/// post is read on by offset, and every page says where it stands.
pub const READ_PAGE_CHARS: usize = 8_000;

/// A read as the model asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRequest {
    pub post: String,
    pub offset: usize,
}

pub fn parse(value: &Value) -> Result<ReadRequest, String> {
    let post = value
        .get("post")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default()
        .to_string();
    if post.is_empty() {
        return Err(
            "Give the id of the post to read: the one shown after \"post\" in a window line or a search hit."
                .to_string(),
        );
    }
    let offset = value
        .get("offset")
        .and_then(Value::as_u64)
        .map_or(0, |o| usize::try_from(o).unwrap_or(usize::MAX));
    Ok(ReadRequest { post, offset })
}

/// What the model reads for a post it cannot reach, the same whether the
/// post does not exist or lies outside the reach (§3.8).
pub fn not_found(id: &str) -> String {
    format!(
        "There is no post {id} to read. A post id is the one shown after \"post\" in a window line or a search hit; conversations::search finds posts by their words."
    )
}

/// The post, if it is within the caller's reach.
pub fn find(
    store: &Store,
    caller: &Caller<'_>,
    id: &str,
) -> Result<Option<(ObservedPost, Reach)>, StoreError> {
    let Some(post) = store.searchable_post(id)? else {
        return Ok(None);
    };
    let reach = reach(store, caller)?;
    let within = reach
        .channels
        .iter()
        .any(|c| c.channel.id == post.channel_id && post.created_at >= c.floor);
    Ok(within.then_some((post, reach)))
}

/// The result the model reads: the post, or the page of it the offset
/// names. A refusal (an offset past the end) is `Err`.
pub fn render(
    request: &ReadRequest,
    post: &ObservedPost,
    reach: &Reach,
    here: &str,
    style: &Style<'_>,
) -> Result<String, String> {
    let total = post.message.chars().count();
    if request.offset > 0 && request.offset >= total {
        return Err(format!(
            "Post {} has {total} characters; offset {} is past its end. Offset 0 reads it from the start.",
            post.id, request.offset
        ));
    }
    let to = (request.offset + READ_PAGE_CHARS).min(total);
    let shown = matching::chars(&post.message, request.offset, to, total);
    let channel = reach
        .channels
        .iter()
        .find(|c| c.channel.id == post.channel_id)
        .map(|c| render::channel_label(&c.channel, here))
        .unwrap_or_else(|| post.channel_id.clone());
    Ok(render::post(
        post,
        &channel,
        &shown,
        render::read_left_out(&post.id, &shown),
        style,
    ))
}
