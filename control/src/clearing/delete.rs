//! Deleting a cleared channel's posts from Mattermost (§8.5), after the
//! store is cut: every post older than the clear's notice, pinned ones
//! among them. Posts are listed first and deleted after, so a deletion
//! never shifts the pages being read. A post already gone counts as
//! deleted; every other failure is counted, for the notice to state.

use mattermost_wire::model::{Post, PostList};
use tracing::warn;

use crate::chat::rest::Rest;

/// Posts per page when listing (the server's maximum).
const PAGE: usize = 200;

/// What the deletions came to.
#[derive(Debug, Default)]
pub struct Deleted {
    pub deleted: usize,
    /// Posts older than the notice still in the channel.
    pub remaining: usize,
    /// The first error met, as the notice states it.
    pub first_error: Option<String>,
    /// The listing itself failed: `remaining` is at least this much.
    pub unlisted: bool,
}

/// Deletes every post in the channel older than `notice`, as `rest`'s
/// account.
pub async fn older_than(rest: &Rest, channel_id: &str, notice: &Post) -> Deleted {
    let mut out = Deleted::default();
    let ids = match listed(rest, channel_id, notice).await {
        Ok(ids) => ids,
        Err(error) => {
            out.unlisted = true;
            out.first_error = Some(error);
            return out;
        }
    };
    for id in ids {
        match rest
            .delete::<serde_json::Value>(&format!("posts/{id}"))
            .await
        {
            Ok(_) => out.deleted += 1,
            Err(error) if error.is_not_found() => out.deleted += 1,
            Err(error) => {
                warn!(%error, post = %id, "could not delete a cleared post");
                out.remaining += 1;
                out.first_error.get_or_insert_with(|| error.to_string());
            }
        }
    }
    out
}

/// The ids of the channel's posts older than the notice, newest first.
async fn listed(rest: &Rest, channel_id: &str, notice: &Post) -> Result<Vec<String>, String> {
    let mut ids = Vec::new();
    for page in 0.. {
        let list: PostList = rest
            .get(&format!(
                "channels/{channel_id}/posts?before={}&page={page}&per_page={PAGE}",
                notice.id
            ))
            .await
            .map_err(|error| error.to_string())?;
        let count = list.order.len();
        ids.extend(list.order.into_iter().filter(|id| {
            list.posts
                .get(id)
                .is_none_or(|p| p.create_at <= notice.create_at)
        }));
        if count < PAGE {
            break;
        }
    }
    Ok(ids)
}
