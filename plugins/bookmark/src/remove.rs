//! `bookmark::remove` (gated): the prompt shows the record as stored, read
//! from storage when the prompt is rendered, never as the model described it
//! (§3.14).

use collegium_sdk::{Context, Disclosure, NoSettings, Prompt, Reply, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::record;
use crate::record::Bookmark;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Remove {
    /// The bookmark's id, as `bookmark::list` shows it.
    pub id: String,
}

pub async fn render(cx: Context<NoSettings>, args: Remove) -> Result<Prompt, ToolError> {
    let id = args.id.trim();
    Ok(match cx.storage().get::<Bookmark>(id).await? {
        Some(stored) => Prompt::new(
            format!("remove the bookmark {}", stored.data.url),
            format!("Remove this bookmark?\n\n{}", record::stored(&stored)),
        ),
        None => Prompt::new(
            format!("remove the bookmark {id}"),
            format!("No bookmark has the id `{id}`: approving removes nothing."),
        ),
    })
}

pub async fn run(cx: Context<NoSettings>, args: Remove) -> Result<Reply, ToolError> {
    let id = args.id.trim();
    let storage = cx.storage();
    let Some(stored) = storage.get::<Bookmark>(id).await? else {
        return Err(ToolError::invalid(missing(&cx, id)));
    };
    if !storage.delete::<Bookmark>(id).await? {
        // Removed between the read and the delete: by another call, which
        // disclosed it.
        return Err(ToolError::invalid(missing(&cx, id)));
    }
    let body = record::stored(&stored);
    Ok(Reply::text(format!("Removed:\n{body}"))
        .summary(format!("removed the bookmark {}", stored.data.url))
        .disclose(
            Disclosure::new(format!("the bookmark {}, removed", stored.data.url), body)
                .reference(stored.id),
        ))
}

/// Names `bookmark::list` as the way on only where the agent holds it
/// (§3.4).
fn missing(cx: &Context<NoSettings>, id: &str) -> String {
    if cx.holds("bookmark::list") {
        format!("no bookmark has the id `{id}`: bookmark::list shows each bookmark's id")
    } else {
        format!("no bookmark has the id `{id}`")
    }
}
