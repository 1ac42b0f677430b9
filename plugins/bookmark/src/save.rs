//! `bookmark::save` (gated): the prompt shows the exact fields, and when the
//! address is already saved, the stored record the save replaces (§3.14).

use collegium_sdk::{Context, Disclosure, NoSettings, Prompt, Reply, Storage, Stored, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::record::{self, Bookmark};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Save {
    /// The address to save, `http://` or `https://`.
    pub url: String,
    /// What the page is, as a person would search for it.
    pub title: String,
    /// Why it is saved and for whom.
    #[serde(default)]
    pub note: Option<String>,
    /// One lowercase tag.
    #[serde(default)]
    pub tag: Option<String>,
}

impl Save {
    fn note(&self) -> &str {
        self.note.as_deref().unwrap_or_default().trim()
    }

    fn tag(&self) -> &str {
        self.tag.as_deref().unwrap_or_default().trim()
    }

    fn fields(&self) -> String {
        record::fields(self.url.trim(), self.title.trim(), self.note(), self.tag())
    }

    /// What the tool refuses, in words that say what to do instead.
    fn check(&self) -> Result<(), ToolError> {
        let url = self.url.trim();
        if !(url.starts_with("https://") || url.starts_with("http://"))
            || url.contains(char::is_whitespace)
        {
            return Err(ToolError::invalid(format!(
                "`{url}` is not an http:// or https:// address: give the page's full address"
            )));
        }
        if self.title.trim().is_empty() {
            return Err(ToolError::invalid(
                "the title is empty: give what the page is, as a person would search for it",
            ));
        }
        let tag = self.tag();
        if tag.chars().any(|c| c.is_whitespace() || c.is_uppercase()) {
            return Err(ToolError::invalid(format!(
                "the tag `{tag}` is not one lowercase word: join words with `-`"
            )));
        }
        Ok(())
    }
}

/// The bookmark already saved for `url`, if any.
async fn saved(storage: &Storage, url: &str) -> Result<Option<Stored<Bookmark>>, ToolError> {
    let mut found = storage
        .query::<Bookmark>()
        .equals("url", url)
        .limit(1)
        .fetch()
        .await?;
    Ok(found.pop())
}

pub async fn render(cx: Context<NoSettings>, args: Save) -> Result<Prompt, ToolError> {
    let url = args.url.trim();
    let mut payload = format!("Save this bookmark?\n\n{}", args.fields());
    if let Some(earlier) = saved(cx.storage(), url).await? {
        payload.push_str(&format!(
            "\n\nThis address is already saved; approving replaces that bookmark:\n\n{}",
            record::stored(&earlier)
        ));
    }
    Ok(Prompt::new(format!("save the bookmark {url}"), payload))
}

pub async fn run(cx: Context<NoSettings>, args: Save) -> Result<Reply, ToolError> {
    args.check()?;
    let url = args.url.trim();
    let bookmark = Bookmark {
        url: url.to_string(),
        title: args.title.trim().to_string(),
        note: args.note().to_string(),
        tag: args.tag().to_string(),
        saved_by: cx.agent().to_string(),
        channel: cx.channel().unwrap_or_default().to_string(),
    };
    let storage = cx.storage();
    let (stored, replaced) = match saved(storage, url).await? {
        // One bookmark per address: a second save replaces the first, as
        // the approver was shown.
        Some(earlier) => {
            let patch = json!({
                "title": bookmark.title,
                "note": bookmark.note,
                "tag": bookmark.tag,
                "saved_by": bookmark.saved_by,
                "channel": bookmark.channel,
            });
            let stored = storage.patch::<Bookmark>(&earlier.id, patch).await?;
            (stored, Some(earlier))
        }
        None => (storage.create(&bookmark).await?, None),
    };
    let body = record::stored(&stored);
    let mut disclosure =
        Disclosure::new(format!("the bookmark {url}"), body.clone()).reference(stored.id.clone());
    let text = match &replaced {
        Some(earlier) => {
            disclosure = disclosure.superseding(format!(
                "the bookmark {url} titled \"{}\"",
                earlier.data.title
            ));
            format!("Saved, replacing the earlier bookmark for this address:\n{body}")
        }
        None => format!("Saved:\n{body}"),
    };
    Ok(Reply::text(text)
        .summary(format!("saved the bookmark {url}"))
        .disclose(disclosure))
}
