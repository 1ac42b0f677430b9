//! Message attachments, interactive buttons and dialogs (contract §C).

use serde::{Deserialize, Serialize};

use super::{JsonMap, Post};

/// A Slack-style message attachment in `props.attachments`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SlackAttachment {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fallback: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub color: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub pretext: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub author_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title_link: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<AttachmentField>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub footer: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<PostAction>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AttachmentField {
    pub title: String,
    pub value: serde_json::Value,
    pub short: bool,
}

/// A button or select on an attachment. `integration` is stored by the server
/// and stripped from every copy a client sees.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PostAction {
    pub id: String,
    pub name: String,
    #[serde(rename = "type", skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub style: String,
    pub disabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integration: Option<PostActionIntegration>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<PostActionOption>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub default_option: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub data_source: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PostActionIntegration {
    pub url: String,
    pub context: JsonMap,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PostActionOption {
    pub text: String,
    pub value: String,
}

/// What the server POSTs to an action's integration URL on a click.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PostActionIntegrationRequest {
    pub user_id: String,
    pub user_name: String,
    pub channel_id: String,
    pub channel_name: String,
    pub team_id: String,
    pub team_domain: String,
    pub post_id: String,
    pub trigger_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub data_source: String,
    pub context: JsonMap,
}

/// What an integration may answer to a click.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PostActionIntegrationResponse {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update: Option<Post>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub ephemeral_text: String,
    pub skip_slack_parsing: bool,
}

/// The clicker's answer from `POST /posts/{id}/actions/{action}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PostActionResponse {
    pub status: String,
    pub trigger_id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Dialog {
    pub callback_id: String,
    pub title: String,
    pub introduction_text: String,
    pub icon_url: String,
    pub elements: Vec<DialogElement>,
    pub submit_label: String,
    pub notify_on_cancel: bool,
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DialogElement {
    pub display_name: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub subtype: String,
    pub default: String,
    pub placeholder: String,
    pub help_text: String,
    pub optional: bool,
    pub min_length: i64,
    pub max_length: i64,
    pub data_source: String,
    pub options: Vec<DialogOption>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DialogOption {
    pub text: String,
    pub value: String,
}

/// `POST /actions/dialogs/open` body.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenDialogRequest {
    pub trigger_id: String,
    pub url: String,
    pub dialog: Dialog,
}

/// `POST /actions/dialogs/submit` body, and what the server forwards to the
/// dialog's URL (with `type` = `dialog_submission`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SubmitDialogRequest {
    #[serde(rename = "type", skip_serializing_if = "String::is_empty")]
    pub kind: String,
    pub url: String,
    pub callback_id: String,
    pub state: String,
    pub user_id: String,
    pub channel_id: String,
    pub team_id: String,
    pub submission: JsonMap,
    pub cancelled: bool,
}

/// An integration's answer to a dialog submission.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SubmitDialogResponse {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub errors: std::collections::BTreeMap<String, String>,
}
