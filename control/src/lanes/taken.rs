//! Lanes a clear holds (§8.5, §5.1): on confirmation `/collegium clear`
//! takes every agent's lane in the channel, so no turn starts until the
//! store is cut. It is refused while any lane there is busy — a turn
//! running, parked on a person included, one debouncing, or a trigger's
//! announcement on its way. What arrives meanwhile waits, and is handled
//! once the cut is done; a post the cut erased is dropped then, since it is
//! no longer anyone's to answer.

use tracing::{info, warn};

use super::{Lane, LaneInput, Lanes};

impl Lanes {
    /// Holds `input` if it is for a channel a clear holds; else hands it back.
    pub(super) fn hold(&mut self, input: LaneInput) -> Option<LaneInput> {
        let channel = match &input {
            LaneInput::Post { post, .. } => Some(post.channel_id.as_str()),
            LaneInput::Drain(key) => Some(key.channel_id.as_str()),
            LaneInput::DebounceDue { lane, .. } => Some(lane.channel_id.as_str()),
            LaneInput::TriggerRecorded(channel) => Some(channel.as_str()),
            _ => None,
        };
        match channel.and_then(|c| self.taken.get_mut(c)) {
            Some(held) => {
                held.push(input);
                None
            }
            None => Some(input),
        }
    }

    /// Takes every lane in the channel; false while any is busy.
    pub(super) fn take(&mut self, channel_id: String) -> bool {
        let busy = self
            .lanes
            .iter()
            .any(|(key, lane)| key.channel_id == channel_id && !matches!(lane, Lane::Idle))
            || self.announcing.contains_key(&channel_id)
            || self.taken.contains_key(&channel_id);
        if busy {
            return false;
        }
        info!(channel = %channel_id, "lanes taken for a clear");
        self.taken.insert(channel_id, Vec::new());
        true
    }

    /// Gives the channel's lanes back and handles what waited, in order;
    /// then posts a pending trigger if the channel is idle (§8.5: pending
    /// triggers post into the cleared channel).
    pub(super) async fn release(&mut self, channel_id: &str) {
        let Some(held) = self.taken.remove(channel_id) else {
            return;
        };
        info!(channel = %channel_id, waited = held.len(), "lanes released after a clear");
        let mut kept = Vec::with_capacity(held.len());
        for input in held {
            if let LaneInput::Post { post, .. } = &input {
                let id = post.id.clone();
                match self.services.store.call(move |s| s.post(&id)).await {
                    Ok(Some(_)) => {}
                    Ok(None) => continue,
                    Err(error) => warn!(%error, "could not check a post that waited on a clear"),
                }
            }
            kept.push(input);
        }
        kept.push(LaneInput::TriggerRecorded(channel_id.to_string()));
        // Sent back through the inbox, from a task: this one owns the inbox's
        // receiving end and must not wait on its own queue.
        let inbox = self.inbox.clone();
        tokio::spawn(async move {
            for input in kept {
                if inbox.send(input).await.is_err() {
                    return;
                }
            }
        });
    }
}
