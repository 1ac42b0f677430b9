//! What reached a listener the lab serves: each TCP connection accepted and
//! each UDP datagram received, named by the address and port it reached.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Tcp,
    Udp,
}

/// One connection or datagram that reached a listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub transport: Transport,
    /// The address it reached: the honeypot's own.
    pub addr: IpAddr,
    pub port: u16,
    /// Where it came from.
    pub from: SocketAddr,
}

#[derive(Debug, Default)]
struct Record {
    hits: Vec<Hit>,
    /// The lab's own probes (see `settle`), never counted as hits.
    sentinels: HashSet<(Transport, SocketAddr)>,
}

/// A shared, append-only record of hits.
#[derive(Debug, Clone, Default)]
pub(super) struct Hits(Arc<Mutex<Record>>);

impl Hits {
    fn record(&self) -> MutexGuard<'_, Record> {
        // Each update is one push or insert, so a poisoned lock still holds
        // whole data.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn add(&self, hit: Hit) {
        self.record().hits.push(hit);
    }

    /// Marks connections and datagrams from `from` as the lab's own.
    pub fn add_sentinel(&self, transport: Transport, from: SocketAddr) {
        self.record().sentinels.insert((transport, from));
    }

    /// Whether the sentinel from `from` has arrived.
    pub fn has_arrived(&self, transport: Transport, from: SocketAddr) -> bool {
        self.record()
            .hits
            .iter()
            .any(|h| h.transport == transport && h.from == from)
    }

    /// Every hit but the lab's own sentinels.
    pub fn all(&self) -> Vec<Hit> {
        self.since(0)
    }

    /// How many hits, sentinels included, are recorded: a mark for `since`.
    pub fn mark(&self) -> usize {
        self.record().hits.len()
    }

    /// The hits recorded after `mark`, but the lab's own sentinels.
    pub fn since(&self, mark: usize) -> Vec<Hit> {
        let record = self.record();
        record
            .hits
            .get(mark..)
            .unwrap_or_default()
            .iter()
            .filter(|h| !record.sentinels.contains(&(h.transport, h.from)))
            .cloned()
            .collect()
    }
}
