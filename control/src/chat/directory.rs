//! Who is who in Mattermost, as the store records authors (§3.8): the
//! agents' and the system bot's accounts are known from the credentials;
//! anyone else is looked up once and remembered for the process's life. The
//! lookups happen where events arrive, never on a turn's path (§8.2).

use std::collections::HashMap;
use std::sync::Mutex;

use mattermost_wire::model::{Post, User};

use super::{Rest, RestError};
use crate::store::{
    AuthorKind, ChannelKind, Member, Millis, ObservedPost, ObservedVia, PostFile, PostRole,
};

/// The props key a framework post carries its role under, so a post the
/// socket delivers before its REST answer returns is still recorded as what
/// it is (§4.5, §8.2).
pub const ROLE_PROP: &str = "collegium_role";
/// The props key naming the turn that wrote a framework post.
pub const TURN_PROP: &str = "collegium_turn";
/// The props key naming the decision an approval prompt or a question asks
/// for, so a prompt a crash left unrecorded is still found and invalidated
/// at the next boot (§7.3).
pub const DECISION_PROP: &str = "collegium_decision";
/// The props key naming the trigger an announcement posts, for the same
/// reason (§4.2, §7.3).
pub const TRIGGER_PROP: &str = "collegium_trigger";

/// A post the framework writes: its role, and the turn that wrote it where
/// one did, ride in its props (§8.2).
pub fn framework_post(
    channel_id: impl Into<String>,
    message: impl Into<String>,
    role: &str,
    turn: Option<&str>,
) -> mattermost_wire::model::NewPost {
    let mut props = serde_json::Map::new();
    props.insert(ROLE_PROP.into(), role.into());
    if let Some(turn) = turn {
        props.insert(TURN_PROP.into(), turn.into());
    }
    mattermost_wire::model::NewPost {
        channel_id: channel_id.into(),
        message: message.into(),
        props,
        ..mattermost_wire::model::NewPost::default()
    }
}

/// An account's name and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    pub username: String,
    pub kind: AuthorKind,
}

pub struct Directory {
    rest: Rest,
    known: Mutex<HashMap<String, Known>>,
}

impl Directory {
    /// `rest` reads users (the system bot's session); `accounts` are the
    /// agents' and the system bot's (user id, username, kind).
    pub fn new(rest: Rest, accounts: impl IntoIterator<Item = (String, Known)>) -> Self {
        Self {
            rest,
            known: Mutex::new(accounts.into_iter().collect()),
        }
    }

    fn cached(&self, user_id: &str) -> Option<Known> {
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(user_id)
            .cloned()
    }

    /// Who `user_id` is; a person or another bot, looked up once.
    pub async fn who(&self, user_id: &str) -> Result<Known, RestError> {
        if let Some(known) = self.cached(user_id) {
            return Ok(known);
        }
        let user: User = self.rest.get(&format!("users/{user_id}")).await?;
        let known = Known {
            username: user.username.clone(),
            kind: if user.is_bot {
                AuthorKind::OtherBot
            } else {
                AuthorKind::Person
            },
        };
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(user_id.to_string(), known.clone());
        Ok(known)
    }

    /// A channel member as the store keeps it.
    pub async fn member(&self, user_id: &str) -> Result<Member, RestError> {
        let known = self.who(user_id).await?;
        Ok(Member {
            user_id: user_id.to_string(),
            username: known.username,
            kind: known.kind,
        })
    }

    /// A post as the store records it.
    pub async fn observe(
        &self,
        post: &Post,
        via: ObservedVia,
        now: Millis,
    ) -> Result<ObservedPost, RestError> {
        let author = self.who(&post.user_id).await?;
        Ok(observed(post, author, via, now))
    }
}

/// A post as the store records it, its author known: the post's own
/// author's answer to `create_post` is recorded without a lookup (§5.2).
pub fn observed(post: &Post, author: Known, via: ObservedVia, now: Millis) -> ObservedPost {
    // Anyone can set props on a post they write; only the framework's
    // own accounts write framework posts. A role or turn taken from
    // anyone else's would let a person's post pass for a turn's reply,
    // prompt or status post, which the restart sweep acts on (§7.3).
    let framework = matches!(author.kind, AuthorKind::Agent | AuthorKind::SystemBot);
    let prop = |key: &str| {
        post.props
            .get(key)
            .and_then(serde_json::Value::as_str)
            .filter(|_| framework)
    };
    let role = prop(ROLE_PROP)
        .and_then(role_named)
        .unwrap_or(PostRole::Post);
    let turn_id = prop(TURN_PROP).map(str::to_string);
    let files = post
        .metadata
        .files
        .iter()
        .flatten()
        .map(|f| PostFile {
            file_id: f.id.clone(),
            name: f.name.clone(),
            mime_type: f.mime_type.clone(),
            size: f.size,
        })
        .collect();
    ObservedPost {
        id: post.id.clone(),
        channel_id: post.channel_id.clone(),
        author_id: post.user_id.clone(),
        author_name: author.username,
        author_kind: author.kind,
        created_at: post.create_at,
        message: post.message.clone(),
        props: (!post.props.is_empty())
            .then(|| serde_json::Value::Object(post.props.clone()).to_string()),
        role,
        turn_id,
        pinned: post.is_pinned,
        observed_at: now,
        observed_via: via,
        files,
    }
}

fn role_named(name: &str) -> Option<PostRole> {
    [
        PostRole::Reply,
        PostRole::UnitPost,
        PostRole::Notice,
        PostRole::Prompt,
        PostRole::Status,
    ]
    .into_iter()
    .find(|role| role.as_str() == name)
}

/// Mattermost's channel type letter as the store names it.
pub fn channel_kind(letter: &str) -> ChannelKind {
    match letter {
        "D" => ChannelKind::Direct,
        "G" => ChannelKind::Group,
        "P" => ChannelKind::Private,
        _ => ChannelKind::Open,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory() -> Directory {
        let known = |username: &str, kind| Known {
            username: username.into(),
            kind,
        };
        Directory::new(
            // Every author below is known, so nothing is looked up.
            Rest::new("http://127.0.0.1:9").expect("client"),
            [
                ("u-mira".to_string(), known("mira", AuthorKind::Agent)),
                ("u-ana".to_string(), known("ana", AuthorKind::Person)),
                ("u-ci".to_string(), known("ci", AuthorKind::OtherBot)),
            ],
        )
    }

    fn post_by(user_id: &str) -> Post {
        let mut post = Post {
            id: "p1".into(),
            channel_id: "c1".into(),
            user_id: user_id.into(),
            message: "Approve?".into(),
            ..Post::default()
        };
        post.props.insert(ROLE_PROP.into(), "prompt".into());
        post.props.insert(TURN_PROP.into(), "t1".into());
        post
    }

    #[tokio::test]
    async fn s7_3_a_framework_post_is_recorded_with_its_role_and_turn() {
        let observed = directory()
            .observe(&post_by("u-mira"), ObservedVia::Live, 1)
            .await
            .expect("observed");
        assert_eq!(observed.role, PostRole::Prompt);
        assert_eq!(observed.turn_id.as_deref(), Some("t1"));
    }

    /// A person or another bot can set any props on its post; it never
    /// passes for a turn's prompt, reply or status post.
    #[tokio::test]
    async fn s7_3_a_forged_role_or_turn_on_anyone_elses_post_is_ignored() {
        for author in ["u-ana", "u-ci"] {
            let observed = directory()
                .observe(&post_by(author), ObservedVia::Live, 1)
                .await
                .expect("observed");
            assert_eq!(observed.role, PostRole::Post, "{author}");
            assert_eq!(observed.turn_id, None, "{author}");
            assert!(
                observed.props.as_deref().is_some_and(|p| p.contains("t1")),
                "the props themselves are kept as written"
            );
        }
    }
}
