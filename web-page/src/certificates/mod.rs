//! A certificate that fails to verify, on either route, as a typed failure in the framework's
//! words, never the runtime's (§3.4). The site is named at fault only where the error
//! establishes it: a chain sent without its intermediates, an expired or self-signed
//! certificate, one issued for another name. An issuer nothing here trusts is as likely a gap
//! in this deployment's trust store, and is said to be either.

mod chromium;
mod diagnosis;

use chrono::{DateTime, Utc};

use crate::held::{Holds, NAVIGATE};

pub use chromium::from_chromium_net_error;
pub use diagnosis::{DiagnosingVerifier, diagnose};

/// What was wrong with the certificate a site presented.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertificateProblem {
    #[error("the site sent its certificate without the intermediates that link it to an authority")]
    MissingIntermediates,
    #[error("the site's certificate has expired")]
    Expired { not_after: Option<DateTime<Utc>> },
    #[error("the site's certificate is not valid yet")]
    NotYetValid { not_before: Option<DateTime<Utc>> },
    /// Expired or not yet valid, where the error does not say which (Chromium's
    /// `ERR_CERT_DATE_INVALID`).
    #[error("the site's certificate is outside its validity period")]
    OutsideValidity,
    #[error("the site's certificate is self-signed")]
    SelfSigned,
    #[error("the site's certificate was issued for another name")]
    WrongName { presented: Vec<String> },
    #[error("the certificate's issuer is one nothing here trusts")]
    UntrustedIssuer,
    #[error("the certificate did not verify: {0}")]
    Other(OtherProblem),
}

/// The rarer failures, none of which by itself establishes whose fault it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OtherProblem {
    #[error("its issuer has revoked it")]
    Revoked,
    #[error("whether its issuer has revoked it could not be established")]
    RevocationUnknown,
    #[error("it is malformed")]
    Malformed,
    #[error("its signature does not match its issuer's key")]
    BadSignature,
    #[error("it is signed with an algorithm nothing here accepts")]
    UnsupportedAlgorithm,
    #[error("it is not issued for serving a website")]
    WrongPurpose,
    #[error("it uses a key or signature too weak to trust")]
    Weak,
    #[error("its authority is no longer trusted by browsers")]
    Distrusted,
    #[error("it is not publicly logged as browsers require")]
    NotLogged,
    #[error("its issuer may not issue certificates for this name")]
    NameConstraints,
    #[error("it failed a check this framework does not name")]
    Unrecognised,
}

/// Which route met the certificate: the text names the browser as a next step only to a fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Fetch,
    Browser,
}

fn day(at: &Option<DateTime<Utc>>) -> String {
    at.map(|t| format!(" on {}", t.format("%Y-%m-%d %H:%M UTC")))
        .unwrap_or_default()
}

impl CertificateProblem {
    /// Whether the error itself establishes that the fault is the site's.
    pub fn site_at_fault(&self) -> bool {
        matches!(
            self,
            Self::MissingIntermediates
                | Self::Expired { .. }
                | Self::NotYetValid { .. }
                | Self::OutsideValidity
                | Self::SelfSigned
                | Self::WrongName { .. }
        )
    }

    /// The failure as the model reads it. `host` is the name that was asked for.
    pub fn describe(&self, host: &str, route: Route, holds: &dyn Holds) -> String {
        let opening = format!(
            "The certificate {host} presented did not verify, so nothing was read from it: "
        );
        let site = " The fault is the site's; nothing here can fix it.";
        let what = match self {
            Self::MissingIntermediates => {
                let mut text = format!(
                    "the site sent it without the intermediate certificates that link it to an \
                     authority, a fault in the site's configuration.{site}"
                );
                if route == Route::Fetch && holds.holds(NAVIGATE) {
                    text.push_str(&format!(
                        " {NAVIGATE} may still open it: a browser fetches missing intermediates itself."
                    ));
                }
                return format!("{opening}{text}");
            }
            Self::Expired { not_after } => format!("it expired{}.{site}", day(not_after)),
            Self::NotYetValid { not_before } => {
                format!(
                    "it is not valid until{}, so the site is using it too early.{site}",
                    if not_before.is_some() {
                        day(not_before)
                    } else {
                        " a later date".to_owned()
                    }
                )
            }
            Self::OutsideValidity => format!("it has expired or is not valid yet.{site}"),
            Self::SelfSigned => format!(
                "it is self-signed: no authority vouches for it, so nothing can tell this site \
                 from an impostor.{site}"
            ),
            Self::WrongName { presented } if presented.is_empty() => {
                format!("it was issued for another name than {host}.{site}")
            }
            Self::WrongName { presented } => {
                let names: Vec<&str> = presented.iter().take(5).map(String::as_str).collect();
                let more = presented.len().saturating_sub(names.len());
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                format!(
                    "it was issued for {}{more}, not {host}.{site}",
                    names.join(", ")
                )
            }
            Self::UntrustedIssuer => "it was issued by an authority nothing here trusts. That is \
                 either the site, using an authority of its own or an unrecognised one, or this \
                 deployment's trust store, lacking one the site rightly uses; the error does not \
                 say which."
                .to_owned(),
            Self::Other(other) => format!("{other}."),
        };
        format!("{opening}{what}")
    }
}
