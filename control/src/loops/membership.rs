//! A respond-to-all channel holds at most one agent (§3.10). The boot
//! refuses a violation; at runtime, membership events keep the store's view
//! of each channel, and this watch reads it: a violation trips the global
//! halt, and `/collegium resume` is refused while one stands.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::halt::{self, GlobalHalt};
use crate::services::Services;

/// How often the watch reads membership.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Every respond-to-all channel holding two or more agents, as the lines
/// that say so, from membership as last observed.
pub async fn violations(services: &Services) -> Vec<String> {
    let channels = services.respond_to_all.clone();
    let crowded = services
        .store
        .call(move |s| {
            let mut crowded = Vec::new();
            for name in &channels {
                crowded.push((name.clone(), s.agents_in_channel_named(name)?));
            }
            Ok(crowded)
        })
        .await
        .unwrap_or_default();
    crowded
        .iter()
        .filter_map(|(name, agents)| {
            crate::activation::crowding(name, &by_display_name(services, agents))
        })
        .collect()
}

/// The system bot's notice names agents by display name, never by handle
/// (§3.2).
fn by_display_name(services: &Services, agents: &[String]) -> Vec<String> {
    agents
        .iter()
        .map(|agent| {
            services
                .display_names
                .get(agent)
                .cloned()
                .unwrap_or_else(|| agent.clone())
        })
        .collect()
}

/// Watches membership until `stop`; each violation, once per episode, halts
/// every agent (a halt already standing is left as it is, and the
/// violation still blocks its resume).
pub async fn watch(services: Arc<Services>, mut stop: watch::Receiver<bool>) {
    let mut announced: BTreeSet<String> = BTreeSet::new();
    let mut every = tokio::time::interval(CHECK_EVERY);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.changed() => return,
        }
        let found: BTreeSet<String> = violations(&services).await.into_iter().collect();
        for problem in found.difference(&announced) {
            let notice = format!(
                "⛔ **Every agent is halted.** {problem} Pending approvals are invalidated, and \
                 nothing queued will run. Once the channel holds one agent, a person can clear \
                 the halt with `/collegium resume`."
            );
            halt::raise(
                &services,
                &GlobalHalt {
                    by: "the membership check".into(),
                    reason: problem.clone(),
                    notice,
                },
            )
            .await;
        }
        announced = found;
    }
}
