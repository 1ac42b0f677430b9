//! The status post (§8.1): created at the turn's first tool call, edited in
//! place as calls land, closed with how long the turn ran. It is posted
//! under the agent's account and carries its role in its props, so the
//! store records it as a status post however its event races the answer.
//! The stall sweep may open it first for a long turn that has none (§7.6):
//! the post's id lives in a slot both share, so there is only ever one.

use std::time::Instant;

use tracing::warn;

use crate::chat::Rest;
use crate::chat::directory::framework_post;
use crate::status::{self, CallLine, Ending, StatusSlot};
use crate::store::StoreHandle;

pub struct StatusPost {
    turn_id: String,
    channel_id: String,
    post_id: StatusSlot,
    lines: Vec<String>,
    /// What the turn waits on, shown above the calls (§8.1).
    head: Option<String>,
    started: Instant,
}

impl StatusPost {
    pub fn new(turn_id: &str, channel_id: &str, slot: StatusSlot) -> Self {
        Self {
            turn_id: turn_id.to_string(),
            channel_id: channel_id.to_string(),
            post_id: slot,
            lines: Vec::new(),
            head: None,
            started: Instant::now(),
        }
    }

    pub async fn exists(&self) -> bool {
        self.post_id.lock().await.is_some()
    }

    /// Appends a call's line and shows it.
    pub async fn call(&mut self, rest: &Rest, store: &StoreHandle, line: &CallLine, limit: usize) {
        self.lines.push(status::render_call(line));
        self.show(rest, store, None, limit).await;
    }

    /// Appends one of the framework's notes (interim text, a fold, a
    /// drain's reach) and shows it when the post exists or `open` asks.
    pub async fn note(
        &mut self,
        rest: &Rest,
        store: &StoreHandle,
        note: &str,
        open: bool,
        limit: usize,
    ) {
        self.lines.push(note.to_string());
        if open || self.exists().await {
            self.show(rest, store, None, limit).await;
        }
    }

    /// Sets or clears the head that says what the turn waits on, opening
    /// the post where none exists (§8.1).
    pub async fn set_head(
        &mut self,
        rest: &Rest,
        store: &StoreHandle,
        head: Option<String>,
        limit: usize,
    ) {
        self.head = head;
        self.show(rest, store, None, limit).await;
    }

    /// The closing line, where the post exists (a turn that called no tool
    /// leaves nothing but its reply, §8.1).
    pub async fn close(&mut self, rest: &Rest, store: &StoreHandle, ending: &Ending, limit: usize) {
        if !self.exists().await {
            return;
        }
        let closing = status::render_ending(ending, self.started.elapsed());
        self.show(rest, store, Some(&closing), limit).await;
    }

    async fn show(
        &mut self,
        rest: &Rest,
        store: &StoreHandle,
        closing: Option<&str>,
        limit: usize,
    ) {
        let body = match &self.head {
            Some(head) => {
                let rest_of = limit.saturating_sub(head.chars().count() + 1);
                format!(
                    "{head}\n{}",
                    status::render_body(&self.lines, closing, rest_of)
                )
            }
            None => status::render_body(&self.lines, closing, limit),
        };
        let mut slot = self.post_id.lock().await;
        match slot.as_deref() {
            Some(id) => {
                if let Err(error) = rest.edit_post(id, &body).await {
                    warn!(%error, turn = %self.turn_id, "could not edit the status post");
                }
            }
            None => {
                *slot = open(rest, store, &self.channel_id, &self.turn_id, body).await;
            }
        }
    }
}

/// Creates a turn's status post with `body` and records it; its id, or
/// none where Mattermost refused it.
pub async fn open(
    rest: &Rest,
    store: &StoreHandle,
    channel_id: &str,
    turn_id: &str,
    body: String,
) -> Option<String> {
    let post = framework_post(channel_id.to_string(), body, "status", Some(turn_id));
    match rest.create_post(&post).await {
        Ok(created) => {
            let (turn, id) = (turn_id.to_string(), created.id.clone());
            if let Err(error) = store.call(move |s| s.set_status_post(&turn, &id)).await {
                warn!(%error, "could not record the status post");
            }
            Some(created.id)
        }
        Err(error) => {
            warn!(%error, turn = %turn_id, "could not create the status post");
            None
        }
    }
}
