//! Mattermost's guard on the requests it makes to integrations (contract
//! §C.6): reserved and private addresses are refused unless
//! `ServiceSettings.AllowedUntrustedInternalConnections` allows them, an entry
//! that parses as a CIDR by address, any other entry by exact host name. The
//! simulator enforces it; the provisioner checks a deployment's callback
//! address against it before creating anything (§3.1).

use std::net::IpAddr;

use ipnet::IpNet;

const RESERVED: &[&str] = &[
    "0.0.0.0/8",
    "10.0.0.0/8",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "::/128",
    "::1/128",
    "fc00::/7",
    "fe80::/10",
];

/// Whether Mattermost treats `ip` as internal.
pub fn is_reserved(ip: IpAddr) -> bool {
    RESERVED
        .iter()
        .filter_map(|r| r.parse::<IpNet>().ok())
        .any(|net| net.contains(&ip))
}

/// Whether the allowlist admits a connection to `ip` for a URL naming `host`.
pub fn allowed(allowlist: &str, host: &str, ip: IpAddr) -> bool {
    allowlist
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|entry| !entry.is_empty())
        .any(|entry| match entry.parse::<IpNet>() {
            Ok(net) => net.contains(&ip),
            Err(_) => entry.eq_ignore_ascii_case(host),
        })
}

/// Whether Mattermost would connect to `ip`, reached as `host`.
pub fn may_connect(allowlist: &str, host: &str, ip: IpAddr) -> bool {
    !is_reserved(ip) || allowed(allowlist, host, ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_reads_cidrs_by_address_and_names_by_host() {
        let ip: IpAddr = "10.0.0.5".parse().expect("ip");
        assert!(allowed("10.0.0.0/8", "anything", ip));
        assert!(allowed("10.0.0.5/32", "anything", ip));
        assert!(
            !allowed("10.0.0.5", "collegium.internal", ip),
            "a bare IP is a host name"
        );
        assert!(allowed("10.0.0.5", "10.0.0.5", ip));
        assert!(allowed(
            "a.example, collegium.internal",
            "collegium.internal",
            ip
        ));
        assert!(is_reserved("127.0.0.1".parse().expect("ip")));
        assert!(is_reserved("::1".parse().expect("ip")));
        assert!(!is_reserved("93.184.216.34".parse().expect("ip")));
        assert!(may_connect(
            "",
            "example.com",
            "93.184.216.34".parse().expect("ip")
        ));
        assert!(!may_connect(
            "",
            "localhost",
            "127.0.0.1".parse().expect("ip")
        ));
    }
}
