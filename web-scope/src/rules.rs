//! The table of addresses that are not the public internet (§3.4 "only on the
//! public internet"), each range under a named rule, from the IANA IPv4 and
//! IPv6 special-purpose address registries.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

/// Why an address is not the public internet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressRule {
    /// 0.0.0.0/8: "this network"; connecting to it reaches this machine.
    ThisNetwork,
    /// ::/128.
    Unspecified,
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// RFC 1918: 10/8, 172.16/12, 192.168/16.
    Private,
    /// 100.64.0.0/10: carrier-grade NAT, and the range VPN overlays use.
    SharedAddressSpace,
    /// fc00::/7.
    UniqueLocal,
    /// 64:ff9b:1::/48, a translator inside the deployment's own network.
    LocalUseNat64,
    /// 169.254.0.0/16, fe80::/10.
    LinkLocal,
    /// A cloud provider's instance metadata service; refused in both modes.
    CloudMetadata,
    /// fec0::/10, deprecated site-local.
    SiteLocal,
    /// 192.0.0.0/24, 2001::/23 outside Teredo.
    IetfProtocolAssignment,
    /// 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20.
    Documentation,
    /// 198.18.0.0/15.
    Benchmarking,
    /// 192.88.99.0/24, the withdrawn 6to4 relay anycast.
    Relay6to4Anycast,
    /// 224.0.0.0/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// 240.0.0.0/4, and IPv6 outside 2000::/3 that no other rule names.
    Reserved,
    /// 100::/64.
    DiscardOnly,
    /// 5f00::/16, segment-routing identifiers.
    SegmentRouting,
    /// An address one of this host's interfaces holds.
    ThisHost,
}

impl AddressRule {
    /// Whether a deployment that declares its own network browsable opens
    /// this rule (§3.4: the declaration lifts the private-address refusal).
    /// Link-local and metadata stay refused: see docs/spec-findings.md.
    pub fn lifted_by_own_network(self) -> bool {
        matches!(
            self,
            Self::Loopback
                | Self::Private
                | Self::SharedAddressSpace
                | Self::UniqueLocal
                | Self::LocalUseNat64
                | Self::ThisHost
        )
    }

    /// The rule in the words a refusal uses.
    pub fn description(self) -> &'static str {
        match self {
            Self::ThisNetwork => "a \"this network\" address, which reaches this machine",
            Self::Unspecified => "the unspecified address, which reaches this machine",
            Self::Loopback => "a loopback address (this machine)",
            Self::Private => "a private address (this deployment's own network)",
            Self::SharedAddressSpace => {
                "a shared address (carrier-grade NAT or a VPN: a private network)"
            }
            Self::UniqueLocal => "a unique local address (this deployment's own network)",
            Self::LocalUseNat64 => {
                "a local-use NAT64 address (a translator in this deployment's own network)"
            }
            Self::LinkLocal => "a link-local address (the machines on this machine's own link)",
            Self::CloudMetadata => "a cloud metadata address (the instance's credential service)",
            Self::SiteLocal => "a site-local address (a private network)",
            Self::IetfProtocolAssignment => "an address reserved for IETF protocols",
            Self::Documentation => "a documentation address, which no real host holds",
            Self::Benchmarking => "a benchmarking address (a test network)",
            Self::Relay6to4Anycast => "a withdrawn 6to4 relay address",
            Self::Multicast => "a multicast address",
            Self::Broadcast => "the broadcast address",
            Self::Reserved => "a reserved address, not part of the public internet",
            Self::DiscardOnly => "a discard-only address",
            Self::SegmentRouting => "a segment-routing address (a provider's own network)",
            Self::ThisHost => "an address of this machine",
        }
    }
}

/// How an IPv6 address carries an IPv4 one, which is judged in its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Embedding {
    /// ::ffff:0:0/96.
    Mapped,
    /// ::/96 (deprecated IPv4-compatible).
    Compatible,
    /// ::ffff:0:0:0/96 (SIIT).
    Translated,
    /// 64:ff9b::/96.
    Nat64,
    /// 64:ff9b:1::/48.
    LocalUseNat64,
    /// 2002::/16.
    SixToFour,
    /// 2001::/32, the server half.
    TeredoServer,
    /// 2001::/32, the client half (stored inverted).
    TeredoClient,
}

impl fmt::Display for Embedding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Mapped => "IPv4-mapped",
            Self::Compatible => "IPv4-compatible",
            Self::Translated => "IPv4-translated",
            Self::Nat64 => "NAT64",
            Self::LocalUseNat64 => "local-use NAT64",
            Self::SixToFour => "6to4",
            Self::TeredoServer => "Teredo server",
            Self::TeredoClient => "Teredo client",
        })
    }
}

/// An address the table forbids, with the rule and the range that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forbidden {
    /// The address asked for or answered.
    pub address: IpAddr,
    /// The IPv4 address judged in its place, when it carries one.
    pub embedded: Option<(Embedding, Ipv4Addr)>,
    /// The rule that forbids it.
    pub rule: AddressRule,
    /// The range the rule matched.
    pub range: IpNet,
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), len)
}

#[allow(clippy::too_many_arguments)] // the eight groups of an IPv6 address
const fn v6(a: u16, b: u16, c: u16, d: u16, e: u16, f: u16, g: u16, h: u16, len: u8) -> Ipv6Net {
    Ipv6Net::new_assert(Ipv6Addr::new(a, b, c, d, e, f, g, h), len)
}

/// Most specific first: the first match names the rule.
const IPV4_TABLE: &[(Ipv4Net, AddressRule)] = &[
    (v4(169, 254, 169, 254, 32), AddressRule::CloudMetadata),
    // Alibaba Cloud's metadata service, inside the shared range the
    // own-network declaration lifts.
    (v4(100, 100, 100, 200, 32), AddressRule::CloudMetadata),
    (v4(255, 255, 255, 255, 32), AddressRule::Broadcast),
    (v4(0, 0, 0, 0, 8), AddressRule::ThisNetwork),
    (v4(10, 0, 0, 0, 8), AddressRule::Private),
    (v4(100, 64, 0, 0, 10), AddressRule::SharedAddressSpace),
    (v4(127, 0, 0, 0, 8), AddressRule::Loopback),
    (v4(169, 254, 0, 0, 16), AddressRule::LinkLocal),
    (v4(172, 16, 0, 0, 12), AddressRule::Private),
    (v4(192, 0, 0, 0, 24), AddressRule::IetfProtocolAssignment),
    (v4(192, 0, 2, 0, 24), AddressRule::Documentation),
    (v4(192, 88, 99, 0, 24), AddressRule::Relay6to4Anycast),
    (v4(192, 168, 0, 0, 16), AddressRule::Private),
    (v4(198, 18, 0, 0, 15), AddressRule::Benchmarking),
    (v4(198, 51, 100, 0, 24), AddressRule::Documentation),
    (v4(203, 0, 113, 0, 24), AddressRule::Documentation),
    (v4(224, 0, 0, 0, 4), AddressRule::Multicast),
    (v4(240, 0, 0, 0, 4), AddressRule::Reserved),
];

/// Judged after the embeddings, so ::/96 and ::ffff:0:0/96 never reach it
/// except for :: and ::1, listed first.
const IPV6_TABLE: &[(Ipv6Net, AddressRule)] = &[
    (v6(0, 0, 0, 0, 0, 0, 0, 0, 128), AddressRule::Unspecified),
    (v6(0, 0, 0, 0, 0, 0, 0, 1, 128), AddressRule::Loopback),
    // AWS's IPv6 metadata service, inside fc00::/7 which the declaration lifts.
    (
        v6(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254, 128),
        AddressRule::CloudMetadata,
    ),
    (v6(0x100, 0, 0, 0, 0, 0, 0, 0, 64), AddressRule::DiscardOnly),
    (
        v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0, 32),
        AddressRule::Documentation,
    ),
    (
        v6(0x2001, 0x2, 0, 0, 0, 0, 0, 0, 48),
        AddressRule::Benchmarking,
    ),
    (
        v6(0x2001, 0, 0, 0, 0, 0, 0, 0, 23),
        AddressRule::IetfProtocolAssignment,
    ),
    (
        v6(0x3fff, 0, 0, 0, 0, 0, 0, 0, 20),
        AddressRule::Documentation,
    ),
    (
        v6(0x5f00, 0, 0, 0, 0, 0, 0, 0, 16),
        AddressRule::SegmentRouting,
    ),
    (v6(0xfc00, 0, 0, 0, 0, 0, 0, 0, 7), AddressRule::UniqueLocal),
    (v6(0xfe80, 0, 0, 0, 0, 0, 0, 0, 10), AddressRule::LinkLocal),
    (v6(0xfec0, 0, 0, 0, 0, 0, 0, 0, 10), AddressRule::SiteLocal),
    (v6(0xff00, 0, 0, 0, 0, 0, 0, 0, 8), AddressRule::Multicast),
];

/// Global unicast: IPv6 outside it that no rule above names is reserved.
const IPV6_GLOBAL_UNICAST: Ipv6Net = v6(0x2000, 0, 0, 0, 0, 0, 0, 0, 3);
const NAT64: Ipv6Net = v6(0x64, 0xff9b, 0, 0, 0, 0, 0, 0, 96);
const LOCAL_USE_NAT64: Ipv6Net = v6(0x64, 0xff9b, 1, 0, 0, 0, 0, 0, 48);
const SIX_TO_FOUR: Ipv6Net = v6(0x2002, 0, 0, 0, 0, 0, 0, 0, 16);
const TEREDO: Ipv6Net = v6(0x2001, 0, 0, 0, 0, 0, 0, 0, 32);

/// Judges one address against the table and this host's own addresses,
/// whatever the deployment declared; the caller applies the declaration.
pub fn classify(address: IpAddr, own: &[IpAddr]) -> Option<Forbidden> {
    match address {
        IpAddr::V4(a) => classify_v4(a, own).map(|(rule, range)| Forbidden {
            address,
            embedded: None,
            rule,
            range,
        }),
        IpAddr::V6(a) => classify_v6(a, own),
    }
}

fn classify_v4(a: Ipv4Addr, own: &[IpAddr]) -> Option<(AddressRule, IpNet)> {
    if let Some((net, rule)) = IPV4_TABLE.iter().find(|(net, _)| net.contains(&a)) {
        return Some((*rule, IpNet::V4(*net)));
    }
    own.contains(&IpAddr::V4(a))
        .then(|| (AddressRule::ThisHost, IpNet::V4(Ipv4Net::from(a))))
}

fn classify_v6(a: Ipv6Addr, own: &[IpAddr]) -> Option<Forbidden> {
    let address = IpAddr::V6(a);
    let carried = embedded_v4(a);
    for (embedding, inner) in &carried {
        if let Some((rule, range)) = classify_v4(*inner, own) {
            return Some(Forbidden {
                address,
                embedded: Some((*embedding, *inner)),
                rule,
                range,
            });
        }
    }
    if let Some((embedding, inner)) = carried.first() {
        if *embedding == Embedding::LocalUseNat64 {
            return Some(Forbidden {
                address,
                embedded: Some((*embedding, *inner)),
                rule: AddressRule::LocalUseNat64,
                range: IpNet::V6(LOCAL_USE_NAT64),
            });
        }
        // The public IPv4 address it carries is what it reaches.
        return None;
    }
    if let Some((net, rule)) = IPV6_TABLE.iter().find(|(net, _)| net.contains(&a)) {
        return Some(Forbidden {
            address,
            embedded: None,
            rule: *rule,
            range: IpNet::V6(*net),
        });
    }
    if own.contains(&address) {
        return Some(Forbidden {
            address,
            embedded: None,
            rule: AddressRule::ThisHost,
            range: IpNet::V6(Ipv6Net::from(a)),
        });
    }
    if !IPV6_GLOBAL_UNICAST.contains(&a) {
        return Some(Forbidden {
            address,
            embedded: None,
            rule: AddressRule::Reserved,
            range: IpNet::V6(v6(0, 0, 0, 0, 0, 0, 0, 0, 0)),
        });
    }
    None
}

/// The IPv4 addresses an IPv6 address carries, each judged in its place.
fn embedded_v4(a: Ipv6Addr) -> Vec<(Embedding, Ipv4Addr)> {
    let s = a.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let prefix96 = |p: [u16; 6]| s[..6] == p;
    if prefix96([0, 0, 0, 0, 0, 0xffff]) {
        return vec![(Embedding::Mapped, low)];
    }
    if prefix96([0, 0, 0, 0, 0xffff, 0]) {
        return vec![(Embedding::Translated, low)];
    }
    // :: and ::1 are their own rules, not 0.0.0.0 and 0.0.0.1.
    if prefix96([0, 0, 0, 0, 0, 0]) && u32::from(low) > 1 {
        return vec![(Embedding::Compatible, low)];
    }
    if NAT64.contains(&a) {
        return vec![(Embedding::Nat64, low)];
    }
    if LOCAL_USE_NAT64.contains(&a) {
        // RFC 8215 lets the operator embed at any RFC 6052 length; the
        // /96 position is judged, and the range itself is the own network.
        return vec![(Embedding::LocalUseNat64, low)];
    }
    if SIX_TO_FOUR.contains(&a) {
        let inner = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return vec![(Embedding::SixToFour, inner)];
    }
    if TEREDO.contains(&a) {
        let server = Ipv4Addr::new((s[2] >> 8) as u8, s[2] as u8, (s[3] >> 8) as u8, s[3] as u8);
        let client = Ipv4Addr::from(!u32::from(low));
        return vec![
            (Embedding::TeredoServer, server),
            (Embedding::TeredoClient, client),
        ];
    }
    Vec::new()
}
