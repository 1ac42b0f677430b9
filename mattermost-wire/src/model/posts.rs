use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{FileInfo, JsonMap, SlackAttachment};

/// A post as REST and the WebSocket carry it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Post {
    pub id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub edit_at: i64,
    pub delete_at: i64,
    pub is_pinned: bool,
    pub user_id: String,
    pub channel_id: String,
    pub root_id: String,
    /// Set on history rows: the id of the post this is an earlier version of.
    pub original_id: String,
    pub message: String,
    /// Empty for an ordinary post; `system_*` for system and ephemeral posts.
    #[serde(rename = "type")]
    pub kind: String,
    pub props: JsonMap,
    pub hashtags: String,
    pub file_ids: Vec<String>,
    pub pending_post_id: String,
    pub has_reactions: bool,
    pub remote_id: String,
    pub reply_count: i64,
    pub last_reply_at: i64,
    pub participants: Option<Vec<serde_json::Value>>,
    pub metadata: PostMetadata,
}

impl Post {
    /// The message attachments in `props.attachments`, where they parse.
    pub fn attachments(&self) -> Vec<SlackAttachment> {
        self.props
            .get("attachments")
            .and_then(|a| serde_json::from_value(a.clone()).ok())
            .unwrap_or_default()
    }

    pub fn is_system(&self) -> bool {
        self.kind.starts_with("system_")
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PostMetadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<FileInfo>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reactions: Option<Vec<Reaction>>,
}

/// A page of posts: iterate `order`, look each id up in `posts`; `posts` may
/// hold more than `order` names.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PostList {
    pub order: Vec<String>,
    pub posts: BTreeMap<String, Post>,
    pub next_post_id: String,
    pub prev_post_id: String,
    pub has_next: bool,
    pub first_inaccessible_post_time: i64,
}

impl PostList {
    /// The posts in `order`.
    pub fn ordered(&self) -> impl Iterator<Item = &Post> {
        self.order.iter().filter_map(|id| self.posts.get(id))
    }
}

/// `POST /posts` body.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NewPost {
    pub channel_id: String,
    pub message: String,
    pub root_id: String,
    pub file_ids: Vec<String>,
    pub props: JsonMap,
    pub pending_post_id: String,
    #[serde(rename = "type", skip_serializing_if = "String::is_empty")]
    pub kind: String,
}

/// `PUT /posts/{id}/patch` body: absent fields are unchanged, a present
/// `props` replaces the whole map.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PostPatch {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub props: Option<JsonMap>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_ids: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_pinned: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_reactions: Option<bool>,
}

/// `POST /posts/ephemeral` body.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct EphemeralPost {
    pub user_id: String,
    pub post: NewPost,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Reaction {
    pub user_id: String,
    pub post_id: String,
    pub emoji_name: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub remote_id: String,
    pub channel_id: String,
}
