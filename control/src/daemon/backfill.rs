//! The boot's backfill (§7.3 step 3, §8.2), run before the restart sweep
//! and before any lane drains: a turn a boot drain starts assembles its
//! window from the store, so a post made while the daemon was down must be
//! recorded first, and the sweep recomputes the hand-offs an abandoned turn
//! deferred from the posts the store holds — a unit post the crash cut off
//! before the socket delivered it is one of them (§3.15). Each bot reads
//! with its own token, never a privileged one.
//!
//! The socket's first connection catches up once more: that read covers
//! what was posted between this backfill and the connection.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use tracing::{info, warn};

use crate::chat::Rest;
use crate::chat::credentials::Credentials;
use crate::chat::directory::{Directory, Known};
use crate::chat::feed::FeedBot;
use crate::chat::sync::{self, Reader};
use crate::services::Services;
use crate::store::{AuthorKind, ObservedVia};

/// The bots the feed reads for, by username: the system bot and every
/// seated agent, each with its own session.
pub fn bots(
    credentials: &Credentials,
    services: &Services,
    base: &Rest,
) -> BTreeMap<String, FeedBot> {
    credentials
        .accounts
        .iter()
        .filter(|(username, _)| {
            **username == services.system_bot.username || services.seats.contains_key(*username)
        })
        .map(|(username, held)| {
            (
                username.clone(),
                FeedBot {
                    user_id: held.user_id.clone(),
                    rest: base.with_token(held.token.expose()),
                },
            )
        })
        .collect()
}

/// Who the framework's accounts are, so their posts are recorded as the
/// system bot's and the agents'.
pub fn directory(services: &Services) -> Arc<Directory> {
    let system = &services.system_bot;
    let mut known = vec![(
        system.user_id.clone(),
        Known {
            username: system.username.clone(),
            kind: AuthorKind::SystemBot,
        },
    )];
    known.extend(services.seats.values().map(|seat| {
        (
            seat.user_id.clone(),
            Known {
                username: seat.agent.username.clone(),
                kind: AuthorKind::Agent,
            },
        )
    }));
    Arc::new(Directory::new(system.rest.clone(), known))
}

/// Catches every bot's channels up; the bots whose read failed. Their
/// agents' lanes do not drain until the socket's first catch-up has read
/// their channels (`Feed::held_drains`).
pub async fn at_boot(
    services: &Services,
    bots: &BTreeMap<String, FeedBot>,
    directory: &Directory,
    team_id: &str,
) -> BTreeSet<String> {
    let mut failed = BTreeSet::new();
    for (username, bot) in bots {
        let reader = Reader {
            username,
            user_id: &bot.user_id,
            team_id,
            rest: &bot.rest,
        };
        match sync::catch_up(&reader, directory, &services.store, ObservedVia::Backfill).await {
            Ok(caught) => info!(
                bot = %username,
                channels = caught.channels.len(),
                new_posts = caught.new_posts.len(),
                "backfilled at boot"
            ),
            Err(error) => {
                warn!(%error, bot = %username, "could not backfill at boot; its lanes drain once its socket has caught up");
                failed.insert(username.clone());
            }
        }
    }
    failed
}
