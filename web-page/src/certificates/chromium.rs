//! Chromium's certificate errors, by their net error names, as the browser route meets them.

use super::{CertificateProblem, OtherProblem};

/// The problem a Chromium net error names (`net::ERR_CERT_DATE_INVALID` or
/// `ERR_CERT_DATE_INVALID`); `None` where it is not a certificate error.
pub fn from_chromium_net_error(name: &str) -> Option<CertificateProblem> {
    let name = name.trim();
    let name = name.strip_prefix("net::").unwrap_or(name);
    use CertificateProblem as P;
    use OtherProblem as O;
    Some(match name {
        "ERR_CERT_COMMON_NAME_INVALID" => P::WrongName {
            presented: Vec::new(),
        },
        "ERR_CERT_DATE_INVALID" => P::OutsideValidity,
        // Chromium fetches missing intermediates itself and reports a self-signed certificate
        // under this name too, so the error establishes neither: it is said to be either side.
        "ERR_CERT_AUTHORITY_INVALID" => P::UntrustedIssuer,
        "ERR_CERT_REVOKED" => P::Other(O::Revoked),
        "ERR_CERT_NO_REVOCATION_MECHANISM" | "ERR_CERT_UNABLE_TO_CHECK_REVOCATION" => {
            P::Other(O::RevocationUnknown)
        }
        "ERR_CERT_INVALID" | "ERR_CERT_CONTAINS_ERRORS" | "ERR_CERT_NON_UNIQUE_NAME" => {
            P::Other(O::Malformed)
        }
        "ERR_CERT_WEAK_SIGNATURE_ALGORITHM"
        | "ERR_CERT_WEAK_KEY"
        | "ERR_CERT_VALIDITY_TOO_LONG" => P::Other(O::Weak),
        "ERR_CERT_SYMANTEC_LEGACY" | "ERR_CERT_KNOWN_INTERCEPTION_BLOCKED" => {
            P::Other(O::Distrusted)
        }
        "ERR_CERT_NAME_CONSTRAINT_VIOLATION" => P::Other(O::NameConstraints),
        "ERR_CERTIFICATE_TRANSPARENCY_REQUIRED" | "ERR_CERT_TRANSPARENCY_REQUIRED" => {
            P::Other(O::NotLogged)
        }
        "ERR_SSL_PINNED_KEY_NOT_IN_CERT_CHAIN" => P::Other(O::Unrecognised),
        other if other.starts_with("ERR_CERT_") => P::Other(O::Unrecognised),
        _ => return None,
    })
}
