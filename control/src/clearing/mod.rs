//! `/collegium clear` (§8.5): the pieces of a channel's fresh start that are
//! not the command route's — the confirmation dialog and its signed state
//! ([`dialog`]), the hold on every agent's lane ([`Taken`]), and the
//! deletion of the posts from Mattermost ([`delete`]). The store's cut is
//! `Store::clear_channel`; the order of it all is
//! `callbacks::command::clear`.

pub mod delete;
pub mod dialog;

use tokio::sync::{mpsc, oneshot};
use tracing::warn;

use crate::lanes::LaneInput;

/// Every agent's lane in a channel, held by a clear until the store is cut
/// (§8.5, §5.1). Dropping it gives the lanes back, on every path, so a
/// failure never leaves a channel where no turn can start.
pub struct Taken {
    channel_id: String,
    lanes: mpsc::Sender<LaneInput>,
}

impl Taken {
    /// Takes the channel's lanes; `None` while any turn runs there (parked
    /// on a person included), debounces, or a trigger's announcement is on
    /// its way to its turn.
    pub async fn take(lanes: &mpsc::Sender<LaneInput>, channel_id: &str) -> Option<Self> {
        let (taken, answer) = oneshot::channel();
        lanes
            .send(LaneInput::Take {
                channel_id: channel_id.to_string(),
                taken,
            })
            .await
            .ok()?;
        answer.await.ok()?.then(|| Self {
            channel_id: channel_id.to_string(),
            lanes: lanes.clone(),
        })
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        let release = LaneInput::Release(self.channel_id.clone());
        if let Err(mpsc::error::TrySendError::Full(release)) = self.lanes.try_send(release) {
            // The inbox is full for a moment: hand the release to a task
            // rather than lose it.
            let lanes = self.lanes.clone();
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(async move {
                        let _ = lanes.send(release).await;
                    });
                }
                Err(_) => warn!("a clear's lanes could not be released"),
            }
        }
    }
}
