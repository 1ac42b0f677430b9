//! Building the lab's two namespaces and the link between them (§3.4, the
//! SSRF matrix): addresses, routes, and the worker's resolver file.

use std::net::IpAddr;

use super::ip::ip;
use super::plan::{
    EMBEDDING_IN_NET, FORBIDDEN_IN_NET, LINK, LINK_LOCAL, LINK_V4_PREFIX, LINK_V6_PREFIX,
    NAMESERVER, NET_V4, NET_V6, WORKER_V4, WORKER_V6,
};
use super::{Lab, LabError, names};

impl Lab {
    pub(super) fn build_namespaces(&self) -> Result<(), LabError> {
        let (w, n) = (self.names.worker.as_str(), self.names.net.as_str());
        ip(&["netns", "add", w])?;
        ip(&["netns", "add", n])?;
        // Both ends are made in their namespaces: the host's never holds
        // either, even for a moment.
        ip(&[
            "link", "add", "name", LINK, "netns", w, "type", "veth", "peer", "name", LINK, "netns",
            n,
        ])?;
        let worker_v4 = format!("{WORKER_V4}/{LINK_V4_PREFIX}");
        let worker_v6 = format!("{WORKER_V6}/{LINK_V6_PREFIX}");
        let net_v4 = format!("{NET_V4}/{LINK_V4_PREFIX}");
        let net_v6 = format!("{NET_V6}/{LINK_V6_PREFIX}");
        let link_local = format!("{LINK_LOCAL}/64");
        let commands: [&[&str]; 9] = [
            &["-n", w, "link", "set", "lo", "up"],
            &["-n", n, "link", "set", "lo", "up"],
            &["-n", w, "addr", "add", &worker_v4, "dev", LINK],
            // nodad: an address waiting out duplicate detection cannot be
            // bound, and nothing else is on the link to duplicate it.
            &["-n", w, "addr", "add", &worker_v6, "dev", LINK, "nodad"],
            &["-n", n, "addr", "add", &net_v4, "dev", LINK],
            &["-n", n, "addr", "add", &net_v6, "dev", LINK, "nodad"],
            &["-n", n, "addr", "add", &link_local, "dev", LINK, "nodad"],
            &["-n", w, "link", "set", LINK, "up"],
            &["-n", n, "link", "set", LINK, "up"],
        ];
        for args in commands {
            ip(args)?;
        }
        self.add_to_net_loopback(IpAddr::V4(NAMESERVER))?;
        for addr in FORBIDDEN_IN_NET.into_iter().chain(EMBEDDING_IN_NET) {
            self.add_to_net_loopback(addr)?;
        }
        // Everything not the worker's own goes over the link: the forbidden
        // ranges reach their honeypots, the test hosts their servers.
        ip(&[
            "-n",
            w,
            "route",
            "add",
            "default",
            "via",
            &NET_V4.to_string(),
        ])?;
        ip(&[
            "-n",
            w,
            "-6",
            "route",
            "add",
            "default",
            "via",
            &NET_V6.to_string(),
        ])?;
        Ok(())
    }

    pub(super) fn add_to_net_loopback(&self, addr: IpAddr) -> Result<(), LabError> {
        let n = self.names.net.as_str();
        match addr {
            IpAddr::V4(_) => ip(&["-n", n, "addr", "add", &format!("{addr}/32"), "dev", "lo"]),
            IpAddr::V6(_) => ip(&[
                "-n",
                n,
                "addr",
                "add",
                &format!("{addr}/128"),
                "dev",
                "lo",
                "nodad",
            ]),
        }
        .map(drop)
    }

    /// `ip netns exec` mounts this over `/etc/resolv.conf`, so a worker run
    /// there resolves through the lab's DNS server.
    pub(super) fn write_resolv_conf(&self) -> Result<(), LabError> {
        let dir = names::etc(&self.names.worker);
        let path = dir.join("resolv.conf");
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(&path, format!("nameserver {NAMESERVER}\n"))
        };
        write().map_err(|source| LabError::Write {
            path: path.clone(),
            message: source.to_string(),
        })
    }
}
