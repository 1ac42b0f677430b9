//! A respond-to-all channel holds at most one agent, and so does a group
//! message, which triggers as a DM does (§3.10). The boot refuses a
//! violation in a configured channel; at runtime, membership events keep the store's view
//! of each channel, and this watch reads it: a violation trips the global
//! halt, and `/collegium resume` is refused while one stands.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::halt::{self, GlobalHalt};
use crate::services::Services;
use crate::store::{Store, StoreError};

/// How often the watch reads membership.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Every respond-to-all channel and group message holding two or more
/// agents, as the lines that say so, from membership as last observed.
pub async fn violations(services: &Services) -> Vec<String> {
    let channels = services.respond_to_all.clone();
    let names = services.display_names.clone();
    services
        .store
        .call(move |s| crowded(s, &channels, |agents| by_display_name(&names, agents)))
        .await
        .unwrap_or_default()
}

/// The system bot's notice names agents by display name, never by handle
/// (§3.2).
fn by_display_name(names: &BTreeMap<String, String>, agents: &[String]) -> Vec<String> {
    agents
        .iter()
        .map(|agent| crate::services::display_name(names, agent).to_string())
        .collect()
}

/// The one-agent rule (§3.10) read off the store: the respond-to-all
/// channels named `respond_to_all`, and every group message, which triggers
/// as a DM does; each line names the agents as `named` gives them.
fn crowded(
    store: &Store,
    respond_to_all: &[String],
    named: impl Fn(&[String]) -> Vec<String>,
) -> Result<Vec<String>, StoreError> {
    let mut found = Vec::new();
    for name in respond_to_all {
        let agents = store.agents_in_channel_named(name)?;
        found.extend(crate::activation::crowding(name, &named(&agents)));
    }
    for (display_name, agents) in store.agents_in_group_messages()? {
        found.extend(crate::activation::crowded_group(
            &display_name,
            &named(&agents),
        ));
    }
    Ok(found)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{AuthorKind, ChannelKind, Member, ObservedChannel};

    fn member(username: &str, kind: AuthorKind) -> Member {
        Member {
            user_id: format!("u-{username}"),
            username: username.into(),
            kind,
        }
    }

    #[test]
    fn s3_10_a_group_message_holding_two_agents_is_caught() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("s.db")).expect("open");
        store
            .record_channel(&ObservedChannel {
                id: "g1".into(),
                name: "g1-handle".into(),
                display_name: "ana, mira, theo".into(),
                kind: ChannelKind::Group,
            })
            .expect("channel");
        let with_one = [
            member("ana", AuthorKind::Person),
            member("mira", AuthorKind::Agent),
        ];
        store
            .reconcile_members("g1", &with_one, 1)
            .expect("members");
        assert!(
            crowded(&store, &[], <[String]>::to_vec)
                .expect("read")
                .is_empty(),
            "one agent"
        );
        store
            .add_member("g1", &member("theo", AuthorKind::Agent), 2)
            .expect("member");
        let found = crowded(&store, &[], <[String]>::to_vec).expect("read");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("mira, theo"), "{found:?}");
    }
}
