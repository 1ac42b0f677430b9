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
    /// Which of `hits` are the lab's own probes (see `settle`), never
    /// counted. Kept by index, not by source address: the kernel may give
    /// a sentinel the same source port as an attempt's connection to
    /// another honeypot, and that attempt must still count.
    sentinels: HashSet<usize>,
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

    /// Claims the lab's own sentinel, sent from `from` to `to`, as not a
    /// hit, if it has arrived. The latest matching hit is the sentinel: a
    /// honeypot serves its queue in order and the sentinel was sent last.
    pub fn claim_sentinel(&self, transport: Transport, from: SocketAddr, to: SocketAddr) -> bool {
        let mut record = self.record();
        let found = record.hits.iter().enumerate().rev().find(|(at, h)| {
            h.transport == transport
                && h.from == from
                && h.addr == to.ip()
                && h.port == to.port()
                && !record.sentinels.contains(at)
        });
        let Some((at, _)) = found else {
            return false;
        };
        record.sentinels.insert(at);
        true
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
            .iter()
            .enumerate()
            .skip(mark)
            .filter(|(at, _)| !record.sentinels.contains(at))
            .map(|(_, h)| h.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(from: &str, to: &str) -> Hit {
        let to: SocketAddr = to.parse().expect("addr");
        Hit {
            transport: Transport::Tcp,
            addr: to.ip(),
            port: to.port(),
            from: from.parse().expect("addr"),
        }
    }

    /// The kernel may give two connections to different honeypots one
    /// source port; the sentinel's must not hide the attempt's (§3.4, the
    /// SSRF matrix counts every hit).
    #[test]
    fn s3_4_a_sentinel_sharing_an_attempt_s_source_port_hides_only_itself() {
        let hits = Hits::default();
        let from = "[2a01:4f8:c0c:10::2]:40000";
        hits.add(hit(from, "[64:ff9b::a9fe:a9fe]:80"));
        hits.add(hit(from, "10.0.0.1:80"));
        let claimed = hits.claim_sentinel(
            Transport::Tcp,
            from.parse().expect("addr"),
            "10.0.0.1:80".parse().expect("addr"),
        );
        assert!(claimed);
        assert_eq!(hits.all(), vec![hit(from, "[64:ff9b::a9fe:a9fe]:80")]);
    }

    #[test]
    fn s3_4_a_sentinel_not_yet_arrived_is_not_claimed() {
        let hits = Hits::default();
        hits.add(hit("10.0.0.9:5000", "10.0.0.1:80"));
        let claimed = hits.claim_sentinel(
            Transport::Tcp,
            "10.0.0.9:5001".parse().expect("addr"),
            "10.0.0.1:80".parse().expect("addr"),
        );
        assert!(!claimed);
        assert_eq!(hits.all().len(), 1);
    }
}
