//! A refusal is text the model reads (§3.4: "a typed refusal naming the
//! address it stopped"), so each says what was refused and by which rule, in
//! the framework's words rather than a library's.

use std::error::Error;
use std::fmt;

use crate::rules::Forbidden;

/// Why a URL, a host or an address is not browsable here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The text is not an absolute URL.
    #[error("{input:?} is not a URL a browser can open: {problem}")]
    Unparseable {
        /// What was asked for.
        input: String,
        /// What is wrong with it.
        problem: UrlProblem,
    },
    /// A scheme other than http and https.
    #[error(
        "{scheme}: URLs are not opened here: only http and https URLs on the public internet are browsable (§3.4)"
    )]
    Scheme {
        /// The URL asked for.
        url: String,
        /// Its scheme, lower-cased.
        scheme: String,
    },
    /// A host the deployment closed, or one beneath it.
    #[error(
        "{host} is closed to agents by this deployment ({closed} and every host beneath it) (§3.4)"
    )]
    ClosedHost {
        /// The host asked for.
        host: String,
        /// The closed host it falls under.
        closed: String,
    },
    /// An address that is not the public internet, asked for or answered.
    #[error("{}", address_text(host.as_deref(), forbidden, *own_network_browsable))]
    Address {
        /// The host name that led to it, when one did.
        host: Option<String>,
        /// The address, its rule and its range.
        forbidden: Forbidden,
        /// Whether the deployment declared its own network browsable.
        own_network_browsable: bool,
    },
    /// The name has no address.
    #[error("{host} does not resolve: no address answers for that name")]
    NoAddress {
        /// The host asked for.
        host: String,
    },
    /// The name servers did not give an answer.
    #[error("{host} could not be resolved: the name servers {problem}; asking again may succeed")]
    ResolutionFailed {
        /// The host asked for.
        host: String,
        /// What went wrong, in the framework's words.
        problem: ResolutionProblem,
    },
    /// A redirect chain longer than the bound.
    #[error("{url} was not followed: at most {limit} redirects in a row are followed")]
    TooManyRedirects {
        /// The hop not followed.
        url: String,
        /// The bound.
        limit: usize,
    },
}

impl Refusal {
    /// The refusal this error carries, anywhere along its `source()` chain:
    /// reqwest wraps a refusal of the resolver or the redirect policy in
    /// its own errors, and the model must read the refusal, not a failed
    /// connection (§3.4).
    pub fn find_in<'e>(error: &'e (dyn Error + 'static)) -> Option<&'e Refusal> {
        let mut next = Some(error);
        while let Some(e) = next {
            if let Some(refusal) = e.downcast_ref::<Refusal>() {
                return Some(refusal);
            }
            next = e.source();
        }
        None
    }
}

fn address_text(host: Option<&str>, f: &Forbidden, own_network_browsable: bool) -> String {
    let mut text = match host {
        Some(host) => format!("{host} resolves to {}", f.address),
        None => f.address.to_string(),
    };
    if let Some((embedding, inner)) = f.embedded {
        text.push_str(&format!(" ({embedding}, carrying {inner})"));
    }
    let verb = if host.is_some() { ", which is" } else { " is" };
    text.push_str(&format!("{verb} {}, in {}", f.rule.description(), f.range));
    if own_network_browsable {
        text.push_str(
            ": it stays refused although this deployment declared its own network browsable (§3.4)",
        );
    } else {
        text.push_str(": only the public internet is browsable here (§3.4)");
    }
    text
}

/// What makes a text not a URL, in the framework's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlProblem {
    /// No scheme: not an absolute URL.
    NotAbsolute,
    /// A URL with an empty host.
    NoHost,
    /// The port is not a number from 0 to 65535.
    Port,
    /// The host is a malformed IPv4 address.
    Ipv4,
    /// The host is a malformed IPv6 address.
    Ipv6,
    /// The host holds characters no host name holds.
    HostCharacters,
    /// The host is not a valid international name.
    InternationalName,
    /// A proxy request's target with a user name, path or fragment in it.
    Authority,
    /// Anything else.
    Malformed,
}

impl From<url::ParseError> for UrlProblem {
    fn from(e: url::ParseError) -> Self {
        use url::ParseError as P;
        match e {
            P::RelativeUrlWithoutBase | P::RelativeUrlWithCannotBeABaseBase => Self::NotAbsolute,
            P::EmptyHost => Self::NoHost,
            P::InvalidPort => Self::Port,
            P::InvalidIpv4Address => Self::Ipv4,
            P::InvalidIpv6Address => Self::Ipv6,
            P::InvalidDomainCharacter => Self::HostCharacters,
            P::IdnaError => Self::InternationalName,
            _ => Self::Malformed,
        }
    }
}

impl fmt::Display for UrlProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotAbsolute => "it is not an absolute URL (it names no scheme such as https://)",
            Self::NoHost => "it names no host",
            Self::Port => "its port is not a number from 0 to 65535",
            Self::Ipv4 => "its host is not a valid IPv4 address",
            Self::Ipv6 => "its host is not a valid IPv6 address",
            Self::HostCharacters => "its host holds characters no host name can hold",
            Self::InternationalName => "its host is not a valid international domain name",
            Self::Authority => "a proxy target is a host and a port, nothing more",
            Self::Malformed => "it is malformed",
        })
    }
}

/// Why the name servers gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolutionProblem {
    /// No answer in time.
    Timeout,
    /// An answer that was an error (SERVFAIL, REFUSED, a malformed reply).
    Failed,
    /// No name server could be reached.
    Unreachable,
}

impl fmt::Display for ResolutionProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Timeout => "did not answer in time",
            Self::Failed => "answered with an error",
            Self::Unreachable => "could not be reached",
        })
    }
}
