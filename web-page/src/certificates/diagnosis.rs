//! What a failed rustls verification found, told apart finely enough to say whose fault it
//! is (§3.4). A verifier wraps rustls's own and records, per host, the problem it met, for
//! the fetch to report once its connection has failed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use chrono::DateTime;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{WebPkiServerVerifier, verify_server_cert_signed_by_trust_anchor};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};

use super::{CertificateProblem, OtherProblem};

/// Hosts whose problem is kept before the oldest are dropped: a problem is taken by the fetch
/// that met it, so more than this are only ones no fetch came back for.
const HOSTS_KEPT: usize = 1024;

/// A `ServerCertVerifier` that verifies as rustls's WebPKI verifier does and remembers, per
/// host, why a certificate failed.
#[derive(Debug)]
pub struct DiagnosingVerifier {
    inner: Arc<WebPkiServerVerifier>,
    algorithms: WebPkiSupportedAlgorithms,
    found: Mutex<HashMap<String, CertificateProblem>>,
}

impl DiagnosingVerifier {
    /// Verifies against `roots` with `provider`'s algorithms (aws-lc-rs in this project).
    pub fn new(
        roots: Arc<RootCertStore>,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, rustls::client::VerifierBuilderError> {
        let algorithms = provider.signature_verification_algorithms;
        let inner = WebPkiServerVerifier::builder_with_provider(roots, provider).build()?;
        Ok(Self {
            inner,
            algorithms,
            found: Mutex::new(HashMap::new()),
        })
    }

    /// The problem the last failed verification for `host` met, taken out.
    pub fn take(&self, host: &str) -> Option<CertificateProblem> {
        self.found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&host.to_ascii_lowercase())
    }

    fn record(&self, host: &str, problem: Option<CertificateProblem>) {
        let mut found = self.found.lock().unwrap_or_else(PoisonError::into_inner);
        let host = host.to_ascii_lowercase();
        match problem {
            Some(problem) => {
                if found.len() >= HOSTS_KEPT {
                    found.clear();
                }
                found.insert(host, problem);
            }
            None => {
                found.remove(&host);
            }
        }
    }
}

impl ServerCertVerifier for DiagnosingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let verdict = self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        let problem = verdict
            .as_ref()
            .err()
            .and_then(|error| diagnose(error, end_entity, intermediates, now, &self.algorithms));
        self.record(&server_name.to_str(), problem);
        verdict
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

fn date(at: UnixTime) -> Option<DateTime<chrono::Utc>> {
    DateTime::from_timestamp(i64::try_from(at.as_secs()).ok()?, 0)
}

/// The problem behind a rustls verification error; `None` where the error is not about the
/// certificate.
pub fn diagnose(
    error: &Error,
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    now: UnixTime,
    algorithms: &WebPkiSupportedAlgorithms,
) -> Option<CertificateProblem> {
    use CertificateProblem as P;
    use OtherProblem as O;
    let Error::InvalidCertificate(error) = error else {
        return None;
    };
    #[allow(deprecated)] // matched so that an older verifier's plain variant is still read
    let problem = match error {
        CertificateError::Expired => P::Expired { not_after: None },
        CertificateError::ExpiredContext { not_after, .. } => P::Expired {
            not_after: date(*not_after),
        },
        CertificateError::NotValidYet => P::NotYetValid { not_before: None },
        CertificateError::NotValidYetContext { not_before, .. } => P::NotYetValid {
            not_before: date(*not_before),
        },
        CertificateError::NotValidForName => P::WrongName {
            presented: Vec::new(),
        },
        CertificateError::NotValidForNameContext { presented, .. } => P::WrongName {
            presented: presented.iter().map(|n| bare_name(n)).collect(),
        },
        CertificateError::UnknownIssuer => {
            if self_signed(end_entity, now, algorithms) {
                P::SelfSigned
            } else if intermediates.is_empty() && names_its_issuers_address(end_entity) {
                // A public site's certificate comes from an intermediate (CA/Browser Forum
                // Baseline Requirements: roots do not issue to sites) and says where its
                // issuer's certificate is published; a leaf that says so, sent alone, is one
                // sent without its chain. A leaf that does not is as likely issued straight
                // from a private root this deployment does not trust.
                P::MissingIntermediates
            } else {
                P::UntrustedIssuer
            }
        }
        CertificateError::Revoked => P::Other(O::Revoked),
        CertificateError::UnknownRevocationStatus
        | CertificateError::ExpiredRevocationList
        | CertificateError::ExpiredRevocationListContext { .. } => P::Other(O::RevocationUnknown),
        CertificateError::BadEncoding | CertificateError::UnhandledCriticalExtension => {
            P::Other(O::Malformed)
        }
        CertificateError::BadSignature => P::Other(O::BadSignature),
        CertificateError::UnsupportedSignatureAlgorithm
        | CertificateError::UnsupportedSignatureAlgorithmContext { .. }
        | CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            P::Other(O::UnsupportedAlgorithm)
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            P::Other(O::WrongPurpose)
        }
        _ => P::Other(O::Unrecognised),
    };
    Some(problem)
}

/// Whether the certificate names where its issuer's certificate is published (an Authority
/// Information Access `caIssuers` entry, RFC 5280 §4.2.2.1), as a public CA's leaf does.
fn names_its_issuers_address(end_entity: &CertificateDer<'_>) -> bool {
    use x509_parser::extensions::ParsedExtension;
    use x509_parser::oid_registry::OID_PKIX_ACCESS_DESCRIPTOR_CA_ISSUERS;
    use x509_parser::prelude::FromDer;
    let Ok((_, certificate)) = x509_parser::certificate::X509Certificate::from_der(end_entity)
    else {
        return false;
    };
    certificate.extensions().iter().any(|extension| {
        matches!(
            extension.parsed_extension(),
            ParsedExtension::AuthorityInfoAccess(access)
                if access
                    .iter()
                    .any(|d| d.access_method == OID_PKIX_ACCESS_DESCRIPTOR_CA_ISSUERS)
        )
    })
}

/// Whether the certificate is signed by its own key: trusted as its own root, it verifies.
fn self_signed(
    end_entity: &CertificateDer<'_>,
    now: UnixTime,
    algorithms: &WebPkiSupportedAlgorithms,
) -> bool {
    let mut itself = RootCertStore::empty();
    if itself.add(end_entity.clone()).is_err() {
        return false;
    }
    let Ok(parsed) = ParsedCertificate::try_from(end_entity) else {
        return false;
    };
    verify_server_cert_signed_by_trust_anchor(&parsed, &itself, &[], now, algorithms.all).is_ok()
}

/// A presented name as the certificate holds it: the verifier reports them in its debug form
/// (`DnsName("a.test")`, `IpAddress(192.0.2.1)`), which is the runtime's wording.
fn bare_name(presented: &str) -> String {
    let inner = presented
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or(presented);
    inner.trim_matches('"').to_owned()
}
