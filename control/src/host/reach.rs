//! What an agent's user must never reach (§6.4, §6.1; ARCHITECTURE §4): the
//! daemon's callback port, every worker's socket, and the app root and the
//! plugins root, which it must not even traverse. The provisioner
//! converges an nftables table rejecting the agents' uids' connections to
//! the ports listed here, the shell worker tries each endpoint as each
//! agent's user at the handshake, and the daemon holds it to the result;
//! all three read this module, so they never disagree about what is closed.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::LoadedConfig;

/// The prefix of every deployment's nftables table (family `inet`).
pub const TABLE_PREFIX: &str = "collegium_";

/// One place something of the framework's listens.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "at", rename_all = "lowercase")]
pub enum Endpoint {
    /// A TCP address, in the form a client connects to.
    Tcp(SocketAddr),
    /// A Unix domain socket's path.
    Unix(PathBuf),
    /// A directory the agent's user must not traverse (§6.1: the app root,
    /// the plugins root): reached where a path walk through it succeeds.
    Directory(PathBuf),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Tcp(addr) => write!(f, "tcp {addr}"),
            Self::Unix(path) => write!(f, "unix {}", path.display()),
            Self::Directory(path) => write!(f, "directory {}", path.display()),
        }
    }
}

/// The deployment's nftables table: one per deployment, named from its
/// state directory (which holds its store, so no two deployments share
/// one), so deployments on one host never overwrite each other's rule.
pub fn table_name(state_dir: &Path) -> String {
    let absolute = std::path::absolute(state_dir).unwrap_or_else(|_| state_dir.to_path_buf());
    let digest = collegium_worker_kit::audit::digest(absolute.as_os_str().as_encoded_bytes());
    format!("{TABLE_PREFIX}{}", &digest[..16])
}

/// The TCP ports agents' users are rejected on: the callback port. Workers
/// serve Unix sockets today; one that listens on TCP adds its port here.
pub fn blocked_ports(loaded: &LoadedConfig) -> BTreeSet<u16> {
    [loaded.config.callbacks.bind.port()].into()
}

/// Every endpoint an agent's user must not reach: the callback address,
/// the shell worker's socket and each granted plugin's, then the app root
/// and the plugins root (issue 21 item 5, §6.1), each tried even where the
/// other lies beneath it, so a refusal names the one that is open.
pub fn endpoints(loaded: &LoadedConfig) -> Vec<Endpoint> {
    let mut found = vec![Endpoint::Tcp(connectable(loaded.config.callbacks.bind))];
    let namespaces = std::iter::once("shell".to_string())
        .chain(crate::workers::plugins::granted_plugins(loaded));
    found.extend(
        namespaces.map(|ns| Endpoint::Unix(crate::workers::framework::socket(loaded, &ns))),
    );
    let deployment = &loaded.config.deployment;
    found.push(Endpoint::Directory(deployment.app_root.clone()));
    if deployment.plugins_root != deployment.app_root {
        found.push(Endpoint::Directory(deployment.plugins_root.clone()));
    }
    found
}

/// The address a client reaches a listener at: an unspecified bind
/// address listens on loopback too, and the rule covers every local
/// address alike.
fn connectable(bind: SocketAddr) -> SocketAddr {
    let ip = match bind.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, bind.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_4_an_unspecified_bind_address_is_probed_on_loopback() {
        assert_eq!(
            connectable("0.0.0.0:8071".parse().expect("addr")),
            "127.0.0.1:8071".parse::<SocketAddr>().expect("addr")
        );
        assert_eq!(
            connectable("[::]:8071".parse().expect("addr")),
            "[::1]:8071".parse::<SocketAddr>().expect("addr")
        );
        assert_eq!(
            connectable("10.0.0.5:8071".parse().expect("addr")),
            "10.0.0.5:8071".parse::<SocketAddr>().expect("addr")
        );
    }

    #[test]
    fn s6_4_each_deployment_gets_its_own_table_in_nfts_alphabet() {
        let one = table_name(Path::new("/var/lib/collegium"));
        let two = table_name(Path::new("/var/lib/collegium-two"));
        assert_ne!(one, two);
        assert_eq!(one, table_name(Path::new("/var/lib/collegium")));
        assert!(one.starts_with(TABLE_PREFIX) && one.len() == TABLE_PREFIX.len() + 16);
        assert!(one.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    }

    #[test]
    fn s6_4_an_endpoint_reads_as_its_kind_and_address() {
        assert_eq!(
            Endpoint::Tcp("127.0.0.1:8071".parse().expect("addr")).to_string(),
            "tcp 127.0.0.1:8071"
        );
        assert_eq!(
            Endpoint::Unix(PathBuf::from("/run/collegium/shell/toolset.sock")).to_string(),
            "unix /run/collegium/shell/toolset.sock"
        );
        assert_eq!(
            Endpoint::Directory(PathBuf::from("/usr/lib/collegium")).to_string(),
            "directory /usr/lib/collegium"
        );
    }
}
