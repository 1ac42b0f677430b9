//! Absorbing fragments into a running turn (§4.4): while the turn is still
//! on its first model call, a fragment from the person it answers is handed
//! to it rather than queued, and the turn discards the completion in flight,
//! re-assembles and calls again. Absorption ends at the first action (a tool
//! has run or a post exists) and at the fold limit.

use std::sync::Mutex;

use tokio::sync::Notify;

use crate::store::ObservedPost;

pub struct FoldGate {
    state: Mutex<FoldState>,
    arrived: Notify,
}

struct FoldState {
    open: bool,
    author: String,
    folds: u32,
    limit: u32,
    pending: Vec<ObservedPost>,
}

impl FoldGate {
    /// A gate for a turn answering `author`, absorbing at most `limit`
    /// fragments.
    pub fn new(author: &str, limit: u32) -> Self {
        Self {
            state: Mutex::new(FoldState {
                open: limit > 0,
                author: author.to_string(),
                folds: 0,
                limit,
                pending: Vec::new(),
            }),
            arrived: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FoldState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Offers a post from `author`; true when the turn absorbs it.
    pub fn offer(&self, author: &str, post: &ObservedPost) -> bool {
        let mut state = self.lock();
        if !state.open || state.author != author || state.folds >= state.limit {
            return false;
        }
        state.folds += 1;
        state.pending.push(post.clone());
        drop(state);
        self.arrived.notify_one();
        true
    }

    /// Absorption ends: a tool ran, a post exists, or the first call is done.
    pub fn close(&self) {
        self.lock().open = false;
    }

    pub fn is_open(&self) -> bool {
        self.lock().open
    }

    /// The fragments handed over since the last take.
    pub fn take(&self) -> Vec<ObservedPost> {
        std::mem::take(&mut self.lock().pending)
    }

    /// Waits for a fragment.
    pub async fn arrived(&self) {
        loop {
            let notified = self.arrived.notified();
            if !self.lock().pending.is_empty() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{AuthorKind, ObservedVia, PostRole};

    fn post(id: &str) -> ObservedPost {
        ObservedPost {
            id: id.into(),
            channel_id: "c".into(),
            author_id: "u".into(),
            author_name: "ana".into(),
            author_kind: AuthorKind::Person,
            created_at: 1,
            message: "more".into(),
            props: None,
            role: PostRole::Post,
            turn_id: None,
            pinned: false,
            observed_at: 1,
            observed_via: ObservedVia::Live,
            files: Vec::new(),
        }
    }

    #[test]
    fn s4_4_only_the_turns_author_is_absorbed_up_to_the_fold_limit_until_closed() {
        let gate = FoldGate::new("ana", 2);
        assert!(
            !gate.offer("bo", &post("x")),
            "another person's post is not absorbed"
        );
        assert!(gate.offer("ana", &post("a1")));
        assert!(gate.offer("ana", &post("a2")));
        assert!(!gate.offer("ana", &post("a3")), "the fold limit");
        assert_eq!(gate.take().len(), 2);
        let gate = FoldGate::new("ana", 3);
        gate.close();
        assert!(
            !gate.offer("ana", &post("a4")),
            "absorption ended at the first action"
        );
    }
}
