//! The callback server's connections (§6.4): the routes trust the network,
//! so whoever reaches the port — an agent's approved command on the same
//! host included — must not be able to starve the daemon of descriptors
//! and, through that, every other agent of its model and its Mattermost.
//! Connections are capped overall and per peer address; a peer over its
//! share is closed at once, and one whose headers do not arrive in time, or
//! that holds its connection past its lifetime, is closed too.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tracing::{debug, warn};

/// How many connections the server holds at once, and from one address.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub total: usize,
    pub per_peer: usize,
    /// How long a request's headers may take to arrive.
    pub headers: Duration,
    /// How long one connection may last, its bodies included: Mattermost
    /// opens a fresh connection when a kept-alive one is closed.
    pub lifetime: Duration,
}

/// The deployment's limits. Mattermost makes one request per click or
/// command, so 256 connections are far beyond any team's use, and far below
/// the descriptors the daemon keeps for its store, Mattermost and models.
pub const LIMITS: Limits = Limits {
    total: 256,
    per_peer: 64,
    headers: Duration::from_secs(10),
    lifetime: Duration::from_secs(60),
};

/// What a failed accept waits before the next: with no descriptor left,
/// accepting at once again would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Serves `router` on `listener` within `limits` until `stop` changes.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let total = Arc::new(Semaphore::new(limits.total));
    let peers = Peers::default();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    warn!(%error, "a callback connection could not be accepted");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let Ok(permit) = total.clone().try_acquire_owned() else {
            debug!(%peer, "callback connection refused: the server is full");
            continue;
        };
        let Some(share) = peers.take(peer.ip(), limits.per_peer) else {
            debug!(%peer, "callback connection refused: its address holds its share");
            continue;
        };
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let _held = (permit, share);
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.headers)
                .serve_connection(TokioIo::new(stream), service);
            if tokio::time::timeout(limits.lifetime, connection)
                .await
                .is_err()
            {
                debug!(%peer, "a callback connection reached its lifetime and was closed");
            }
        });
    }
}

/// Open connections by peer address.
#[derive(Clone, Default)]
struct Peers(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// One connection's place in its address's share, given back when dropped.
struct Share {
    peers: Peers,
    address: IpAddr,
}

impl Peers {
    fn take(&self, address: IpAddr, most: usize) -> Option<Share> {
        let mut open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(address).or_insert(0);
        if *count >= most {
            return None;
        }
        *count += 1;
        Some(Share {
            peers: self.clone(),
            address,
        })
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut open = self.peers.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_4_an_address_holds_at_most_its_share_and_gets_it_back() {
        let peers = Peers::default();
        let a: IpAddr = "127.0.0.2".parse().expect("address");
        let b: IpAddr = "127.0.0.1".parse().expect("address");
        let first = peers.take(a, 2).expect("first");
        let _second = peers.take(a, 2).expect("second");
        assert!(peers.take(a, 2).is_none(), "a third from the same address");
        assert!(peers.take(b, 2).is_some(), "another address is not held up");
        drop(first);
        assert!(
            peers.take(a, 2).is_some(),
            "a closed connection gives its place back"
        );
    }
}
