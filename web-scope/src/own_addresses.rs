//! This host's own addresses (§3.4: "a host naming this machine"), which a
//! public address can be too.

use std::net::IpAddr;

/// The interface addresses could not be listed.
#[derive(Debug, thiserror::Error)]
#[error("listing this host's interface addresses failed: {0}")]
pub struct OwnAddressesError(#[from] nix::Error);

/// Every address this host's interfaces hold now.
pub fn own_addresses() -> Result<Vec<IpAddr>, OwnAddressesError> {
    let mut addresses = Vec::new();
    for interface in nix::ifaddrs::getifaddrs()? {
        let Some(address) = interface.address else {
            continue;
        };
        if let Some(v4) = address.as_sockaddr_in() {
            addresses.push(IpAddr::V4(v4.ip()));
        } else if let Some(v6) = address.as_sockaddr_in6() {
            addresses.push(IpAddr::V6(v6.ip()));
        }
    }
    addresses.sort();
    addresses.dedup();
    Ok(addresses)
}
