//! The server settings the simulator honours, readable and patchable in
//! Mattermost's config shape (`ServiceSettings`, `TeamSettings`,
//! `FileSettings`) and as the string-valued client config.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub site_url: String,
    /// Mattermost's default is off; a deployment must turn it on (§3.1).
    pub enable_bot_account_creation: bool,
    /// Off by default; bots may mint tokens regardless.
    pub enable_user_access_tokens: bool,
    pub enable_commands: bool,
    /// Refuse private addresses unless listed (contract §C.6).
    pub allowed_untrusted_internal_connections: String,
    pub enable_post_username_override: bool,
    pub enable_post_icon_override: bool,
    pub outgoing_integration_requests_timeout_secs: u64,
    pub post_edit_time_limit: i64,
    pub unique_emoji_reaction_limit_per_post: usize,
    pub enable_user_typing_messages: bool,
    pub max_users_per_team: usize,
    /// The simulator's default is open sign-up, so a browser can bootstrap it.
    pub enable_open_server: bool,
    pub enable_file_attachments: bool,
    pub max_file_size: i64,
    /// Unicode code points a post's message may hold.
    pub max_post_size: usize,
    /// How long a trigger id stays valid (30 s on current servers, 3 s on old).
    pub trigger_id_lifetime_ms: i64,
    /// Answer a post with no reactions with `null` rather than `[]`.
    pub empty_reactions_as_null: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            site_url: String::new(),
            enable_bot_account_creation: false,
            enable_user_access_tokens: false,
            enable_commands: true,
            allowed_untrusted_internal_connections: String::new(),
            enable_post_username_override: false,
            enable_post_icon_override: false,
            outgoing_integration_requests_timeout_secs: 30,
            post_edit_time_limit: -1,
            unique_emoji_reaction_limit_per_post: 50,
            enable_user_typing_messages: true,
            max_users_per_team: 50,
            enable_open_server: true,
            enable_file_attachments: true,
            max_file_size: 104_857_600,
            max_post_size: 16_383,
            trigger_id_lifetime_ms: 30_000,
            empty_reactions_as_null: false,
        }
    }
}

pub const SERVER_VERSION: &str = "11.7.0";

impl Settings {
    /// `GET /config`: the sections a client reads, keyed as Mattermost keys them.
    pub fn config_json(&self) -> Value {
        json!({
            "ServiceSettings": {
                "SiteURL": self.site_url,
                "EnableBotAccountCreation": self.enable_bot_account_creation,
                "EnableUserAccessTokens": self.enable_user_access_tokens,
                "EnableCommands": self.enable_commands,
                "AllowedUntrustedInternalConnections": self.allowed_untrusted_internal_connections,
                "EnablePostUsernameOverride": self.enable_post_username_override,
                "EnablePostIconOverride": self.enable_post_icon_override,
                "OutgoingIntegrationRequestsTimeout": self.outgoing_integration_requests_timeout_secs,
                "PostEditTimeLimit": self.post_edit_time_limit,
                "UniqueEmojiReactionLimitPerPost": self.unique_emoji_reaction_limit_per_post,
                "EnableUserTypingMessages": self.enable_user_typing_messages,
            },
            "TeamSettings": {
                "MaxUsersPerTeam": self.max_users_per_team,
                "EnableOpenServer": self.enable_open_server,
            },
            "FileSettings": {
                "EnableFileAttachments": self.enable_file_attachments,
                "MaxFileSize": self.max_file_size,
            },
        })
    }

    /// `PUT /config/patch`: applies whichever known keys the patch carries.
    pub fn apply_patch(&mut self, patch: &Value) -> Result<(), String> {
        let get = |section: &str, key: &str| patch.get(section).and_then(|s| s.get(key));
        let bool_of = |v: &Value, key: &str| {
            v.as_bool()
                .ok_or_else(|| format!("{key} must be a boolean"))
        };
        let int_of =
            |v: &Value, key: &str| v.as_i64().ok_or_else(|| format!("{key} must be a number"));
        if let Some(v) = get("ServiceSettings", "SiteURL") {
            self.site_url = v.as_str().ok_or("SiteURL must be a string")?.to_string();
        }
        if let Some(v) = get("ServiceSettings", "EnableBotAccountCreation") {
            self.enable_bot_account_creation = bool_of(v, "EnableBotAccountCreation")?;
        }
        if let Some(v) = get("ServiceSettings", "EnableUserAccessTokens") {
            self.enable_user_access_tokens = bool_of(v, "EnableUserAccessTokens")?;
        }
        if let Some(v) = get("ServiceSettings", "EnableCommands") {
            self.enable_commands = bool_of(v, "EnableCommands")?;
        }
        if let Some(v) = get("ServiceSettings", "AllowedUntrustedInternalConnections") {
            self.allowed_untrusted_internal_connections = v
                .as_str()
                .ok_or("AllowedUntrustedInternalConnections must be a string")?
                .to_string();
        }
        if let Some(v) = get("ServiceSettings", "EnablePostUsernameOverride") {
            self.enable_post_username_override = bool_of(v, "EnablePostUsernameOverride")?;
        }
        if let Some(v) = get("ServiceSettings", "OutgoingIntegrationRequestsTimeout") {
            self.outgoing_integration_requests_timeout_secs =
                u64::try_from(int_of(v, "OutgoingIntegrationRequestsTimeout")?).unwrap_or(30);
        }
        if let Some(v) = get("ServiceSettings", "PostEditTimeLimit") {
            self.post_edit_time_limit = int_of(v, "PostEditTimeLimit")?;
        }
        if let Some(v) = get("ServiceSettings", "UniqueEmojiReactionLimitPerPost") {
            self.unique_emoji_reaction_limit_per_post =
                usize::try_from(int_of(v, "UniqueEmojiReactionLimitPerPost")?).unwrap_or(50);
        }
        if let Some(v) = get("TeamSettings", "MaxUsersPerTeam") {
            self.max_users_per_team = usize::try_from(int_of(v, "MaxUsersPerTeam")?).unwrap_or(50);
        }
        if let Some(v) = get("TeamSettings", "EnableOpenServer") {
            self.enable_open_server = bool_of(v, "EnableOpenServer")?;
        }
        if let Some(v) = get("FileSettings", "EnableFileAttachments") {
            self.enable_file_attachments = bool_of(v, "EnableFileAttachments")?;
        }
        if let Some(v) = get("FileSettings", "MaxFileSize") {
            self.max_file_size = int_of(v, "MaxFileSize")?;
        }
        Ok(())
    }

    /// `GET /config/client?format=old`: every value a string.
    pub fn client_config(&self, signed_in: bool) -> Value {
        let s = |b: bool| if b { "true" } else { "false" };
        let mut config = json!({
            "Version": SERVER_VERSION,
            "BuildNumber": SERVER_VERSION,
            "SiteURL": self.site_url,
            "SiteName": "Mattermost (simulated)",
            "EnableOpenServer": s(self.enable_open_server),
        });
        if signed_in && let Some(map) = config.as_object_mut() {
            for (key, value) in [
                ("MaxPostSize", self.max_post_size.to_string()),
                (
                    "EnableBotAccountCreation",
                    s(self.enable_bot_account_creation).to_string(),
                ),
                (
                    "EnableUserAccessTokens",
                    s(self.enable_user_access_tokens).to_string(),
                ),
                ("EnableCommands", s(self.enable_commands).to_string()),
                ("MaxFileSize", self.max_file_size.to_string()),
                (
                    "EnableFileAttachments",
                    s(self.enable_file_attachments).to_string(),
                ),
                (
                    "EnableUserTypingMessages",
                    s(self.enable_user_typing_messages).to_string(),
                ),
                (
                    "TimeBetweenUserTypingUpdatesMilliseconds",
                    "5000".to_string(),
                ),
                (
                    "EnablePostUsernameOverride",
                    s(self.enable_post_username_override).to_string(),
                ),
                (
                    "EnablePostIconOverride",
                    s(self.enable_post_icon_override).to_string(),
                ),
            ] {
                map.insert(key.to_string(), Value::String(value));
            }
        }
        config
    }
}
