//! The check that the worker namespace has no route to the host's own
//! network (§3.4, the SSRF matrix): its only interfaces are loopback and the
//! link to the lab's net namespace, whose only interfaces are loopback and
//! that link's other end; and nothing at any of the host's addresses
//! answers from inside.

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use super::enter::within;
use super::ip::ip;
use super::plan::LINK;
use super::{Lab, LabError};

/// What the check saw.
#[derive(Debug, Clone)]
pub struct Isolation {
    pub worker_interfaces: BTreeSet<String>,
    pub net_interfaces: BTreeSet<String>,
    /// The host's own addresses, each tried from inside and unreachable.
    pub host_addrs_unreachable: Vec<IpAddr>,
}

/// How long a connect to a host address may wait for an answer: the net
/// namespace drops what it does not own, so a probe ends here.
const PROBE: Duration = Duration::from_secs(1);

/// The port probed at each host address: SSH's, which a host most often
/// serves.
const PROBE_PORT: u16 = 22;

fn interfaces(namespace: &Path) -> Result<BTreeSet<String>, LabError> {
    within(namespace, || {
        nix::net::if_::if_nameindex().map(|list| {
            list.iter()
                .map(|i| i.name().to_string_lossy().into_owned())
                .collect()
        })
    })?
    .map_err(|errno| LabError::NotIsolated {
        why: format!("the interfaces could not be listed: {}", errno.desc()),
    })
}

/// The host's own addresses: those of the test process's network namespace
/// (its main thread's: a thread of it may be inside the lab), the network
/// the lab stands apart from.
fn host_addrs() -> Result<Vec<IpAddr>, LabError> {
    let mut found: Vec<IpAddr> = within(Path::new("/proc/self/ns/net"), || {
        nix::ifaddrs::getifaddrs().map(|addrs| {
            addrs
                .filter_map(|a| a.address)
                .filter_map(|a| {
                    a.as_sockaddr_in()
                        .map(|v4| IpAddr::V4(v4.ip()))
                        .or_else(|| a.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
                })
                .collect()
        })
    })?
    .map_err(|errno| LabError::NotIsolated {
        why: format!("the host's addresses could not be listed: {}", errno.desc()),
    })?;
    found.sort();
    found.dedup();
    Ok(found)
}

pub(super) fn check(lab: &Lab) -> Result<Isolation, LabError> {
    let worker_interfaces = interfaces(&lab.worker_handle())?;
    let net_interfaces = interfaces(&lab.net_handle())?;
    let expected: BTreeSet<String> = ["lo", LINK].iter().map(|s| s.to_string()).collect();
    for (namespace, found) in [("worker", &worker_interfaces), ("net", &net_interfaces)] {
        if *found != expected {
            return Err(LabError::NotIsolated {
                why: format!(
                    "the {namespace} namespace has interfaces {found:?}, not lo and {LINK}"
                ),
            });
        }
    }
    let link = ip(&["-n", lab.worker_ns(), "-o", "link", "show", LINK])?;
    if !link.contains(&format!("link-netns {}", lab.net_ns())) {
        return Err(LabError::NotIsolated {
            why: format!("the worker's {LINK} does not lead to the lab's net namespace: {link}"),
        });
    }
    let lab_addrs = lab.addresses();
    let probed: Vec<IpAddr> = host_addrs()?
        .into_iter()
        .filter(|a| !a.is_loopback() && !is_link_local(a) && !lab_addrs.contains(a))
        .collect();
    let reached = within(&lab.worker_handle(), || {
        probed
            .iter()
            .copied()
            .filter(|addr| {
                TcpStream::connect_timeout(&SocketAddr::new(*addr, PROBE_PORT), PROBE).is_ok()
            })
            .collect::<Vec<_>>()
    })?;
    if !reached.is_empty() {
        return Err(LabError::NotIsolated {
            why: format!(
                "the host's addresses {reached:?} answered from inside the worker namespace"
            ),
        });
    }
    Ok(Isolation {
        worker_interfaces,
        net_interfaces,
        host_addrs_unreachable: probed,
    })
}

/// A link-local address names an interface of the namespace it is used in,
/// never the host's.
fn is_link_local(addr: &IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}
