use serde::{Deserialize, Serialize};

use super::JsonMap;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Team {
    pub id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub display_name: String,
    pub name: String,
    pub description: String,
    pub email: String,
    /// `O` open, `I` invite only.
    #[serde(rename = "type")]
    pub kind: String,
    pub allow_open_invite: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TeamMember {
    pub team_id: String,
    pub user_id: String,
    pub roles: String,
    pub delete_at: i64,
    pub scheme_user: bool,
    pub scheme_admin: bool,
    pub scheme_guest: bool,
}

/// Channel types on the wire.
pub mod channel_type {
    pub const OPEN: &str = "O";
    pub const PRIVATE: &str = "P";
    pub const DIRECT: &str = "D";
    pub const GROUP: &str = "G";
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Channel {
    pub id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    /// Empty for direct and group messages.
    pub team_id: String,
    /// One of [`channel_type`].
    #[serde(rename = "type")]
    pub kind: String,
    pub display_name: String,
    pub name: String,
    pub header: String,
    pub purpose: String,
    pub last_post_at: i64,
    pub total_msg_count: i64,
    pub creator_id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ChannelMember {
    pub channel_id: String,
    pub user_id: String,
    pub roles: String,
    pub last_viewed_at: i64,
    pub msg_count: i64,
    pub mention_count: i64,
    pub notify_props: JsonMap,
    pub last_update_at: i64,
    pub scheme_user: bool,
    pub scheme_admin: bool,
    pub scheme_guest: bool,
}
