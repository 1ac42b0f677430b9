//! The browser worker's unit drop-in that matches a configuration (issue 21
//! item 1, `docs/deployment.md`). `collegium config check` prints it where an
//! agent holds a `web::*` tool: the worker's flags equal to the `[web]`
//! table (the daemon refuses a worker whose policy differs, §3.4), and the
//! kernel's address rules under web-scope: never link-local, never the
//! private ranges unless the own-network declaration is on, loopback (the
//! egress proxy, the DevTools bridge) and the host's resolvers allowed.

use std::fmt::Write as _;
use std::net::IpAddr;

use super::model::Web;

/// Where the drop-in goes.
pub const PATH: &str = "/etc/systemd/system/collegium-worker-browser.service.d/collegium.conf";

/// Link-local, IPv4 and IPv6: cloud metadata services live there.
const LINK_LOCAL: &[&str] = &["169.254.0.0/16", "fe80::/10"];
/// The private ranges: RFC 1918, shared address space (CGNAT), unique local.
const PRIVATE: &[&str] = &[
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",
    "fc00::/7",
];

/// The drop-in for `web` (the defaults where the table is absent) with
/// `resolvers` allowed through.
pub fn render(web: &Web, resolvers: &[IpAddr]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {PATH}");
    out.push_str("[Service]\n");
    // An empty assignment first: a drop-in's ExecStart= and address lists
    // otherwise add to the unit's instead of replacing them.
    out.push_str("ExecStart=\n");
    let mut flags = format!(
        "--allow-uid \"$(id -u collegium)\" --live-sessions {}",
        web.live_sessions.unwrap_or(4)
    );
    if web.own_network_browsable {
        flags.push_str(" --own-network-browsable");
    }
    for host in &web.closed_hosts {
        let _ = write!(flags, " --closed-host {host}");
    }
    let _ = writeln!(
        out,
        "ExecStart=/usr/bin/sh -c 'exec /usr/lib/collegium/collegium-worker-browser serve {flags}'"
    );
    let mut denied: Vec<&str> = LINK_LOCAL.to_vec();
    if !web.own_network_browsable {
        denied.extend_from_slice(PRIVATE);
    }
    out.push_str("IPAddressDeny=\n");
    let _ = writeln!(out, "IPAddressDeny={}", denied.join(" "));
    let mut allowed = vec!["localhost".to_string()];
    allowed.extend(resolvers.iter().map(IpAddr::to_string));
    out.push_str("IPAddressAllow=\n");
    let _ = writeln!(out, "IPAddressAllow={}", allowed.join(" "));
    out
}

/// The `nameserver` addresses of a resolv.conf's text, in order.
pub fn resolvers(resolv_conf: &str) -> Vec<IpAddr> {
    resolv_conf
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("nameserver"))
                .then(|| words.next())
                .flatten()
                // A scoped IPv6 address (fe80::1%eth0) is allowed by its address.
                .and_then(|address| address.split('%').next()?.parse().ok())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_4_the_drop_in_keeps_private_ranges_out_unless_the_own_network_is_declared() {
        let closed = render(&Web::default(), &[]);
        assert!(closed.contains("IPAddressDeny=169.254.0.0/16 fe80::/10 10.0.0.0/8"));
        assert!(closed.contains("IPAddressAllow=localhost\n"));
        assert!(!closed.contains("--own-network-browsable"));
        let open = render(
            &Web {
                own_network_browsable: true,
                ..Web::default()
            },
            &[],
        );
        assert!(open.contains("IPAddressDeny=169.254.0.0/16 fe80::/10\n"));
        assert!(open.contains(" --own-network-browsable'"));
    }

    #[test]
    fn s3_4_the_drop_in_carries_the_web_table_s_flags_and_allows_the_resolvers() {
        let web = Web {
            own_network_browsable: false,
            closed_hosts: vec!["intranet.example".into(), "wiki.example".into()],
            live_sessions: Some(2),
        };
        let text = render(
            &web,
            &resolvers("# local\nnameserver 10.0.0.53\nnameserver fe80::1%eth0\nsearch example\n"),
        );
        assert!(text.contains(
            "--live-sessions 2 --closed-host intranet.example --closed-host wiki.example'"
        ));
        assert!(text.contains("IPAddressAllow=localhost 10.0.0.53 fe80::1\n"));
        // Each list is reset before it is set, so the drop-in replaces the
        // unit's rather than adding to it.
        for key in ["ExecStart", "IPAddressDeny", "IPAddressAllow"] {
            assert!(text.contains(&format!("\n{key}=\n{key}=")), "{key}");
        }
    }
}
