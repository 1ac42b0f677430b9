//! The authorities the worker trusts for its servers: the public roots, and
//! a deployment's own CA given with `--trust` (a mail server on the
//! deployment's network commonly has one).

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a PEM certificate: {reason}")]
    Pem { path: String, reason: String },
    #[error("{path}: no certificate in it")]
    Empty { path: String },
    #[error("{path}: {reason}")]
    Rejected { path: String, reason: String },
}

/// The extra authorities, each as PEM text.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    pems: Vec<Vec<u8>>,
    roots: Option<Arc<RootCertStore>>,
}

impl Trust {
    /// Reads each PEM file in `paths`.
    pub fn load(paths: &[impl AsRef<Path>]) -> Result<Self, TrustError> {
        let mut pems = Vec::new();
        for path in paths {
            let path = path.as_ref();
            let bytes = std::fs::read(path).map_err(|source| TrustError::Read {
                path: path.display().to_string(),
                source,
            })?;
            pems.push(bytes);
        }
        Self::from_pems(pems, "--trust")
    }

    /// The public roots and each of `pems`.
    pub fn from_pems(pems: Vec<Vec<u8>>, named: &str) -> Result<Self, TrustError> {
        let mut store = RootCertStore::empty();
        store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for pem in &pems {
            let mut any = false;
            for certificate in CertificateDer::pem_slice_iter(pem) {
                let certificate = certificate.map_err(|e| TrustError::Pem {
                    path: named.to_string(),
                    reason: e.to_string(),
                })?;
                store.add(certificate).map_err(|e| TrustError::Rejected {
                    path: named.to_string(),
                    reason: e.to_string(),
                })?;
                any = true;
            }
            if !any {
                return Err(TrustError::Empty {
                    path: named.to_string(),
                });
            }
        }
        Ok(Self {
            pems,
            roots: Some(Arc::new(store)),
        })
    }

    /// A TLS client configuration verifying servers against these roots.
    pub fn client_config(&self) -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
        let roots = match &self.roots {
            Some(roots) => roots.as_ref().clone(),
            None => {
                let mut store = RootCertStore::empty();
                store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                store
            }
        };
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Arc::new(config))
    }

    /// The extra authorities as PEM text, for the SMTP client's own TLS.
    pub fn pems(&self) -> &[Vec<u8>] {
        &self.pems
    }
}
