//! The lab's addresses (§3.4, the SSRF matrix). Every address a test host or
//! the link uses is global unicast outside every special-purpose block (the
//! policy refuses documentation ranges, so they cannot stand in for the open
//! web); every honeypot address is one the matrix attempts.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The veth's name on both sides: each namespace keeps its own interface
/// names, so the two ends can share one.
pub const LINK: &str = "lab0";

/// The worker's own address on the link, which is also its only global one.
pub const WORKER_V4: Ipv4Addr = Ipv4Addr::new(45, 33, 10, 2);
/// The net namespace's end of the link, the worker's IPv4 gateway.
pub const NET_V4: Ipv4Addr = Ipv4Addr::new(45, 33, 10, 1);
pub const LINK_V4_PREFIX: u8 = 24;
pub const WORKER_V6: Ipv6Addr = Ipv6Addr::new(0x2a01, 0x4f8, 0xc0c, 0x10, 0, 0, 0, 2);
/// The net namespace's end of the link, the worker's IPv6 gateway.
pub const NET_V6: Ipv6Addr = Ipv6Addr::new(0x2a01, 0x4f8, 0xc0c, 0x10, 0, 0, 0, 1);
pub const LINK_V6_PREFIX: u8 = 64;

/// The scripted DNS server, on UDP and TCP port 53 in the net namespace.
pub const NAMESERVER: Ipv4Addr = Ipv4Addr::new(45, 33, 53, 53);

/// The `n`th test host's IPv4 address (45.33.20.n).
pub fn host_v4(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(45, 33, 20, n)
}

/// The `n`th test host's IPv6 address (2a01:4f8:c0c:20::n).
pub fn host_v6(n: u8) -> Ipv6Addr {
    Ipv6Addr::new(0x2a01, 0x4f8, 0xc0c, 0x20, 0, 0, 0, u16::from(n))
}

/// Forbidden unicast addresses the net namespace holds, each with a
/// honeypot: private ranges, CGNAT, cloud metadata, benchmarking, and the
/// unique-local metadata address.
pub const FORBIDDEN_IN_NET: [IpAddr; 7] = [
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
    IpAddr::V4(Ipv4Addr::new(172, 16, 0, 1)),
    IpAddr::V4(Ipv4Addr::new(192, 168, 0, 1)),
    IpAddr::V4(Ipv4Addr::new(100, 64, 0, 1)),
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
];

/// IPv6 forms that embed a forbidden IPv4 address, each one the matrix
/// attempts: NAT64 (loopback, metadata), local-use NAT64, 6to4, SIIT and
/// IPv4-compatible. Nothing routes them to what they embed, so each has a
/// honeypot of its own in the net namespace: a policy that let one through
/// is caught connecting, rather than left waiting on a dropped packet.
/// (`::ffff:127.0.0.1`, IPv4-mapped, the kernel sends to 127.0.0.1 itself,
/// where loopback's honeypot is.)
pub const EMBEDDING_IN_NET: [IpAddr; 6] = [
    IpAddr::V6(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0x7f00, 1)),
    IpAddr::V6(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0xa9fe, 0xa9fe)),
    IpAddr::V6(Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0xa00, 1)),
    IpAddr::V6(Ipv6Addr::new(0x2002, 0x7f00, 1, 0, 0, 0, 0, 0)),
    IpAddr::V6(Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0xa00, 1)),
    IpAddr::V6(Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0x7f00, 1)),
];

/// The link-local address on the net namespace's end of the link: reached
/// from the worker as `[fe80::1%lab0]`.
pub const LINK_LOCAL: Ipv6Addr = Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1);

/// Multicast groups every host on the link joins, and the limited
/// broadcast address, so a UDP honeypot in the net namespace receives what
/// the worker sends them. TCP cannot reach a group or a broadcast, so these
/// have UDP honeypots only.
pub const UDP_ONLY_IN_NET: [IpAddr; 3] = [
    IpAddr::V4(Ipv4Addr::new(224, 0, 0, 1)),
    IpAddr::V6(Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1)),
    IpAddr::V4(Ipv4Addr::BROADCAST),
];

/// Forbidden addresses inside the worker's own namespace: loopback and its
/// own global addresses (§3.4: this host's own addresses).
pub const FORBIDDEN_IN_WORKER: [IpAddr; 4] = [
    IpAddr::V4(Ipv4Addr::LOCALHOST),
    IpAddr::V6(Ipv6Addr::LOCALHOST),
    IpAddr::V4(WORKER_V4),
    IpAddr::V6(WORKER_V6),
];

/// The TCP ports every honeypot listens on: the web's, SSH (the matrix's
/// raw `CONNECT 127.0.0.1:22`) and a common development port.
pub const HONEYPOT_TCP_PORTS: [u16; 4] = [80, 443, 22, 8080];

/// The UDP port every honeypot listens on: STUN's, which WebRTC uses.
pub const HONEYPOT_UDP_PORT: u16 = 3478;
