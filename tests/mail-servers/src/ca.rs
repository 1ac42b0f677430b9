//! A test certificate authority and the certificate the servers present,
//! for `localhost` and 127.0.0.1, which a client trusts by trusting the CA.

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, SanType};

/// The CA, and the server certificate it issued, in PEM.
pub struct TestCa {
    /// The authority a client adds to its roots.
    pub ca_pem: String,
    pub server_cert_pem: String,
    pub server_key_pem: String,
}

impl TestCa {
    pub fn new() -> Result<Self, rcgen::Error> {
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.distinguished_name
            .push(DnType::CommonName, "Collegium test mail CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;
        let mut server = CertificateParams::new(vec!["localhost".to_string()])?;
        server
            .subject_alt_names
            .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
        let key = KeyPair::generate()?;
        let cert = server.signed_by(&key, &ca)?;
        Ok(Self {
            ca_pem: ca.pem(),
            server_cert_pem: cert.pem(),
            server_key_pem: key.serialize_pem(),
        })
    }
}
