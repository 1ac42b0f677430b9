//! URL parsing and the address classifier (§3.4, web-scope). The property
//! the issue names: nothing forbidden is ever judged global. "Forbidden" is
//! read here from an oracle independent of the classifier's table: the
//! standard library's own address predicates, this host's addresses, and
//! the IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4,
//! Teredo) judged by the same predicates. Then through the scope: a URL or
//! a CONNECT authority judged in scope names a literal address only if the
//! classifier passes it (or, where the own network is declared, only under
//! a rule that declaration lifts), never `localhost` unless declared, and
//! never a closed host.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use collegium_web_scope::{AddressRule, Scope, ScopeSettings, TargetHost, classify};

use crate::split;

fn own() -> Vec<IpAddr> {
    vec![
        IpAddr::V4(Ipv4Addr::new(8, 8, 4, 4)),
        IpAddr::V6(Ipv6Addr::new(0x2001, 0x4860, 0, 0, 0, 0, 0, 1)),
    ]
}

const CLOSED: &[&str] = &["closed.example", "bücher.example", "intranet"];

fn v4_forbidden(a: Ipv4Addr) -> bool {
    let [first, second, third, _] = a.octets();
    a.is_unspecified()
        || first == 0
        || a.is_loopback()
        || a.is_private()
        || a.is_link_local()
        || a.is_broadcast()
        || a.is_documentation()
        || a.is_multicast()
        || (first == 100 && (64..128).contains(&second))
        || (first == 192 && second == 0 && third == 0)
        || (first == 198 && (second == 18 || second == 19))
        || first >= 240
        || own().contains(&IpAddr::V4(a))
}

/// The IPv4 addresses an IPv6 address carries, read from the RFCs' layouts.
fn carried(a: Ipv6Addr) -> Vec<Ipv4Addr> {
    let s = a.segments();
    let o = a.octets();
    let low = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    let mut out = Vec::new();
    if let Some(mapped) = a.to_ipv4_mapped() {
        out.push(mapped);
    }
    if s[..6] == [0, 0, 0, 0, 0, 0] && u32::from(low) > 1 {
        out.push(low);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        out.push(low);
    }
    if s[0] == 0x2002 {
        out.push(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    if s[0] == 0x2001 && s[1] == 0 {
        out.push(Ipv4Addr::new(o[4], o[5], o[6], o[7]));
        out.push(Ipv4Addr::from(!u32::from(low)));
    }
    out
}

fn v6_forbidden(a: Ipv6Addr) -> bool {
    a.is_unspecified()
        || a.is_loopback()
        || a.is_multicast()
        || a.is_unique_local()
        || a.is_unicast_link_local()
        || (a.segments()[0] == 0x2001 && a.segments()[1] == 0xdb8)
        || own().contains(&IpAddr::V6(a))
        || carried(a).into_iter().any(v4_forbidden)
}

fn forbidden(a: IpAddr) -> bool {
    match a {
        IpAddr::V4(a) => v4_forbidden(a),
        IpAddr::V6(a) => v6_forbidden(a),
    }
}

fn classify_property(address: IpAddr) {
    let judged = classify(address, &own());
    if judged.is_none() {
        assert!(
            !forbidden(address),
            "{address} is forbidden and was judged global"
        );
    }
}

pub(crate) fn scope(own_network_browsable: bool) -> Scope {
    Scope::new(
        ScopeSettings {
            own_network_browsable,
            closed_hosts: CLOSED.iter().map(|h| h.to_string()).collect(),
        },
        own(),
    )
    .expect("literal closed hosts")
}

pub(crate) fn judged_in(scope: &Scope, declared: bool, host: &TargetHost, what: &str) {
    match host {
        TargetHost::Address(a) => {
            match classify(*a, &own()) {
                None => {}
                Some(f) => assert!(
                    declared && f.rule.lifted_by_own_network(),
                    "{what}: {a} passed the scope though {:?} forbids it",
                    f.rule
                ),
            }
            if !declared {
                assert!(!forbidden(*a), "{what}: forbidden {a} passed the scope");
            }
        }
        TargetHost::ThisMachine(name) => {
            assert!(declared, "{what}: {name} reaches this machine, undeclared");
        }
        TargetHost::Name(name) => {
            let bare = name.strip_suffix('.').unwrap_or(name);
            assert!(
                !scope.closed_hosts().iter().any(|c| c.closes(bare)),
                "{what}: the closed host {name} passed"
            );
            assert!(
                bare.parse::<IpAddr>().is_err(),
                "{what}: the address {name} was taken for a name"
            );
        }
    }
}

pub fn run(data: &[u8]) {
    if data.len() >= 16 {
        let mut six = [0u8; 16];
        six.copy_from_slice(&data[..16]);
        classify_property(IpAddr::V6(Ipv6Addr::from(six)));
    }
    if data.len() >= 4 {
        classify_property(IpAddr::V4(Ipv4Addr::new(
            data[0], data[1], data[2], data[3],
        )));
    }
    let text = split::text(data);
    for declared in [false, true] {
        let scope = scope(declared);
        if let Ok(target) = scope.judge_url(&text) {
            judged_in(&scope, declared, &target.host, &text);
            assert!(matches!(target.url.scheme(), "http" | "https"));
        }
        if let Ok(target) = scope.judge_authority(&text) {
            judged_in(&scope, declared, &target.host, &text);
        }
    }
    let _ = AddressRule::Private.description();
}
