//! Name resolution, once per request (§3.4 "with the name resolved and every
//! answer judged"): the caller connects only to the addresses judged here.

use std::net::{IpAddr, SocketAddr};

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{
    ConnectionConfig, LookupIpStrategy, NameServerConfig, ResolverConfig, ResolverOpts,
};
use hickory_resolver::net::NetError;
use hickory_resolver::net::runtime::TokioRuntimeProvider;

use crate::refusal::ResolutionProblem;

/// A stub resolver over hickory.
#[derive(Clone)]
pub struct Resolver {
    inner: TokioResolver,
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver").finish_non_exhaustive()
    }
}

/// The system's resolver configuration could not be read.
#[derive(Debug, thiserror::Error)]
#[error("reading the system's resolver configuration (/etc/resolv.conf) failed: {0}")]
pub struct ResolverSetupError(#[from] NetError);

/// What a lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Every address the name answered, A and AAAA.
    Answers(Vec<IpAddr>),
    /// The name exists nowhere, or has no address.
    NoAddress,
    /// No usable answer.
    Failed(ResolutionProblem),
}

impl Resolver {
    /// The system's configuration: `/etc/resolv.conf`, which `ip netns exec`
    /// replaces per network namespace, decides the name servers.
    pub fn from_system() -> Result<Self, ResolverSetupError> {
        let mut builder = TokioResolver::builder_tokio()?;
        *builder.options_mut() = options(builder.options_mut().clone());
        Ok(Self {
            inner: builder.build()?,
        })
    }

    /// One name server at `server` over UDP and TCP, no hosts file: for
    /// tests and labs that script the answers.
    pub fn with_name_server(server: SocketAddr) -> Result<Self, ResolverSetupError> {
        let mut udp = ConnectionConfig::udp();
        udp.port = server.port();
        let mut tcp = ConnectionConfig::tcp();
        tcp.port = server.port();
        let config = ResolverConfig::from_name_servers(vec![NameServerConfig::new(
            server.ip(),
            true,
            vec![udp, tcp],
        )]);
        let mut opts = options(ResolverOpts::default());
        opts.use_hosts_file = hickory_resolver::config::ResolveHosts::Never;
        let builder = TokioResolver::builder_with_config(config, TokioRuntimeProvider::default())
            .with_options(opts);
        Ok(Self {
            inner: builder.build()?,
        })
    }

    /// Every A and AAAA answer for `name`.
    pub async fn lookup(&self, name: &str) -> Lookup {
        // Absolute, so no search domain is appended: `wiki` must not become
        // `wiki.corp.example` behind the closed-host check, which judged
        // the name as asked (§3.4).
        let absolute = if name.ends_with('.') {
            name.to_owned()
        } else {
            format!("{name}.")
        };
        match self.inner.lookup_ip(absolute.as_str()).await {
            Ok(found) => {
                let mut answers: Vec<IpAddr> = found.iter().collect();
                answers.sort();
                answers.dedup();
                if answers.is_empty() {
                    Lookup::NoAddress
                } else {
                    Lookup::Answers(answers)
                }
            }
            Err(e) if e.is_nx_domain() || e.is_no_records_found() => Lookup::NoAddress,
            Err(NetError::Timeout) => Lookup::Failed(ResolutionProblem::Timeout),
            Err(NetError::Io(_) | NetError::NoConnections) => {
                Lookup::Failed(ResolutionProblem::Unreachable)
            }
            Err(_) => Lookup::Failed(ResolutionProblem::Failed),
        }
    }
}

fn options(mut opts: ResolverOpts) -> ResolverOpts {
    // Both families, so every answer a name gives is judged, not only the
    // first family's.
    opts.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
    opts
}
