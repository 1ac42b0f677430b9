//! Why a search gave no hits, and what each reason is to the turn (§3.4):
//! throttling is a result the model reads; refused credentials or an
//! unanswering provider end the turn.

use std::time::Duration;

use collegium_proto::toolset::v1::{Failure, Refusal, tool_result};
use reqwest::StatusCode;

use super::settings::{Provider, SettingsError};

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The provider's rate limit or quota (429).
    #[error("{provider} is throttling this deployment's searches ({status}){}", retry_text(*retry_after))]
    Throttled {
        provider: Provider,
        status: StatusCode,
        retry_after: Option<Duration>,
    },
    /// The provider refused the key the agent's web settings give (401, and
    /// Brave's 403).
    #[error(
        "{provider} refused the configured API key ({status}{}); the operator must correct the key in this agent's web settings",
        detail_text(detail)
    )]
    CredentialsRefused {
        provider: Provider,
        status: StatusCode,
        detail: Option<String>,
    },
    /// SearXNG answers 403 to a format its settings do not enable; a proxy in
    /// front of it may answer 403 to a key it does not accept.
    #[error("SearXNG refused the search ({status}): its JSON API is not enabled (the instance's settings.yml must list `json` under `search.formats`){}", if *key_sent { ", or the proxy in front of it refused the configured key" } else { "" })]
    SearxngForbidden { status: StatusCode, key_sent: bool },
    /// The provider refused this query as a query (400, 422): the model may
    /// rephrase it.
    #[error("{provider} refused this query ({status}{})", detail_text(detail))]
    QueryRejected {
        provider: Provider,
        status: StatusCode,
        detail: Option<String>,
    },
    /// The address policy refused the provider's address (§3.4: the search
    /// request goes through the same policy as any fetch). The operator
    /// chose the address, so the model cannot mend it.
    #[error("the address policy refused {provider}'s address: {refusal}")]
    OutOfScope {
        provider: Provider,
        refusal: collegium_web_scope::Refusal,
    },
    /// No answer: a timeout, a connection that failed, or a server error.
    #[error("{provider} did not answer: {reason}")]
    Unanswered {
        provider: Provider,
        reason: String,
        /// The client's error, kept so the caller can find the address
        /// policy's refusal in its source chain.
        #[source]
        source: Option<reqwest::Error>,
    },
    /// A status no provider documents for its search endpoint (a wrong
    /// `base_url` answers 404).
    #[error(
        "{provider} answered {status}, which is not a search answer; check the provider's `base_url` in this agent's web settings"
    )]
    UnexpectedStatus {
        provider: Provider,
        status: StatusCode,
    },
    /// An answer that is not the provider's response shape.
    #[error("{provider}'s answer is not a search response: {reason}")]
    Malformed { provider: Provider, reason: String },
}

fn retry_text(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(after) => format!("; searching may resume in {}", wait(after)),
        None => "; it did not say when searching may resume".into(),
    }
}

/// A wait as a person says it: seconds up to two minutes, then the unit
/// that keeps the number small (Brave's monthly quota resets in weeks).
fn wait(after: Duration) -> String {
    let secs = after.as_secs().max(1);
    let about = |n: u64, unit: &str| format!("about {n} {unit}{}", if n == 1 { "" } else { "s" });
    match secs {
        1 => "1 second".into(),
        2..120 => format!("{secs} seconds"),
        120..7_200 => about(secs.div_ceil(60), "minute"),
        7_200..172_800 => about(secs.div_ceil(3_600), "hour"),
        _ => about(secs.div_ceil(86_400), "day"),
    }
}

fn detail_text(detail: &Option<String>) -> String {
    match detail {
        Some(detail) => format!(": {detail}"),
        None => String::new(),
    }
}

impl SearchError {
    /// Whether the turn ends on this error (§3.4): everything but throttling
    /// and a refused query, which are results the model reads and acts on.
    pub fn ends_turn(&self) -> bool {
        !matches!(
            self,
            SearchError::Throttled { .. } | SearchError::QueryRejected { .. }
        )
    }

    /// The call's outcome: a `Refusal` the model reads, or a `Failure` that
    /// ends the turn (the daemon's `tool_failed` exit, §7.2).
    pub fn outcome(&self) -> tool_result::Outcome {
        if self.ends_turn() {
            tool_result::Outcome::Failure(Failure {
                message: self.to_string(),
            })
        } else {
            tool_result::Outcome::Refusal(Refusal {
                message: format!("web::search was refused: {self}."),
            })
        }
    }

    /// One line for the status post (§8.1).
    pub fn summary(&self) -> String {
        match self {
            SearchError::Throttled { .. } => "throttled".into(),
            SearchError::QueryRejected { .. } => "query refused".into(),
            SearchError::CredentialsRefused { .. } => "key refused".into(),
            SearchError::SearxngForbidden { .. } => "refused (403)".into(),
            SearchError::OutOfScope { .. } => "address refused".into(),
            SearchError::Unanswered { .. } => "no answer".into(),
            SearchError::UnexpectedStatus { status, .. } => format!("answered {status}"),
            SearchError::Malformed { .. } => "malformed answer".into(),
        }
    }
}

impl SettingsError {
    /// Settings that cannot be searched with end the turn: the operator, not
    /// the model, must change them.
    pub fn outcome(&self) -> tool_result::Outcome {
        tool_result::Outcome::Failure(Failure {
            message: self.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_said_in_the_unit_that_keeps_it_small() {
        let said = |secs| wait(Duration::from_secs(secs));
        assert_eq!(said(0), "1 second");
        assert_eq!(said(1), "1 second");
        assert_eq!(said(30), "30 seconds");
        assert_eq!(said(119), "119 seconds");
        assert_eq!(said(120), "about 2 minutes");
        assert_eq!(said(3_599), "about 60 minutes");
        assert_eq!(said(7_200), "about 2 hours");
        assert_eq!(said(1_419_704), "about 17 days");
    }
}
