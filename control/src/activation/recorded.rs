//! The rule of §4.1 applied to a post as the store recorded it: the channel's
//! kind and handle decide how it triggers, the agents this daemon serves
//! among its members are who may be addressed. The lanes apply it to every
//! post that arrives; the restart sweep applies it again to what abandoned
//! turns wrote, to find the hand-offs they deferred (§7.3).

use std::collections::BTreeSet;

use super::{Activation, Author, Triggering, decide};
use crate::store::{AuthorKind, ChannelKind, Member, ObservedChannel, ObservedPost};

/// What `post` does in `channel` with `members` present; `served` says
/// which agents this daemon serves, `respond_to_all` names the channels
/// configured to answer every person's post (§3.10).
pub fn of_post(
    post: &ObservedPost,
    channel: &ObservedChannel,
    members: &[Member],
    served: &dyn Fn(&str) -> bool,
    respond_to_all: &[String],
) -> Activation {
    let triggering = match channel.kind {
        ChannelKind::Direct | ChannelKind::Group => Triggering::Direct,
        _ if respond_to_all.contains(&channel.name) => Triggering::RespondToAll,
        _ => Triggering::MentionRequired,
    };
    let present: BTreeSet<String> = members
        .iter()
        .filter(|m| m.kind == AuthorKind::Agent && served(&m.username))
        .map(|m| m.username.clone())
        .collect();
    let usernames: BTreeSet<&str> = members.iter().map(|m| m.username.as_str()).collect();
    let attachments = attachment_texts(post);
    let attachment_refs: Vec<&str> = attachments.iter().map(String::as_str).collect();
    let scan = mattermost_wire::mentions::scan_post(&post.message, &attachment_refs, &|u| {
        usernames.contains(u)
    });
    let author = match post.author_kind {
        AuthorKind::Agent => Author::Agent(post.author_name.clone()),
        AuthorKind::SystemBot => Author::SystemBot(post.author_name.clone()),
        _ => Author::Person(post.author_name.clone()),
    };
    decide(&author, triggering, &present, &scan)
}

/// The texts of a post's message attachments, which the server scans for
/// mentions as it scans the message.
fn attachment_texts(post: &ObservedPost) -> Vec<String> {
    let Some(props) = post
        .props
        .as_deref()
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
    else {
        return Vec::new();
    };
    let mut texts = Vec::new();
    for attachment in props
        .get("attachments")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
    {
        for key in ["pretext", "text"] {
            if let Some(text) = attachment.get(key).and_then(serde_json::Value::as_str) {
                texts.push(text.to_string());
            }
        }
        for field in attachment
            .get("fields")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(value) = field.get("value").and_then(serde_json::Value::as_str) {
                texts.push(value.to_string());
            }
        }
    }
    texts
}
