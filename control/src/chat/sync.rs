//! Catching up with Mattermost (§8.2): at boot and whenever a socket may
//! have missed events, each bot reads, with its own token, the channels it
//! is in, their membership, the posts since the last one recorded, and the
//! pins afresh. Never a privileged token: a bot's token reads only what the
//! agent may read, so nothing is imported from a channel it is not in.

use mattermost_wire::model::{Channel, Post, PostList};

use super::directory::{Directory, channel_kind};
use super::{Rest, RestError};
use crate::store::{
    ChannelKind, Member, Millis, ObservedChannel, ObservedPost, ObservedVia, StoreError,
    StoreHandle,
};

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Rest(#[from] RestError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A bot as the catch-up reads with it.
pub struct Reader<'a> {
    pub username: &'a str,
    pub user_id: &'a str,
    pub team_id: &'a str,
    /// The bot's own session.
    pub rest: &'a Rest,
}

/// What one catch-up recorded.
#[derive(Debug, Default)]
pub struct CaughtUp {
    /// The channels the bot is in.
    pub channels: Vec<String>,
    /// Posts recorded for the first time, oldest first.
    pub new_posts: Vec<ObservedPost>,
}

/// The most posts one `since` read returns (the server's own cap).
const SINCE_PAGE: usize = 1000;
/// How far a channel with nothing recorded reaches back at first sight.
const FIRST_SIGHT_PAGE: usize = 60;

/// Catches the store up with everything `reader` can see. `via` is
/// `Backfill` at boot (such posts never start a turn) and `Reconnect` after a
/// socket blip (they may, §8.3).
pub async fn catch_up(
    reader: &Reader<'_>,
    directory: &Directory,
    store: &StoreHandle,
    via: ObservedVia,
) -> Result<CaughtUp, SyncError> {
    let channels: Vec<Channel> = reader
        .rest
        .get(&format!(
            "users/{}/teams/{}/channels",
            reader.user_id, reader.team_id
        ))
        .await?;
    let mut caught = CaughtUp::default();
    for channel in channels.iter().filter(|c| c.delete_at == 0) {
        let members = reconcile_members(reader, directory, store, channel).await?;
        record_channel(store, channel, &members).await?;
        caught
            .new_posts
            .extend(backfill(reader, directory, store, &channel.id, via).await?);
        read_pins(reader, directory, store, &channel.id).await?;
        caught.channels.push(channel.id.clone());
    }
    caught
        .new_posts
        .sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(caught)
}

async fn reconcile_members(
    reader: &Reader<'_>,
    directory: &Directory,
    store: &StoreHandle,
    channel: &Channel,
) -> Result<Vec<Member>, SyncError> {
    let listed = reader.rest.channel_members(&channel.id).await?;
    let mut members = Vec::with_capacity(listed.len());
    for member in &listed {
        members.push(directory.member(&member.user_id).await?);
    }
    let (id, recorded) = (channel.id.clone(), members.clone());
    let now = now_millis();
    store
        .call(move |s| s.reconcile_members(&id, &recorded, now))
        .await?;
    Ok(members)
}

/// Records a channel; a direct or group message is named by who is in it.
pub async fn record_channel(
    store: &StoreHandle,
    channel: &Channel,
    members: &[Member],
) -> Result<(), StoreError> {
    let kind = channel_kind(&channel.kind);
    let (name, display_name) = match kind {
        ChannelKind::Direct | ChannelKind::Group => {
            let names: Vec<&str> = members.iter().map(|m| m.username.as_str()).collect();
            (String::new(), names.join(", "))
        }
        _ => (channel.name.clone(), channel.display_name.clone()),
    };
    let observed = ObservedChannel {
        id: channel.id.clone(),
        name,
        display_name,
        kind,
    };
    store.call(move |s| s.record_channel(&observed)).await
}

/// Records the channel's posts since its last recorded one. The read starts
/// a millisecond before that post, so posts made in the same millisecond are
/// not lost; the ones already recorded are recognised by id.
async fn backfill(
    reader: &Reader<'_>,
    directory: &Directory,
    store: &StoreHandle,
    channel_id: &str,
    via: ObservedVia,
) -> Result<Vec<ObservedPost>, SyncError> {
    let anchor = {
        let id = channel_id.to_string();
        store.call(move |s| s.last_post_in_channel(&id)).await?
    };
    let mut posts: Vec<Post> = Vec::new();
    match anchor {
        Some((_, created_at)) => {
            let mut since = created_at - 1;
            loop {
                let page: PostList = reader
                    .rest
                    .get(&format!("channels/{channel_id}/posts?since={since}"))
                    .await?;
                let full = page.order.len() >= SINCE_PAGE;
                let newest = page
                    .posts
                    .values()
                    .map(|p| p.update_at)
                    .max()
                    .unwrap_or(since);
                posts.extend(page.posts.into_values());
                if !full || newest <= since {
                    break;
                }
                since = newest;
            }
        }
        None => {
            let page: PostList = reader
                .rest
                .get(&format!(
                    "channels/{channel_id}/posts?per_page={FIRST_SIGHT_PAGE}"
                ))
                .await?;
            posts.extend(page.posts.into_values());
        }
    }
    posts.retain(|p| p.channel_id == channel_id);
    posts.sort_by(|a, b| (a.create_at, &a.id).cmp(&(b.create_at, &b.id)));
    posts.dedup_by(|a, b| a.id == b.id);
    let mut recorded = Vec::new();
    for post in posts {
        if post.delete_at > 0 {
            let (id, at) = (post.id.clone(), post.delete_at);
            store.call(move |s| s.mark_deleted(&id, at)).await?;
            continue;
        }
        if post.is_system() {
            continue;
        }
        if let Some(observed) = record(directory, store, &post, via).await? {
            recorded.push(observed);
        }
    }
    Ok(recorded)
}

/// Reads the channel's pins afresh (§8.2): a pinned post never seen is
/// recorded, as read, and the pinned set replaces the recorded one.
async fn read_pins(
    reader: &Reader<'_>,
    directory: &Directory,
    store: &StoreHandle,
    channel_id: &str,
) -> Result<(), SyncError> {
    let pinned: PostList = reader
        .rest
        .get(&format!("channels/{channel_id}/pinned"))
        .await?;
    let mut ids = Vec::new();
    for post in pinned.posts.values().filter(|p| p.delete_at == 0) {
        record(directory, store, post, ObservedVia::PinRead).await?;
        let (id, message, edited) = (post.id.clone(), post.message.clone(), post.edit_at);
        store
            .call(move |s| s.follow_edit(&id, true, &message, edited))
            .await?;
        ids.push(post.id.clone());
    }
    let channel = channel_id.to_string();
    store.call(move |s| s.set_pins(&channel, &ids)).await?;
    Ok(())
}

/// Records a post; the post as recorded when it was new.
pub async fn record(
    directory: &Directory,
    store: &StoreHandle,
    post: &Post,
    via: ObservedVia,
) -> Result<Option<ObservedPost>, SyncError> {
    let observed = directory.observe(post, via, now_millis()).await?;
    let copy = observed.clone();
    let new = store.call(move |s| s.record_post(&copy)).await?;
    Ok(new.then_some(observed))
}

pub fn now_millis() -> Millis {
    chrono::Utc::now().timestamp_millis()
}
