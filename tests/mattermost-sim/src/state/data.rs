//! Everything the server holds that outlives a request, persisted whole with
//! `--state FILE`. Lookups and permission checks live beside the data so
//! every route asks the same questions the same way.

use std::collections::BTreeMap;

use mattermost_wire::model::{
    Bot, Channel, ChannelMember, Command, FileInfo, Post, Reaction, Team, TeamMember, User,
};
use serde::{Deserialize, Serialize};

use super::settings::Settings;
use crate::error::ApiError;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UserRecord {
    pub user: User,
    /// Hex SHA-256 of salt and password; empty for bots, which cannot log in.
    pub password_hash: String,
    pub salt: String,
    pub bot: Option<Bot>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokenRecord {
    pub id: String,
    pub token: String,
    pub user_id: String,
    pub description: String,
    pub is_active: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredFile {
    pub info: FileInfo,
    /// The bytes, base64 in the state file.
    pub content_b64: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Data {
    pub settings: Settings,
    pub users: BTreeMap<String, UserRecord>,
    /// Login sessions: token → user id.
    pub sessions: BTreeMap<String, String>,
    /// Personal access tokens and bot tokens, by token.
    pub tokens: BTreeMap<String, TokenRecord>,
    pub teams: BTreeMap<String, Team>,
    /// By `team_id:user_id`.
    pub team_members: BTreeMap<String, TeamMember>,
    pub channels: BTreeMap<String, Channel>,
    /// By `channel_id:user_id`.
    pub channel_members: BTreeMap<String, ChannelMember>,
    /// Stored posts, integrations included, history rows among them.
    pub posts: BTreeMap<String, Post>,
    pub reactions: Vec<Reaction>,
    pub files: BTreeMap<String, StoredFile>,
    pub commands: BTreeMap<String, Command>,
}

pub fn pair(a: &str, b: &str) -> String {
    format!("{a}:{b}")
}

impl Data {
    /// The user a bearer token stands for, if the token is live and the user
    /// active.
    pub fn authenticate(&self, token: &str) -> Option<&UserRecord> {
        let user_id = self.sessions.get(token).cloned().or_else(|| {
            self.tokens
                .get(token)
                .filter(|t| t.is_active)
                .map(|t| t.user_id.clone())
        })?;
        self.users.get(&user_id).filter(|u| u.user.delete_at == 0)
    }

    pub fn user(&self, id: &str) -> Result<&UserRecord, ApiError> {
        self.users
            .get(id)
            .ok_or_else(|| ApiError::not_found("app.user.missing_account.const", "user"))
    }

    pub fn user_by_name(&self, username: &str) -> Option<&UserRecord> {
        let lower = username.to_lowercase();
        self.users.values().find(|u| u.user.username == lower)
    }

    pub fn is_admin(&self, user_id: &str) -> bool {
        self.users
            .get(user_id)
            .is_some_and(|u| u.user.has_role("system_admin"))
    }

    pub fn team(&self, id: &str) -> Result<&Team, ApiError> {
        self.teams
            .get(id)
            .filter(|t| t.delete_at == 0)
            .ok_or_else(|| ApiError::not_found("app.team.get.find.app_error", "team"))
    }

    pub fn is_team_member(&self, team_id: &str, user_id: &str) -> bool {
        self.team_members
            .get(&pair(team_id, user_id))
            .is_some_and(|m| m.delete_at == 0)
    }

    pub fn channel(&self, id: &str) -> Result<&Channel, ApiError> {
        self.channels
            .get(id)
            .ok_or_else(|| ApiError::not_found("app.channel.get.existing.app_error", "channel"))
    }

    pub fn is_member(&self, channel_id: &str, user_id: &str) -> bool {
        self.channel_members
            .contains_key(&pair(channel_id, user_id))
    }

    /// The ids of a channel's members.
    pub fn members_of(&self, channel_id: &str) -> Vec<String> {
        let prefix = format!("{channel_id}:");
        self.channel_members
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(_, m)| m.user_id.clone())
            .collect()
    }

    /// Read access as Mattermost grants it: a member reads any channel; anyone
    /// in the team reads a public one; an admin reads everything.
    pub fn can_read(&self, channel: &Channel, user_id: &str) -> bool {
        self.is_admin(user_id)
            || self.is_member(&channel.id, user_id)
            || (channel.kind == "O" && self.is_team_member(&channel.team_id, user_id))
    }

    /// Read access, or 403 for a channel that exists but may not be read.
    pub fn readable_channel(&self, channel_id: &str, user_id: &str) -> Result<&Channel, ApiError> {
        let channel = self.channel(channel_id)?;
        if self.can_read(channel, user_id) {
            Ok(channel)
        } else {
            Err(ApiError::forbidden())
        }
    }

    /// Posting is for members (and admins); an archived channel takes nothing.
    pub fn postable_channel(&self, channel_id: &str, user_id: &str) -> Result<&Channel, ApiError> {
        let channel = self.channel(channel_id)?;
        if !(self.is_member(channel_id, user_id) || self.is_admin(user_id)) {
            return Err(ApiError::forbidden());
        }
        if channel.delete_at != 0 {
            return Err(ApiError::new(
                axum::http::StatusCode::BAD_REQUEST,
                "api.post.create_post.can_not_post_to_deleted.error",
                "Can not post to deleted channel.",
            ));
        }
        Ok(channel)
    }

    pub fn post(&self, id: &str) -> Result<&Post, ApiError> {
        self.posts
            .get(id)
            .filter(|p| p.delete_at == 0)
            .ok_or_else(|| ApiError::not_found("app.post.get.app_error", "post"))
    }

    /// The username a post's author is shown by in events (`sender_name`).
    pub fn sender_name(&self, post: &Post) -> String {
        if post.is_system() {
            return "System".to_string();
        }
        self.users
            .get(&post.user_id)
            .map(|u| format!("@{}", u.user.username))
            .unwrap_or_default()
    }

    /// The display name a channel shows a given viewer: for a DM, the other
    /// participant's username.
    pub fn channel_display_name(&self, channel: &Channel, viewer: &str) -> String {
        if channel.kind == "D" {
            let other = channel
                .name
                .split("__")
                .find(|id| *id != viewer)
                .unwrap_or(viewer);
            return self
                .users
                .get(other)
                .map(|u| u.user.username.clone())
                .unwrap_or_default();
        }
        channel.display_name.clone()
    }

    /// Reactions on a post, oldest first.
    pub fn reactions_of(&self, post_id: &str) -> Vec<Reaction> {
        self.reactions
            .iter()
            .filter(|r| r.post_id == post_id)
            .cloned()
            .collect()
    }
}
