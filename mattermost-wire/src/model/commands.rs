//! Custom slash commands (contract §A.9, §D).

use serde::{Deserialize, Serialize};

use super::withheld::Withheld;
use super::{JsonMap, SlackAttachment};

/// Its `Debug` withholds `token` (`withheld.rs`).
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
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

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Command")
            .field("id", &self.id)
            .field("token", &Withheld(&self.token))
            .field("create_at", &self.create_at)
            .field("update_at", &self.update_at)
            .field("delete_at", &self.delete_at)
            .field("creator_id", &self.creator_id)
            .field("team_id", &self.team_id)
            .field("trigger", &self.trigger)
            .field("method", &self.method)
            .field("username", &self.username)
            .field("icon_url", &self.icon_url)
            .field("auto_complete", &self.auto_complete)
            .field("auto_complete_desc", &self.auto_complete_desc)
            .field("auto_complete_hint", &self.auto_complete_hint)
            .field("display_name", &self.display_name)
            .field("description", &self.description)
            .field("url", &self.url)
            .field("plugin_id", &self.plugin_id)
            .finish()
    }
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
