//! The feed (§8.2): every bot's socket events, recorded in the store and
//! handed on. A post is recorded once however many bots see it; only a post
//! recorded for the first time from a live event, or recovered by a
//! reconnect's catch-up, goes on to the lanes — backfilled posts are
//! history and never start a turn. Membership follows `user_added` and
//! `user_removed`; the one edit followed is a pinned post's.

use std::collections::BTreeMap;
use std::sync::Arc;

use mattermost_wire::model::{Channel, Post, WebSocketEvent};
use tokio::sync::mpsc;
use tracing::{info, warn};

use super::Rest;
use super::directory::Directory;
use super::posted::Posted;
use super::socket::SocketEvent;
use super::sync::{self, Reader, SyncError, now_millis};
use crate::lanes::{LaneInput, LaneKey};
use crate::store::{ObservedPost, ObservedVia, StoreHandle};

/// A bot the feed reads for.
pub struct FeedBot {
    pub user_id: String,
    pub rest: Rest,
}

pub struct Feed {
    pub store: StoreHandle,
    pub directory: Arc<Directory>,
    pub team_id: String,
    /// By username.
    pub bots: BTreeMap<String, FeedBot>,
    pub lanes: mpsc::Sender<LaneInput>,
    /// By bot: the boot drains of lanes whose channels that bot's boot
    /// backfill could not read. A drained turn assembles its window from
    /// the store, so each waits for the bot's first catch-up (§7.3, §8.2).
    pub held_drains: BTreeMap<String, Vec<LaneKey>>,
    /// Posts a turn recorded from Mattermost's answer, which the feed hands
    /// on when their socket copy arrives (§5.2).
    pub posted: Arc<Posted>,
}

impl Feed {
    /// Reads socket events until every socket is gone.
    pub async fn run(mut self, mut events: mpsc::Receiver<SocketEvent>) {
        while let Some(event) = events.recv().await {
            match event {
                SocketEvent::Resync { bot, first } => {
                    let _ = self.lanes.send(LaneInput::Listening(bot.clone())).await;
                    let via = if first {
                        ObservedVia::Backfill
                    } else {
                        ObservedVia::Reconnect
                    };
                    match self.catch_up(&bot, via).await {
                        Ok(()) => self.release_drains(&bot).await,
                        Err(error) => {
                            warn!(%error, bot = %bot, "could not catch up with Mattermost");
                        }
                    }
                }
                SocketEvent::Event { event, .. } => {
                    if let Err(error) = self.event(&event).await {
                        warn!(%error, event = %event.event, "could not record a Mattermost event");
                    }
                }
            }
        }
    }

    /// The boot drains that waited for `bot`'s channels to be caught up.
    async fn release_drains(&mut self, bot: &str) {
        for key in self.held_drains.remove(bot).unwrap_or_default() {
            let _ = self.lanes.send(LaneInput::Drain(key)).await;
        }
    }

    async fn catch_up(&self, bot: &str, via: ObservedVia) -> Result<(), SyncError> {
        let Some(account) = self.bots.get(bot) else {
            return Ok(());
        };
        let reader = Reader {
            username: bot,
            user_id: &account.user_id,
            team_id: &self.team_id,
            rest: &account.rest,
        };
        let caught = sync::catch_up(&reader, &self.directory, &self.store, via).await?;
        info!(
            bot,
            channels = caught.channels.len(),
            new_posts = caught.new_posts.len(),
            via = via.as_str(),
            "caught up with Mattermost"
        );
        for post in &caught.new_posts {
            // Recorded here first: a turn's record of it finds it recorded.
            self.posted.arrived(&post.id);
        }
        // Posts a reconnect recovered are what a turn answers when they
        // addressed an agent (§8.3): a mention made during a blip is not lost.
        if via == ObservedVia::Reconnect {
            for post in caught.new_posts {
                self.hand_on(post, via).await;
            }
            self.hand_on_unseen().await?;
        }
        Ok(())
    }

    /// The posts turns recorded whose socket copy never came: the socket
    /// dropped, and this catch-up stands in for it (§8.3). One not yet in
    /// the store is still being recorded, and waits for its copy.
    async fn hand_on_unseen(&self) -> Result<(), SyncError> {
        for id in self.posted.waiting() {
            let read = id.clone();
            let Some(post) = self.store.call(move |s| s.post(&read)).await? else {
                continue;
            };
            if self.posted.arrived(&id) {
                self.hand_on(post, ObservedVia::Reconnect).await;
            }
        }
        Ok(())
    }

    async fn hand_on(&self, post: ObservedPost, via: ObservedVia) {
        let _ = self
            .lanes
            .send(LaneInput::Post {
                post: Box::new(post),
                via,
            })
            .await;
    }

    async fn event(&self, event: &WebSocketEvent) -> Result<(), SyncError> {
        match event.event.as_str() {
            "posted" => {
                let Some(post) = event.decode::<Post>("post") else {
                    return Ok(());
                };
                if post.is_system() {
                    return Ok(());
                }
                self.ensure_channel(&post.channel_id).await?;
                match sync::record(&self.directory, &self.store, &post, ObservedVia::Live).await? {
                    Some(observed) => {
                        self.posted.arrived(&post.id);
                        self.hand_on(observed, ObservedVia::Live).await;
                    }
                    None => {
                        // The turn that wrote it recorded it from
                        // Mattermost's answer (§5.2), or a catch-up racing
                        // this socket did: the socket delivered it, so it
                        // is live (§8.2), and goes on once.
                        let id = post.id.clone();
                        if self.posted.arrived(&post.id)
                            || self.store.call(move |s| s.mark_live(&id)).await?
                        {
                            let id = post.id.clone();
                            if let Some(observed) = self.store.call(move |s| s.post(&id)).await? {
                                self.hand_on(observed, ObservedVia::Live).await;
                            }
                        }
                    }
                }
            }
            "post_edited" => {
                if let Some(post) = event.decode::<Post>("post") {
                    let at = post.edit_at.max(post.update_at);
                    self.store
                        .call(move |s| s.follow_edit(&post.id, post.is_pinned, &post.message, at))
                        .await?;
                }
            }
            "post_deleted" => {
                if let Some(post) = event.decode::<Post>("post") {
                    let at = if post.delete_at > 0 {
                        post.delete_at
                    } else {
                        now_millis()
                    };
                    self.store
                        .call(move |s| s.mark_deleted(&post.id, at))
                        .await?;
                }
            }
            "user_added" => {
                let (channel, user) = membership(event);
                if channel.is_empty() || user.is_empty() {
                    return Ok(());
                }
                self.ensure_channel(&channel).await?;
                let member = self.directory.member(&user).await?;
                let now = now_millis();
                self.store
                    .call(move |s| s.add_member(&channel, &member, now))
                    .await?;
            }
            "user_removed" => {
                let (channel, user) = membership(event);
                if !channel.is_empty() && !user.is_empty() {
                    self.store
                        .call(move |s| s.remove_member(&channel, &user))
                        .await?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Records a channel first seen in an event (a new direct message),
    /// read with the token of a bot that is in it.
    async fn ensure_channel(&self, channel_id: &str) -> Result<(), SyncError> {
        let id = channel_id.to_string();
        if self.store.call(move |s| s.channel(&id)).await?.is_some() {
            return Ok(());
        }
        for bot in self.bots.values() {
            let Ok(channel) = bot
                .rest
                .get::<Channel>(&format!("channels/{channel_id}"))
                .await
            else {
                continue;
            };
            let listed = bot.rest.channel_members(channel_id).await?;
            let mut members = Vec::new();
            for member in &listed {
                members.push(self.directory.member(&member.user_id).await?);
            }
            sync::record_channel(&self.store, &channel, &members).await?;
            let (id, now) = (channel_id.to_string(), now_millis());
            self.store
                .call(move |s| s.reconcile_members(&id, &members, now))
                .await?;
            return Ok(());
        }
        Ok(())
    }
}

/// The channel and user of a membership event: `data` first, the
/// broadcast as the fallback (contract §B.6).
fn membership(event: &WebSocketEvent) -> (String, String) {
    let channel = event
        .str("channel_id")
        .filter(|c| !c.is_empty())
        .unwrap_or(&event.broadcast.channel_id)
        .to_string();
    let user = event
        .str("user_id")
        .filter(|u| !u.is_empty())
        .unwrap_or(&event.broadcast.user_id)
        .to_string();
    (channel, user)
}
