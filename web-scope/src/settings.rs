//! The deployment's two scope settings (§3.4), as the daemon's `[web]`
//! configuration holds them, and the closed hosts normalised once.

use std::fmt;

use url::Host;

/// The operator's scope settings, mirroring the daemon's `[web]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeSettings {
    /// Lift the private-address refusal for every agent and request.
    pub own_network_browsable: bool,
    /// Hosts closed to every agent, each with every subdomain beneath it.
    pub closed_hosts: Vec<String>,
}

/// A closed-hosts entry that names no host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// Not a host name at all.
    #[error("closed host {entry:?} is not a host name: {why}")]
    NotAHostName {
        /// The entry as configured.
        entry: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// A closed host in the form `url` gives a host: lower-case ASCII, IDN as
/// punycode, no trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosedHost(String);

impl ClosedHost {
    /// Normalises one configured entry the way `url` normalises a URL's
    /// host, so the entry and the hosts it closes compare as equals.
    pub fn parse(entry: &str) -> Result<Self, SettingsError> {
        let refuse = |why| SettingsError::NotAHostName {
            entry: entry.to_owned(),
            why,
        };
        let trimmed = entry.trim();
        let without_dot = trimmed.strip_suffix('.').unwrap_or(trimmed);
        if without_dot.is_empty() {
            return Err(refuse("it is empty"));
        }
        let name = match Host::parse(without_dot) {
            Ok(Host::Domain(name)) => name,
            Ok(Host::Ipv4(_) | Host::Ipv6(_)) => {
                return Err(refuse("it is an address; hosts are closed by name"));
            }
            Err(_) => {
                return Err(refuse(
                    "it is not a valid domain name (no scheme, port or path)",
                ));
            }
        };
        let labels_valid = name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
        if !labels_valid {
            return Err(refuse(
                "a name is labels of letters, digits and hyphens separated by dots (no wildcards)",
            ));
        }
        Ok(Self(name))
    }

    /// Whether `host` (as `url` gives it, trailing dot removed) is this host
    /// or beneath it.
    pub fn closes(&self, host: &str) -> bool {
        host == self.0
            || host
                .strip_suffix(self.0.as_str())
                .is_some_and(|rest| rest.ends_with('.'))
    }

    /// The normalised name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClosedHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
