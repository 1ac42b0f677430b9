//! The scope every request is judged by, on both routes (§3.4 "The one
//! compensating control is scope"): the scheme, the closed hosts, then
//! every address the host is or answers.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::{Host, Url};

use crate::refusal::{Refusal, UrlProblem};
use crate::resolver::{Lookup, Resolver};
use crate::rules::classify;
use crate::settings::{ClosedHost, ScopeSettings, SettingsError};

/// The deployment's scope: its two settings and this host's addresses.
#[derive(Debug, Clone)]
pub struct Scope {
    own_network_browsable: bool,
    closed_hosts: Vec<ClosedHost>,
    own_addresses: Vec<IpAddr>,
}

/// A URL that passed every judgement that needs no name server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL as `url` parsed it: what a client connects to.
    pub url: Url,
    /// Its host, judged as far as it can be without resolving.
    pub host: TargetHost,
    /// The port, explicit or the scheme's.
    pub port: u16,
}

/// A target's host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetHost {
    /// A literal address, already judged.
    Address(IpAddr),
    /// `localhost` or beneath it: this machine, never resolved; only
    /// judged-in when the own network is declared.
    ThisMachine(String),
    /// A name to resolve; every answer must be judged.
    Name(String),
}

impl Scope {
    /// The scope for these settings and this host's own addresses (see
    /// [`crate::own_addresses`]).
    pub fn new(settings: ScopeSettings, own_addresses: Vec<IpAddr>) -> Result<Self, SettingsError> {
        let closed_hosts = settings
            .closed_hosts
            .iter()
            .map(|entry| ClosedHost::parse(entry))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            own_network_browsable: settings.own_network_browsable,
            closed_hosts,
            own_addresses,
        })
    }

    /// Whether the deployment declared its own network browsable.
    pub fn own_network_browsable(&self) -> bool {
        self.own_network_browsable
    }

    /// The closed hosts, normalised.
    pub fn closed_hosts(&self) -> &[ClosedHost] {
        &self.closed_hosts
    }

    /// What the worker logs at boot, so a deployment that opened its own
    /// network or closed hosts has said so in its log (§3.4).
    pub fn boot_line(&self) -> String {
        let network = if self.own_network_browsable {
            "own network DECLARED BROWSABLE: loopback, private addresses and this host are open to every agent (link-local and cloud metadata stay refused)"
        } else {
            "own network not browsable: only the public internet is open to agents"
        };
        let closed = if self.closed_hosts.is_empty() {
            "no hosts closed".to_owned()
        } else {
            let names: Vec<&str> = self.closed_hosts.iter().map(ClosedHost::as_str).collect();
            format!(
                "closed hosts (each with every subdomain): {}",
                names.join(", ")
            )
        };
        format!("web scope: {network}; {closed}")
    }

    /// Logs [`Scope::boot_line`] with both settings as fields.
    pub fn log_boot(&self) {
        let closed: Vec<&str> = self.closed_hosts.iter().map(ClosedHost::as_str).collect();
        tracing::info!(
            own_network_browsable = self.own_network_browsable,
            closed_hosts = ?closed,
            "{}",
            self.boot_line()
        );
    }

    /// Judges a URL without resolving: its scheme, its host against the
    /// closed hosts, a literal address or `localhost` at once. A name still
    /// has to be resolved with [`Scope::resolve`] and each answer judged.
    pub fn judge_url(&self, input: &str) -> Result<Target, Refusal> {
        let url = Url::parse(input.trim()).map_err(|e| Refusal::Unparseable {
            input: input.to_owned(),
            problem: e.into(),
        })?;
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(Refusal::Scheme {
                url: url.to_string(),
                scheme: scheme.to_owned(),
            });
        }
        let port = url
            .port_or_known_default()
            .ok_or_else(|| Refusal::Unparseable {
                input: input.to_owned(),
                problem: UrlProblem::Port,
            })?;
        let host = match url.host() {
            None => {
                return Err(Refusal::Unparseable {
                    input: input.to_owned(),
                    problem: UrlProblem::NoHost,
                });
            }
            Some(Host::Ipv4(a)) => self.judge_literal(IpAddr::V4(a))?,
            Some(Host::Ipv6(a)) => self.judge_literal(IpAddr::V6(a))?,
            Some(Host::Domain(name)) => self.judge_name(name.to_owned())?,
        };
        Ok(Target { url, host, port })
    }

    /// Judges a proxy's `CONNECT host:port` target as a URL's host would be
    /// judged (`url` normalises `0x7f.1` there too).
    pub fn judge_authority(&self, authority: &str) -> Result<Target, Refusal> {
        let malformed = || Refusal::Unparseable {
            input: authority.to_owned(),
            problem: UrlProblem::Authority,
        };
        if authority.is_empty()
            || authority
                .chars()
                .any(|c| matches!(c, '/' | '\\' | '@' | '?' | '#') || c.is_whitespace())
        {
            return Err(malformed());
        }
        let target = self.judge_url(&format!("https://{authority}/"))?;
        // The port must be explicit: https's default would hide a typo.
        if target.url.port().is_none() && !authority.ends_with(":443") {
            return Err(malformed());
        }
        Ok(target)
    }

    /// Judges one address, asked for or answered.
    pub fn judge_address(&self, address: IpAddr) -> Result<(), Refusal> {
        self.judge_answer(None, address)
    }

    /// Resolves a host name once and judges every answer: the whole name is
    /// refused if any answer is forbidden (a name answering a public address
    /// and 127.0.0.1 is refused), so the caller connects only to addresses
    /// returned here and never resolves again (§3.4, rebinding).
    pub async fn resolve(
        &self,
        resolver: &Resolver,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, Refusal> {
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let judged = match host.parse::<IpAddr>() {
            Ok(address) => self.judge_literal(address)?,
            Err(_) => self.judge_name(host.to_ascii_lowercase())?,
        };
        self.addresses(resolver, &judged, port).await
    }

    /// The addresses to connect to for a judged target.
    pub async fn connect_addresses(
        &self,
        resolver: &Resolver,
        target: &Target,
    ) -> Result<Vec<SocketAddr>, Refusal> {
        self.addresses(resolver, &target.host, target.port).await
    }

    async fn addresses(
        &self,
        resolver: &Resolver,
        host: &TargetHost,
        port: u16,
    ) -> Result<Vec<SocketAddr>, Refusal> {
        let addresses = match host {
            TargetHost::Address(address) => vec![*address],
            TargetHost::ThisMachine(_) => {
                vec![
                    IpAddr::V4(Ipv4Addr::LOCALHOST),
                    IpAddr::V6(Ipv6Addr::LOCALHOST),
                ]
            }
            TargetHost::Name(name) => {
                let answers = match resolver.lookup(name).await {
                    Lookup::Answers(answers) => answers,
                    Lookup::NoAddress => {
                        return Err(Refusal::NoAddress { host: name.clone() });
                    }
                    Lookup::Failed(problem) => {
                        return Err(Refusal::ResolutionFailed {
                            host: name.clone(),
                            problem,
                        });
                    }
                };
                for answer in &answers {
                    self.judge_answer(Some(name), *answer)?;
                }
                answers
            }
        };
        Ok(addresses
            .into_iter()
            .map(|a| SocketAddr::new(a, port))
            .collect())
    }

    fn judge_literal(&self, address: IpAddr) -> Result<TargetHost, Refusal> {
        self.judge_answer(None, address)?;
        Ok(TargetHost::Address(address))
    }

    fn judge_name(&self, name: String) -> Result<TargetHost, Refusal> {
        let bare = name.strip_suffix('.').unwrap_or(&name);
        if let Some(closed) = self.closed_hosts.iter().find(|c| c.closes(bare)) {
            return Err(Refusal::ClosedHost {
                host: name.clone(),
                closed: closed.to_string(),
            });
        }
        // RFC 6761: localhost and every name beneath it are this machine,
        // whatever a name server says.
        if bare == "localhost" || bare.ends_with(".localhost") {
            self.judge_answer(Some(&name), IpAddr::V4(Ipv4Addr::LOCALHOST))?;
            return Ok(TargetHost::ThisMachine(name));
        }
        Ok(TargetHost::Name(name))
    }

    fn judge_answer(&self, host: Option<&str>, address: IpAddr) -> Result<(), Refusal> {
        match classify(address, &self.own_addresses) {
            Some(forbidden)
                if !(self.own_network_browsable && forbidden.rule.lifted_by_own_network()) =>
            {
                Err(Refusal::Address {
                    host: host.map(str::to_owned),
                    forbidden,
                    own_network_browsable: self.own_network_browsable,
                })
            }
            _ => Ok(()),
        }
    }
}
