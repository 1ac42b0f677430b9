//! The HTTP client `web::fetch` and `web::search` send through: held to the
//! scope (the judging, pinning resolver; every redirect hop judged; no proxy
//! from the environment), and verifying certificates with a verifier that
//! records why one failed, so the failure is told in the framework's words
//! and blames the site only where the error establishes it (§3.4).

use std::path::PathBuf;
use std::sync::Arc;

use collegium_web_page::{CertificateProblem, DiagnosingVerifier};
use collegium_web_scope::{Resolver, Scope};
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// Authorities trusted beside the system's: a deployment's own CA, for
/// sites on its own network or a self-hosted search provider.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// PEM files of certificates to trust as authorities.
    pub extra_authorities: Vec<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{path}: {reason}")]
    Authority { path: PathBuf, reason: String },
    #[error("the system's trust store holds no usable authority ({0})")]
    NoRoots(String),
    #[error("the name resolver: {0}")]
    Resolver(#[from] collegium_web_scope::ResolverSetupError),
    #[error("the certificate verifier: {0}")]
    Verifier(String),
    #[error("the HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

pub struct Client {
    http: reqwest::Client,
    verifier: Arc<DiagnosingVerifier>,
}

impl Client {
    pub fn new(scope: Arc<Scope>, trust: &Trust) -> Result<Self, ClientError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let verifier = Arc::new(
            DiagnosingVerifier::new(Arc::new(roots(trust)?), provider.clone())
                .map_err(|e| ClientError::Verifier(e.to_string()))?,
        );
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ClientError::Verifier(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone())
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let http = collegium_web_scope::client_builder(scope, Resolver::from_system()?)
            .tls_backend_preconfigured(tls)
            .user_agent(concat!(
                "Mozilla/5.0 (compatible; Collegium/",
                env!("CARGO_PKG_VERSION"),
                ")"
            ))
            .build()?;
        Ok(Self { http, verifier })
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Why the last certificate `host` presented failed, if one did.
    pub fn certificate_problem(&self, host: &str) -> Option<CertificateProblem> {
        self.verifier.take(host)
    }
}

/// The system's authorities and the deployment's own.
fn roots(trust: &Trust) -> Result<RootCertStore, ClientError> {
    let mut roots = RootCertStore::empty();
    let system = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(system.certs);
    for path in &trust.extra_authorities {
        let certificates: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .and_then(Iterator::collect)
            .map_err(|e| ClientError::Authority {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        if certificates.is_empty() {
            return Err(ClientError::Authority {
                path: path.clone(),
                reason: "holds no certificate".into(),
            });
        }
        for certificate in certificates {
            roots.add(certificate).map_err(|e| ClientError::Authority {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        }
    }
    if roots.is_empty() {
        let why = system
            .errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        return Err(ClientError::NoRoots(if why.is_empty() {
            format!("{added} found; install ca-certificates")
        } else {
            why
        }));
    }
    Ok(roots)
}
