//! A test host as the test sees it: where it listens and what it served.

use std::net::SocketAddr;

use super::hits::{Hit, Hits};
use super::site::{Requests, Served};

/// A test host: a scripted site on global addresses in the net namespace,
/// port 80, named in the lab's DNS.
#[derive(Debug, Clone)]
pub struct TestHost {
    /// Its DNS name, when it has one.
    pub name: Option<String>,
    /// Where it listens.
    pub addrs: Vec<SocketAddr>,
    pub(super) requests: Requests,
    pub(super) connections: Hits,
}

impl TestHost {
    /// Every request it answered, in order.
    pub fn requests(&self) -> Vec<Served> {
        self.requests.all()
    }

    /// Every connection it accepted.
    pub fn connections(&self) -> Vec<Hit> {
        self.connections.all()
    }

    /// `http://NAME/path`, or by its first address when it has no name.
    pub fn url(&self, path: &str) -> String {
        match (&self.name, self.addrs.first()) {
            (Some(name), _) => format!("http://{name}{path}"),
            (None, Some(addr)) => format!("http://{addr}{path}"),
            (None, None) => format!("http://unbound.invalid{path}"),
        }
    }
}
