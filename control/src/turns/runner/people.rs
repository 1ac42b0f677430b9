//! A person's hand on a running turn and on whether it opens (§7.4, §7.5):
//! steers handed over, stops and kills noticed, and turns the chain limit
//! or a global halt keeps from opening.

use super::*;

impl Turn<'_> {
    /// Steers received since the last completion arrive as the person
    /// speaking, prefixed with their name; each costs one attempt and is a
    /// line on the status post (§7.5).
    pub(super) async fn hand_over_steers(&mut self) {
        if let Some(steers) = self.steers.as_mut() {
            while let Ok(steer) = steers.try_recv() {
                self.steered.push(steer);
            }
        }
        let limit = self.services.post_limit.get();
        // The completion a steer aborted reported nothing: the first steer's
        // event carries an estimate of what it had streamed (§8.2, §7.5).
        let mut aborted = self.aborted.take();
        for steer in std::mem::take(&mut self.steered) {
            // A person who steered the turn is owed a reply (§3.15).
            self.units.steered(&steer.by);
            self.spend(1).await;
            self.own.push(Message::User(format!(
                "[@{} steers this turn] {}",
                steer.by, steer.text
            )));
            self.trace(
                TraceKind::Steer,
                None,
                None,
                None,
                Some(steer.text.clone()),
                Some(steer_detail(&steer.by, aborted.take()).to_string()),
            )
            .await;
            let note = format!("🧭 steered by @{}", steer.by);
            self.status
                .note(&self.seat.rest, &self.services.store, &note, true, limit)
                .await;
        }
    }

    /// A turn the chain limit keeps from opening (§7.4): the system bot
    /// names the agent not activated; what a drain chose is consumed, so it
    /// is not chosen again.
    pub(super) async fn not_admitted(&self, chain_limit: u32) {
        let (agent, channel, turn, bound) = (
            self.start.agent.clone(),
            self.start.channel_id.clone(),
            self.id.clone(),
            self.start.drain_bound,
        );
        let _ = self
            .services
            .store
            .call(move |s| {
                s.take_queued(&agent, &channel, &turn, bound)?;
                s.consume_taken(&turn)
            })
            .await;
        let display = self.services.display_name(&self.start.agent).to_string();
        let notice = framework_post(
            self.start.channel_id.clone(),
            format!(
                "{display} was not activated: this chain of agents has reached its limit of \
                 {chain_limit} turns from one person's post. A new post from a person starts a fresh chain."
            ),
            "notice",
            None,
        );
        if let Err(error) = self.services.system_bot.rest.create_post(&notice).await {
            warn!(%error, "could not post the chain-limit notice");
        }
        self.services.controls.release(&self.id);
        info!(agent = %self.start.agent, "turn not admitted: the chain is at its limit");
    }

    /// A turn a halt keeps from opening: the posts it would have answered
    /// wait in the queue for `/collegium resume` (§7.4), nothing lost.
    pub(super) async fn held_back(&self) {
        let (agent, channel) = (self.start.agent.clone(), self.start.channel_id.clone());
        let posts: Vec<(String, Millis)> = self
            .start
            .answers
            .iter()
            .map(|(p, _)| (p.id.clone(), p.created_at))
            .collect();
        let _ = self
            .services
            .store
            .call(move |s| {
                for (post, at) in &posts {
                    s.enqueue(&agent, &channel, post, *at)?;
                }
                Ok(())
            })
            .await;
        self.services.controls.release(&self.id);
        info!(agent = %self.start.agent, "turn held back: every agent is halted");
    }

    pub(super) fn halted_now(&self) -> Option<Halt> {
        self.halted.borrow().clone()
    }
}

/// Resolves when a person kills the turn; never when the turn's control is
/// released (the turn is ending anyway).
pub(super) async fn killed(halted: &mut watch::Receiver<Option<Halt>>) {
    if halted
        .wait_for(|h| h.as_ref().is_some_and(|h| h.kill))
        .await
        .is_err()
    {
        std::future::pending::<()>().await;
    }
}

/// Resolves when a person stops or kills the turn.
pub(super) async fn stopped(halted: &mut watch::Receiver<Option<Halt>>) {
    if halted.wait_for(Option::is_some).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// The next steer, where the turn listens for them.
pub(super) async fn next_steer(
    steers: &mut Option<tokio::sync::mpsc::UnboundedReceiver<Steer>>,
) -> Option<Steer> {
    match steers {
        Some(steers) => steers.recv().await,
        None => std::future::pending().await,
    }
}

/// A steer's event detail: who steered, and what the completion it aborted
/// had streamed, if it aborted one.
fn steer_detail(by: &str, aborted: Option<crate::inference::Usage>) -> serde_json::Value {
    let mut detail = json!({"by": by});
    if let Some(usage) = aborted {
        detail["aborted_completion"] = usage.as_estimate();
    }
    detail
}
