//! Idle-gated delivery (§4.2): a recorded trigger is posted only when its
//! channel is idle — no turn running there (a turn parked on an approval or
//! a question still runs), nothing debouncing, no halt standing, and no
//! announcement of its own still on its way to the turn it starts. The
//! system bot posts it, mentioning the agent, and the post starts an
//! ordinary turn; the channel's next trigger waits for that turn to end.
//! Nothing the system bot posts is queued (§5.2): the gate is what makes
//! that safe.
//!
//! The lanes own this because they alone know whether a channel is idle.

use std::time::Duration;

use tokio::time::Instant;
use tracing::{info, warn};

use super::{Lane, Lanes};
use crate::chat::directory::{TRIGGER_PROP, framework_post};
use crate::triggers::announce;

/// How often the lanes look for triggers waiting on an idle channel: a
/// halt lifted, a restart, an announcement that could not be posted.
pub(super) const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// How long an announcement may take to come back through the feed and
/// start its turn before the channel is taken for idle again: a post the
/// feed never delivers must not hold a channel for ever.
const ANNOUNCEMENT_GRACE: Duration = Duration::from_secs(120);

/// An announcement posted and not yet seen starting its turn.
pub(super) struct Announcing {
    post_id: String,
    since: Instant,
}

impl Lanes {
    /// Posts the next trigger waiting for `channel_id`, if the channel is
    /// idle.
    pub(super) async fn deliver(&mut self, channel_id: &str) {
        if !self.channel_idle(channel_id) {
            return;
        }
        let channel = channel_id.to_string();
        let next = match self
            .services
            .store
            .call(move |s| s.next_pending(&channel))
            .await
        {
            Ok(Some(next)) => next,
            Ok(None) => return,
            Err(error) => {
                warn!(%error, "could not read the triggers waiting for a channel");
                return;
            }
        };
        if !self.listening.contains(&next.agent) {
            return;
        }
        if self.services.seat(&next.agent).is_none() {
            // Intake checked the agent; one gone from the configuration
            // since leaves its trigger waiting, and says so.
            warn!(trigger = next.id, agent = %next.agent, "a trigger waits for an agent this deployment no longer serves");
            return;
        }
        let composed = announce::compose(&next, &next.agent, self.services.post_limit.get());
        let bot = &self.services.system_bot;
        let mut post = framework_post(channel_id, composed.message, "notice", None);
        post.props.insert(TRIGGER_PROP.into(), next.id.into());
        if let Some(attached) = &composed.attachment {
            match bot
                .rest
                .upload_file(channel_id, &attached.name, attached.text.as_bytes())
                .await
            {
                Ok(file) => post.file_ids = vec![file.id],
                Err(error) => {
                    warn!(%error, trigger = next.id, "could not attach a trigger's item; it waits");
                    return;
                }
            }
        }
        let created = match bot.rest.create_post(&post).await {
            Ok(created) => created,
            Err(error) => {
                warn!(%error, trigger = next.id, "could not post a trigger; it waits");
                return;
            }
        };
        let (id, post_id) = (next.id, created.id.clone());
        let now = chrono::Utc::now().timestamp_millis();
        if let Err(error) = self
            .services
            .store
            .call(move |s| s.mark_announced(id, &post_id, now))
            .await
        {
            warn!(%error, trigger = id, "a trigger was posted but could not be marked so");
        }
        info!(trigger = id, channel = %channel_id, agent = %next.agent, "trigger announced");
        self.announcing.insert(
            channel_id.to_string(),
            Announcing {
                post_id: created.id,
                since: Instant::now(),
            },
        );
    }

    /// A post reached the lanes: the announcement it is has now started its
    /// turn (or found it could not), so the lane's own state gates the
    /// channel from here.
    pub(super) fn announcement_arrived(&mut self, channel_id: &str, post_id: &str) {
        if self
            .announcing
            .get(channel_id)
            .is_some_and(|a| a.post_id == post_id)
        {
            self.announcing.remove(channel_id);
        }
    }

    /// Every channel with a trigger waiting, tried in turn; announcements
    /// past their grace let their channel go.
    pub(super) async fn sweep_triggers(&mut self) {
        self.announcing
            .retain(|_, a| a.since.elapsed() < ANNOUNCEMENT_GRACE);
        let channels = match self
            .services
            .store
            .call(|s| s.channels_with_pending())
            .await
        {
            Ok(channels) => channels,
            Err(error) => {
                warn!(%error, "could not read the channels with triggers waiting");
                return;
            }
        };
        for channel in channels {
            self.deliver(&channel).await;
        }
    }

    /// Idle as §4.2 means it: no lane of the channel running a turn (parked
    /// ones included) or debouncing, no announcement still on its way, and
    /// no framework-wide halt.
    fn channel_idle(&self, channel_id: &str) -> bool {
        let busy_lane = self
            .lanes
            .iter()
            .any(|(key, lane)| key.channel_id == channel_id && !matches!(lane, Lane::Idle));
        !busy_lane
            && !self.announcing.contains_key(channel_id)
            && !self.taken.contains_key(channel_id)
            && self.services.controls.global_halt().is_none()
    }
}
