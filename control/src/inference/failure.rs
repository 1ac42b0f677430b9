//! The ways a completion fails, each with one fixed phrase (§7.1): never the
//! provider's or the runtime's words, which read to a person as a fault in
//! this deployment and to a model as an instruction.

use std::time::Duration;

use super::Usage;

/// A transport cause: retried invisibly, and named only once retries are
/// spent (§7.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportCause {
    ConnectTimeout,
    /// Nothing arrived within the idle timeout.
    Quiet,
    Unresolved,
    Refused,
    /// A 5xx (or an overloaded provider) with its status.
    ServerError(u16),
    /// A 429, with the wait the provider asked for.
    RateLimited(Option<Duration>),
    /// The stream ended before its end marker.
    Cut,
    /// Another connection failure.
    Connection,
}

impl TransportCause {
    pub fn phrase(&self) -> String {
        match self {
            Self::ConnectTimeout => "connecting to the provider timed out".into(),
            Self::Quiet => "the provider went quiet".into(),
            Self::Unresolved => "the provider's address did not resolve".into(),
            Self::Refused => "the provider refused the connection".into(),
            Self::ServerError(status) => format!("the provider failed with status {status}"),
            Self::RateLimited(Some(wait)) => {
                format!(
                    "the provider rate-limited the request and asked to wait {} s",
                    wait.as_secs().max(1)
                )
            }
            Self::RateLimited(None) => "the provider rate-limited the request".into(),
            Self::Cut => "the provider cut the completion off mid-stream".into(),
            Self::Connection => "the connection to the provider failed".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Failure {
    /// §7.1 provider outage: transport retries spent, or a rate limit asking
    /// for longer than the policy waits.
    #[error("provider outage: {}", .0.phrase())]
    Outage(TransportCause),
    /// §7.1 provider rejection: a refused credential.
    #[error("provider rejection: the provider refused the credential")]
    Credential,
    /// §7.1 provider rejection: an exhausted balance.
    #[error("provider rejection: the provider account's balance is exhausted")]
    Balance,
    /// §7.1 provider rejection: a permission or moderation refusal.
    #[error(
        "provider rejection: the provider refused the request on permission or moderation grounds"
    )]
    Refused,
    /// §7.1 provider rejection: the provider filtered the completion.
    #[error("provider rejection: the provider filtered the completion")]
    Filtered,
    /// §7.1 provider rejection: any other 4xx, by its number.
    #[error("provider rejection: the provider refused the request with status {0}")]
    Status(u16),
    /// §7.1 context exhausted: the provider said the request is too long.
    #[error("context exhausted: the request is longer than the model's context window")]
    ContextExhausted,
    /// §7.2: still malformed once retries were spent (a semantic error).
    #[error("semantic error: the provider's completion was still malformed after {0} attempts")]
    Malformed(u32),
    /// The request was aborted (a steer, a fold or a kill); never retried.
    /// What it streamed is estimated (§7.2).
    #[error("the completion was aborted")]
    Aborted { estimated: Usage },
}

impl Failure {
    /// The fixed phrase a notice states.
    pub fn phrase(&self) -> String {
        self.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_has_its_fixed_phrase() {
        let cases = [
            (
                Failure::Outage(TransportCause::ConnectTimeout),
                "provider outage: connecting to the provider timed out",
            ),
            (
                Failure::Outage(TransportCause::Quiet),
                "provider outage: the provider went quiet",
            ),
            (
                Failure::Outage(TransportCause::Unresolved),
                "provider outage: the provider's address did not resolve",
            ),
            (
                Failure::Outage(TransportCause::Refused),
                "provider outage: the provider refused the connection",
            ),
            (
                Failure::Outage(TransportCause::ServerError(503)),
                "provider outage: the provider failed with status 503",
            ),
            (
                Failure::Outage(TransportCause::RateLimited(Some(Duration::from_secs(90)))),
                "provider outage: the provider rate-limited the request and asked to wait 90 s",
            ),
            (
                Failure::Outage(TransportCause::RateLimited(None)),
                "provider outage: the provider rate-limited the request",
            ),
            (
                Failure::Outage(TransportCause::Cut),
                "provider outage: the provider cut the completion off mid-stream",
            ),
            (
                Failure::Outage(TransportCause::Connection),
                "provider outage: the connection to the provider failed",
            ),
            (
                Failure::Credential,
                "provider rejection: the provider refused the credential",
            ),
            (
                Failure::Balance,
                "provider rejection: the provider account's balance is exhausted",
            ),
            (
                Failure::Refused,
                "provider rejection: the provider refused the request on permission or moderation grounds",
            ),
            (
                Failure::Filtered,
                "provider rejection: the provider filtered the completion",
            ),
            (
                Failure::Status(418),
                "provider rejection: the provider refused the request with status 418",
            ),
            (
                Failure::ContextExhausted,
                "context exhausted: the request is longer than the model's context window",
            ),
            (
                Failure::Malformed(4),
                "semantic error: the provider's completion was still malformed after 4 attempts",
            ),
        ];
        for (failure, phrase) in cases {
            assert_eq!(failure.phrase(), phrase);
        }
    }
}
