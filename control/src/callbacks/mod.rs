//! The callback server (§6.4): what Mattermost calls back — button clicks on
//! approval prompts, the dialog that carries a denial's reason, and the
//! `/collegium` command — and the trigger route a webhook sender uses. It binds
//! the configured loopback or private address; each request is checked
//! against the approval's signature, and the clicker against the channel's
//! people, before anything is recorded.

mod command;
pub mod connections;
mod decision;
#[cfg(feature = "test-hooks")]
pub use decision::DECIDE_DELAY_MS;
pub mod trigger;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::routing::post;
use tokio::sync::{mpsc, watch};
use tracing::info;

use crate::lanes::LaneInput;
use crate::services::Services;

pub use crate::approvals::{DECISION_ROUTE, DIALOG_ROUTE};

/// The routes' request shapes and the command's hook parser, reachable by
/// the fuzz harness (fuzz/harness), which decodes untrusted bodies as the
/// routes do; nothing else uses them from outside.
#[doc(hidden)]
pub mod fuzzing {
    pub use super::command::CommandRequest;
    pub use super::command::deferred::ResponseUrl;
    pub use super::decision::Click;
}

#[derive(Debug, thiserror::Error)]
#[error("cannot listen for callbacks on {addr}: {source}")]
pub struct BindError {
    pub addr: SocketAddr,
    pub source: std::io::Error,
}

/// What the routes work with: the runtime context, and the lanes' inbox,
/// where `/collegium resume` asks each standing queue to drain (§7.4). The
/// callbacks are an input to the lanes, as the chat feed is.
#[derive(Clone)]
pub struct Routes {
    pub services: Arc<Services>,
    pub lanes: mpsc::Sender<LaneInput>,
}

impl FromRef<Routes> for Arc<Services> {
    fn from_ref(routes: &Routes) -> Self {
        routes.services.clone()
    }
}

/// Secrets compared in constant time: a timing difference must not reveal
/// how much of a guessed secret was right (§6.4).
pub(crate) fn same_secret(given: &str, held: &str) -> bool {
    let (a, b) = (given.as_bytes(), held.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Binds the callback address. The daemon binds it before it handshakes
/// the shell worker, whose probe of each agent's reach then finds it
/// listening (§6.4); connections wait in the backlog until [`serve`].
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, BindError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| BindError { addr, source })
}

/// The largest body a click, dialog or command route reads. Each is
/// parsed before its signature or token can be checked, so a forger's
/// body is read too: Mattermost's own are a few kilobytes (a command's text
/// and a dialog's answer are bounded by its post limit, 16,383
/// characters), and axum's default of 2 MB let 256 connections hold half
/// a gigabyte. The trigger route reads its own, after the secret (1 MiB).
pub const CALLBACK_BODY_MAX_BYTES: usize = 256 * 1024;

/// Serves the bound listener until `stop`.
pub fn serve(listener: tokio::net::TcpListener, routes: Routes, stop: watch::Receiver<bool>) {
    let router = Router::new()
        .route(DECISION_ROUTE, post(decision::click))
        .route(DIALOG_ROUTE, post(decision::submitted))
        .route(crate::commands::ROUTE, post(command::command))
        .route(command::clear::ROUTE, post(command::clear::submitted))
        .layer(DefaultBodyLimit::max(CALLBACK_BODY_MAX_BYTES))
        .route(trigger::ROUTE, post(trigger::receive))
        .with_state(routes);
    match listener.local_addr() {
        Ok(addr) => info!(%addr, "listening for Mattermost callbacks"),
        Err(_) => info!("listening for Mattermost callbacks"),
    }
    tokio::spawn(connections::serve(
        listener,
        router,
        connections::LIMITS,
        stop,
    ));
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn s6_4_secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
        assert!(!same_secret("", "abc"));
    }
}
