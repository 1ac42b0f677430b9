//! A snapshot of the page a session shows (§3.4 Browsing): what the model
//! reads after every action, and the refs the next action takes.

mod difference;
mod render;

use chromiumoxide::Page;
use serde::Deserialize;

pub use difference::first_difference;
pub use render::{CONTROLS_SHOWN, Extras, OPTIONS_SHOWN, PAGE_VIEW_CHARS, render};

/// The attribute a ref is kept in on its element.
pub const REF_ATTRIBUTE: &str = "data-collegium-ref";

const SCRIPT: &str = include_str!("snapshot.js");

#[derive(Debug, Clone, Deserialize)]
pub struct Snapshot {
    pub url: String,
    pub title: String,
    /// The HTTP status of the document the page settled on.
    pub status: Option<u16>,
    #[serde(rename = "contentType")]
    pub content_type: String,
    pub controls: Vec<Control>,
    /// Every ref the snapshot gave, controls and links alike.
    pub refs: Vec<String>,
    /// The visible page as markdown.
    pub page: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Control {
    #[serde(rename = "ref")]
    pub reference: String,
    pub kind: String,
    pub label: String,
    pub hidden: bool,
    pub disabled: bool,
    pub checked: Option<bool>,
    pub value: Option<String>,
    pub options: Option<Vec<Choice>>,
    pub href: Option<String>,
}

/// One option of a drop-down.
#[derive(Debug, Clone, Deserialize)]
pub struct Choice {
    pub label: String,
    pub value: String,
    pub selected: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("the page could not be read: {0}")]
    Evaluate(#[from] chromiumoxide::error::CdpError),
    #[error("the page's reading was not understood: {0}")]
    Shape(#[from] serde_json::Error),
}

/// Reads the page as it is now, giving refs to what has none yet.
pub async fn take(page: &Page) -> Result<Snapshot, SnapshotError> {
    let result = page.evaluate(SCRIPT).await?;
    Ok(result.into_value()?)
}
