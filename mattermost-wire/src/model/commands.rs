//! Custom slash commands (contract §A.9, §D).

use serde::{Deserialize, Serialize};

use super::{JsonMap, SlackAttachment};

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Command {
    pub id: String,
    pub token: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub creator_id: String,
    pub team_id: String,
    pub trigger: String,
    /// `P` (POST) or `G` (GET).
    pub method: String,
    pub username: String,
    pub icon_url: String,
    pub auto_complete: bool,
    pub auto_complete_desc: String,
    pub auto_complete_hint: String,
    pub display_name: String,
    pub description: String,
    pub url: String,
    pub plugin_id: String,
}

/// `POST /commands/execute` body.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ExecuteCommand {
    pub command: String,
    pub channel_id: String,
    pub team_id: String,
    pub root_id: String,
}

/// What an integration answers to a command.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandResponse {
    /// `ephemeral` (the default when empty) or `in_channel`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub response_type: String,
    pub text: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub username: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub channel_id: String,
    #[serde(rename = "type", skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub props: JsonMap,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<SlackAttachment>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub goto_location: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub trigger_id: String,
    pub skip_slack_parsing: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_responses: Vec<CommandResponse>,
}
