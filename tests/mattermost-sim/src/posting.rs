//! Creating and changing posts, for every route that does (REST, slash
//! command answers, system posts, the test API). Functions here work on the
//! locked data and return what to deliver; [`deliver`] sends it once the lock
//! is released, so events reach the members a change found.

use axum::http::StatusCode;
use mattermost_wire::mentions::scan_post;
use mattermost_wire::model::{FileInfo, JsonMap, NewPost, Post, PostMetadata, WebSocketEvent};
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::hub::{self, Hub};
use crate::ids::new_id;
use crate::state::{Data, Sim};

/// Props longer than this (serialised, in code points) are refused.
const MAX_PROPS_LEN: usize = 800_000;

/// Something to send once the data lock is released.
pub enum Outbound {
    Event { to: String, event: WebSocketEvent },
    Ephemeral { to: String, post: Box<Post> },
}

/// Sends what a change produced, recording ephemeral posts for the test API.
pub fn deliver(sim: &Sim, outbound: Vec<Outbound>) {
    for item in outbound {
        match item {
            Outbound::Event { to, event } => sim.hub.to_user(&to, &event),
            Outbound::Ephemeral { to, post } => {
                let event = ephemeral_event(&to, &post);
                sim.transient()
                    .ephemeral
                    .entry(to.clone())
                    .or_default()
                    .push(*post);
                sim.hub.to_user(&to, &event);
            }
        }
    }
}

fn ephemeral_event(to: &str, post: &Post) -> WebSocketEvent {
    let mut data = JsonMap::new();
    data.insert("post".into(), Value::String(json_string(post)));
    let mut broadcast = hub::to_user(to);
    broadcast.channel_id = post.channel_id.clone();
    hub::event("ephemeral_message", data, broadcast)
}

pub fn json_string<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A copy of a post as clients see it: every action's `integration` removed
/// (contract §C.1), reactions and files in its metadata.
pub fn sanitize(data: &Data, post: &Post) -> Post {
    let mut copy = post.clone();
    // Mattermost returns no content for a deleted post (history rows
    // included): an empty message and empty metadata.
    if copy.delete_at > 0 {
        copy.message.clear();
        copy.metadata = PostMetadata::default();
        strip_integrations(&mut copy.props);
        return copy;
    }
    strip_integrations(&mut copy.props);
    let reactions = data.reactions_of(&post.id);
    let files: Vec<FileInfo> = post
        .file_ids
        .iter()
        .filter_map(|id| data.files.get(id).map(|f| f.info.clone()))
        .collect();
    copy.metadata = PostMetadata {
        files: (!files.is_empty()).then_some(files),
        reactions: (!reactions.is_empty()).then_some(reactions),
    };
    copy
}

/// Removes every action's `integration` (contract §C.1).
fn strip_integrations(props: &mut JsonMap) {
    if let Some(Value::Array(attachments)) = props.get_mut("attachments") {
        for attachment in attachments {
            if let Some(Value::Array(actions)) = attachment.get_mut("actions") {
                for action in actions {
                    if let Some(action) = action.as_object_mut() {
                        action.remove("integration");
                    }
                }
            }
        }
    }
}

/// Assigns an id to every action that has none, as the server does on save.
fn assign_action_ids(props: &mut JsonMap) {
    if let Some(Value::Array(attachments)) = props.get_mut("attachments") {
        for attachment in attachments {
            if let Some(Value::Array(actions)) = attachment.get_mut("actions") {
                for action in actions.iter_mut().filter_map(Value::as_object_mut) {
                    let missing = action
                        .get("id")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty);
                    if missing {
                        action.insert("id".into(), Value::String(new_id()));
                    }
                }
            }
        }
    }
}

fn check_length(data: &Data, message: &str, props: &JsonMap) -> ApiResult<()> {
    let limit = data.settings.max_post_size;
    if message.chars().count() > limit {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.post.is_valid.message_length.app_error",
            format!(
                "Message length is {} characters, the maximum is {limit}.",
                message.chars().count()
            ),
        ));
    }
    if json_string(props).chars().count() > MAX_PROPS_LEN {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.post.is_valid.props.app_error",
            "Invalid props.",
        ));
    }
    Ok(())
}

/// A reply's root must be a live root post (400 `root_id`) of the same
/// channel (400 `channel_root_id`, which Mattermost forces from 500 to 400).
fn check_root(data: &Data, root_id: &str, channel_id: &str) -> ApiResult<()> {
    if root_id.is_empty() {
        return Ok(());
    }
    let bad_root = || {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.post.create_post.root_id.app_error",
            "Invalid RootId parameter.",
        )
    };
    let root = data
        .posts
        .get(root_id)
        .filter(|r| r.delete_at == 0)
        .ok_or_else(bad_root)?;
    if root.channel_id != channel_id {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.post.create_post.channel_root_id.app_error",
            "Invalid ChannelId for RootId parameter.",
        ));
    }
    if !root.root_id.is_empty() {
        return Err(bad_root());
    }
    Ok(())
}

/// Validates and stores a new post by `author_id`, returning the post as its
/// author sees it (with `pending_post_id` echoed) and what to deliver.
pub fn create(
    data: &mut Data,
    hub: &Hub,
    author_id: &str,
    new: NewPost,
    now: i64,
) -> ApiResult<(Post, Vec<Outbound>)> {
    let channel = data.postable_channel(&new.channel_id, author_id)?.clone();
    let author = data.user(author_id)?.user.clone();
    // Mattermost 11 refuses every `system_*` type on create, whoever asks.
    if new.kind.starts_with("system_") {
        return Err(ApiError::invalid_param("post.type"));
    }
    check_length(data, &new.message, &new.props)?;
    check_root(data, &new.root_id, &channel.id)?;
    let mut props = new.props;
    assign_action_ids(&mut props);
    if author.is_bot {
        props.insert("from_bot".into(), Value::String("true".into()));
    }
    // Only files this author uploaded and has not attached yet are bound.
    let file_ids: Vec<String> = new
        .file_ids
        .into_iter()
        .filter(|id| {
            data.files
                .get(id)
                .is_some_and(|f| f.info.user_id == author_id && f.info.post_id.is_empty())
        })
        .collect();
    let post = Post {
        id: new_id(),
        create_at: now,
        update_at: now,
        user_id: author_id.to_string(),
        channel_id: channel.id.clone(),
        root_id: new.root_id.clone(),
        message: new.message,
        kind: new.kind,
        props,
        file_ids: file_ids.clone(),
        pending_post_id: new.pending_post_id,
        ..Post::default()
    };
    for id in &file_ids {
        if let Some(file) = data.files.get_mut(id) {
            file.info.post_id = post.id.clone();
            file.info.channel_id = channel.id.clone();
        }
    }
    let outbound = store(data, hub, post.clone(), now);
    Ok((post, outbound))
}

/// Stores a post and builds its `posted` events (one per member, each with
/// that member's own `mentions`) and the author's out-of-channel notices.
pub fn store(data: &mut Data, hub: &Hub, post: Post, now: i64) -> Vec<Outbound> {
    let Some(channel) = data.channels.get_mut(&post.channel_id) else {
        return Vec::new();
    };
    channel.last_post_at = now;
    channel.total_msg_count += 1;
    let channel = channel.clone();
    if !post.root_id.is_empty()
        && let Some(root) = data.posts.get_mut(&post.root_id)
    {
        root.reply_count += 1;
        root.last_reply_at = now;
        root.update_at = now;
    }
    // `pending_post_id` is echoed to the author and in `posted`, never stored.
    let stored = Post {
        pending_post_id: String::new(),
        ..post.clone()
    };
    data.posts.insert(post.id.clone(), stored);

    let member_ids = data.members_of(&channel.id);
    let name_of = |id: &str| {
        data.users
            .get(id)
            .map(|u| u.user.username.clone())
            .unwrap_or_default()
    };
    let member_names: Vec<String> = member_ids.iter().map(|id| name_of(id)).collect();
    let author_name = name_of(&post.user_id);
    let mut mentioned = if post.is_system() {
        Default::default()
    } else {
        let attachments = attachment_texts(&post);
        let texts: Vec<&str> = attachments.iter().map(String::as_str).collect();
        let scan = scan_post(&post.message, &texts, &|name| {
            member_names.iter().any(|m| m == name)
        });
        let online = |name: &str| {
            data.user_by_name(name)
                .is_some_and(|u| hub.connections().iter().any(|c| c.user_id == u.user.id))
        };
        let recipients = scan.recipients(&member_names, &online, &author_name);
        let notices = out_of_channel(data, &channel, &post, &scan.potential, now);
        (recipients, notices)
    };
    // In a direct message the other member is always mentioned; a webhook's
    // or command's post there mentions its nominal author too, as
    // Mattermost cannot tell who the other side is.
    if channel.kind == "D" {
        let from_webhook = post.props.get("from_webhook").and_then(Value::as_str) == Some("true");
        for name in &member_names {
            if *name != author_name || from_webhook {
                mentioned.0.insert(name.clone());
            }
        }
    }
    let (recipients, notices) = mentioned;

    let sanitized = sanitize(data, &post);
    let post_json = json_string(&sanitized);
    let has_files = !post.file_ids.is_empty();
    let has_image = post.file_ids.iter().any(|id| {
        data.files
            .get(id)
            .is_some_and(|f| f.info.mime_type.starts_with("image/"))
    });
    let sender_name = data.sender_name(&post);
    let mut outbound: Vec<Outbound> = member_ids
        .iter()
        .map(|member| {
            let mut d = JsonMap::new();
            d.insert("channel_type".into(), Value::String(channel.kind.clone()));
            d.insert("channel_name".into(), Value::String(channel.name.clone()));
            d.insert(
                "channel_display_name".into(),
                Value::String(data.channel_display_name(&channel, member)),
            );
            d.insert("sender_name".into(), Value::String(sender_name.clone()));
            d.insert("team_id".into(), Value::String(channel.team_id.clone()));
            d.insert("set_online".into(), Value::Bool(true));
            d.insert("post".into(), Value::String(post_json.clone()));
            // Each recipient's copy names at most the recipient (newer servers).
            if recipients.contains(&name_of(member)) {
                d.insert(
                    "mentions".into(),
                    Value::String(json_string(&vec![member.clone()])),
                );
            }
            if has_files {
                d.insert("otherFile".into(), Value::String("true".into()));
            }
            if has_image {
                d.insert("image".into(), Value::String("true".into()));
            }
            Outbound::Event {
                to: member.clone(),
                event: hub::event("posted", d, hub::to_channel(&channel.id)),
            }
        })
        .collect();
    outbound.extend(notices);
    outbound
}

/// Attachment text the server scans for mentions: pretext, text and field
/// values.
fn attachment_texts(post: &Post) -> Vec<String> {
    post.attachments()
        .into_iter()
        .flat_map(|a| {
            let mut texts = vec![a.pretext, a.text];
            texts.extend(
                a.fields
                    .into_iter()
                    .filter_map(|f| f.value.as_str().map(str::to_string)),
            );
            texts
        })
        .filter(|t| !t.is_empty())
        .collect()
}

/// The poster's notice that users it named are not in the channel. Bots,
/// inactive users and unknown names are left out, as the server leaves them.
fn out_of_channel(
    data: &Data,
    channel: &mattermost_wire::model::Channel,
    post: &Post,
    potential: &[String],
    now: i64,
) -> Vec<Outbound> {
    if !matches!(channel.kind.as_str(), "O" | "P") {
        return Vec::new();
    }
    let mut names: Vec<String> = potential
        .iter()
        .filter_map(|name| data.user_by_name(name))
        .filter(|u| {
            !u.user.is_bot && u.user.delete_at == 0 && !data.is_member(&channel.id, &u.user.id)
        })
        .map(|u| u.user.username.clone())
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return Vec::new();
    }
    let message = match names.as_slice() {
        [one] => format!(
            "@{one} did not get notified by this mention because they are not in the channel."
        ),
        [rest @ .., last] => format!(
            "@{} and @{last} did not get notified by this mention because they are not in the channel.",
            rest.join(", @")
        ),
        [] => return Vec::new(),
    };
    vec![Outbound::Ephemeral {
        to: post.user_id.clone(),
        post: Box::new(ephemeral_post(
            &post.user_id,
            &channel.id,
            &post.root_id,
            &message,
            now + 1,
        )),
    }]
}

/// An ephemeral post: never stored, shown to one user.
pub fn ephemeral_post(
    user_id: &str,
    channel_id: &str,
    root_id: &str,
    message: &str,
    now: i64,
) -> Post {
    Post {
        id: new_id(),
        create_at: now,
        update_at: now,
        user_id: user_id.to_string(),
        channel_id: channel_id.to_string(),
        root_id: root_id.to_string(),
        message: message.to_string(),
        kind: "system_ephemeral".to_string(),
        ..Post::default()
    }
}

/// A system post (`system_join_channel`, …) to make in a channel.
pub struct SystemPost<'a> {
    pub channel_id: &'a str,
    pub user_id: &'a str,
    pub kind: &'a str,
    pub message: String,
    pub props: JsonMap,
}

pub fn system_post(data: &mut Data, hub: &Hub, system: SystemPost<'_>, now: i64) -> Vec<Outbound> {
    let post = Post {
        id: new_id(),
        create_at: now,
        update_at: now,
        user_id: system.user_id.to_string(),
        channel_id: system.channel_id.to_string(),
        message: system.message,
        kind: system.kind.to_string(),
        props: system.props,
        ..Post::default()
    };
    store(data, hub, post, now)
}

/// Applies `change` to a stored post the way every update does: the previous
/// version kept as a history row, `update_at` bumped, `edit_at` set when the
/// message changed, and `post_edited` sent to the channel.
pub fn update(
    data: &mut Data,
    post_id: &str,
    now: i64,
    change: impl FnOnce(&mut Post) -> ApiResult<()>,
) -> ApiResult<(Post, Vec<Outbound>)> {
    let previous = data.post(post_id)?.clone();
    let mut post = previous.clone();
    change(&mut post)?;
    check_length(data, &post.message, &post.props)?;
    assign_action_ids(&mut post.props);
    // `edit_at` marks a change of what the post says: its message, files or
    // attachments; pins and other props leave it alone.
    if post.message != previous.message
        || post.file_ids != previous.file_ids
        || post.props.get("attachments") != previous.props.get("attachments")
    {
        post.edit_at = now;
    }
    post.update_at = now;
    bump_root(data, &post.root_id, now);
    let history = Post {
        id: new_id(),
        original_id: previous.id.clone(),
        delete_at: now,
        update_at: now,
        ..previous
    };
    data.posts.insert(history.id.clone(), history);
    data.posts.insert(post.id.clone(), post.clone());
    let outbound = post_event(data, "post_edited", &post);
    Ok((post, outbound))
}

/// A change to a reply shows on its root's `update_at`, so the thread
/// reappears in `since` results.
pub fn bump_root(data: &mut Data, root_id: &str, now: i64) {
    if root_id.is_empty() {
        return;
    }
    if let Some(root) = data.posts.get_mut(root_id) {
        root.update_at = now;
    }
}

/// A `post_edited` or `post_deleted` event for every member of the post's
/// channel.
pub fn post_event(data: &Data, name: &str, post: &Post) -> Vec<Outbound> {
    let post_json = json_string(&sanitize(data, post));
    data.members_of(&post.channel_id)
        .into_iter()
        .map(|member| {
            let mut d = JsonMap::new();
            d.insert("post".into(), Value::String(post_json.clone()));
            Outbound::Event {
                to: member,
                event: hub::event(name, d, hub::to_channel(&post.channel_id)),
            }
        })
        .collect()
}

/// Sends `event` (built per member) to every member of a channel.
pub fn channel_event(data: &Data, channel_id: &str, name: &str, d: JsonMap) -> Vec<Outbound> {
    data.members_of(channel_id)
        .into_iter()
        .map(|member| Outbound::Event {
            to: member,
            event: hub::event(name, d.clone(), hub::to_channel(channel_id)),
        })
        .collect()
}

pub fn json_value(value: serde_json::Value) -> JsonMap {
    match value {
        Value::Object(map) => map,
        _ => JsonMap::new(),
    }
}

pub fn jsonmap(pairs: &[(&str, &str)]) -> JsonMap {
    json_value(json!(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), Value::String((*v).to_string())))
            .collect::<serde_json::Map<_, _>>()
    ))
}
