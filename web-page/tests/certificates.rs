//! Each broken chain, made by a test CA and served by a real rustls server on loopback, gives
//! its own problem through the diagnosing verifier; the wording blames the site only where
//! the error establishes it (§3.4).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;

use collegium_web_page::{
    CertificateProblem, DiagnosingVerifier, OtherProblem, Route, certificates,
};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, date_time_ymd,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{
    ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection, StreamOwned,
};

const SITE: &str = "site.test";

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

fn ca_params(name: &str) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
}

/// A root and an intermediate under it: the test's certificate authority.
struct Authority {
    root: CertifiedIssuer<'static, KeyPair>,
    intermediate: CertifiedIssuer<'static, KeyPair>,
}

impl Authority {
    fn new(name: &str) -> Self {
        let root = CertifiedIssuer::self_signed(
            ca_params(&format!("{name} Root")),
            KeyPair::generate().expect("key"),
        )
        .expect("root");
        let intermediate = CertifiedIssuer::signed_by(
            ca_params(&format!("{name} Intermediate")),
            KeyPair::generate().expect("key"),
            &root,
        )
        .expect("intermediate");
        Self { root, intermediate }
    }

    /// A leaf for `names`, issued by the intermediate.
    fn leaf(
        &self,
        names: &[&str],
        edit: impl FnOnce(&mut CertificateParams),
    ) -> (CertificateDer<'static>, KeyPair) {
        let key = KeyPair::generate().expect("key");
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
                .expect("leaf params");
        edit(&mut params);
        let cert = params.signed_by(&key, &self.intermediate).expect("leaf");
        (cert.der().clone(), key)
    }
}

/// An Authority Information Access extension naming where the issuer's certificate is
/// published (`caIssuers`, RFC 5280 §4.2.2.1), as a public CA's leaf carries one.
fn names_its_issuer(params: &mut CertificateParams) {
    let uri = b"http://ca.test/intermediate.der";
    let method = [0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x02];
    let mut description = method.to_vec();
    description.push(0x86);
    description.push(u8::try_from(uri.len()).expect("a short URI"));
    description.extend_from_slice(uri);
    let mut access = vec![0x30, u8::try_from(description.len()).expect("short")];
    access.extend(description);
    let mut syntax = vec![0x30, u8::try_from(access.len()).expect("short")];
    syntax.extend(access);
    params
        .custom_extensions
        .push(rcgen::CustomExtension::from_oid_content(
            &[1, 3, 6, 1, 5, 5, 7, 1, 1],
            syntax,
        ));
}

/// Serves one TLS handshake with `chain` on loopback, connects to it as `SITE` trusting
/// `trusted`, and returns what the verifier recorded.
fn connect(
    chain: Vec<CertificateDer<'static>>,
    key: &KeyPair,
    trusted: &Authority,
) -> Option<CertificateProblem> {
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let server = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("protocols")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("server config");
    let server = Arc::new(server);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let address = listener.local_addr().expect("address");
    let serving = thread::spawn(move || {
        let (socket, _) = listener.accept().expect("accept");
        let connection = ServerConnection::new(server).expect("server connection");
        let mut stream = StreamOwned::new(connection, socket);
        let mut buf = [0u8; 16];
        // The handshake fails on the client's side for every broken chain; that is expected.
        let _ = stream.read(&mut buf);
    });

    let mut roots = RootCertStore::empty();
    roots
        .add(trusted.root.der().clone())
        .expect("trust the root");
    let verifier =
        Arc::new(DiagnosingVerifier::new(Arc::new(roots), provider()).expect("verifier"));
    let client = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("protocols")
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    let name = ServerName::try_from(SITE).expect("server name");
    let connection = ClientConnection::new(Arc::new(client), name).expect("client connection");
    let socket = TcpStream::connect(address).expect("connect");
    let mut stream = StreamOwned::new(connection, socket);
    let handshake = stream
        .write_all(b"GET / HTTP/1.1\r\n\r\n")
        .and_then(|()| stream.flush());
    let problem = verifier.take(SITE);
    assert_eq!(
        handshake.is_err(),
        problem.is_some(),
        "a recorded problem is a failed handshake"
    );
    drop(stream);
    serving.join().expect("server thread");
    problem
}

#[test]
fn s3_4_a_whole_chain_from_a_trusted_root_records_nothing() {
    let ca = Authority::new("Test");
    let (leaf, key) = ca.leaf(&[SITE], |_| {});
    assert_eq!(
        connect(vec![leaf, ca.intermediate.der().clone()], &key, &ca),
        None
    );
}

#[test]
fn s3_4_a_leaf_sent_without_its_intermediate_is_the_sites_missing_chain() {
    let ca = Authority::new("Test");
    let (leaf, key) = ca.leaf(&[SITE], names_its_issuer);
    assert_eq!(
        connect(vec![leaf], &key, &ca),
        Some(CertificateProblem::MissingIntermediates)
    );
}

/// A private root that issues to sites directly publishes no intermediate: its leaf, alone
/// and untrusted, is as likely this deployment's missing trust as the site's fault.
#[test]
fn s3_4_a_leaf_a_private_root_issued_directly_is_the_site_or_the_trust_store() {
    let ca = Authority::new("Test");
    let private = Authority::new("Private");
    let key = KeyPair::generate().expect("key");
    let leaf = CertificateParams::new(vec![SITE.to_owned()])
        .expect("leaf params")
        .signed_by(&key, &private.root)
        .expect("leaf");
    assert_eq!(
        connect(vec![leaf.der().clone()], &key, &ca),
        Some(CertificateProblem::UntrustedIssuer)
    );
}

#[test]
fn s3_4_an_expired_leaf_is_expired_with_its_date() {
    let ca = Authority::new("Test");
    let (leaf, key) = ca.leaf(&[SITE], |p| {
        p.not_before = date_time_ymd(2020, 1, 1);
        p.not_after = date_time_ymd(2021, 3, 4);
    });
    let problem = connect(vec![leaf, ca.intermediate.der().clone()], &key, &ca).expect("a problem");
    let CertificateProblem::Expired {
        not_after: Some(at),
    } = &problem
    else {
        panic!("expected an expiry with its date, got {problem:?}");
    };
    assert_eq!(at.format("%Y-%m-%d").to_string(), "2021-03-04");
}

#[test]
fn s3_4_a_leaf_not_valid_yet_says_so() {
    let ca = Authority::new("Test");
    let (leaf, key) = ca.leaf(&[SITE], |p| {
        p.not_before = date_time_ymd(2090, 1, 1);
        p.not_after = date_time_ymd(2091, 1, 1);
    });
    let problem = connect(vec![leaf, ca.intermediate.der().clone()], &key, &ca);
    assert!(
        matches!(
            problem,
            Some(CertificateProblem::NotYetValid {
                not_before: Some(_)
            })
        ),
        "{problem:?}"
    );
}

#[test]
fn s3_4_a_self_signed_leaf_is_self_signed() {
    let ca = Authority::new("Test");
    let key = KeyPair::generate().expect("key");
    let cert = CertificateParams::new(vec![SITE.to_owned()])
        .expect("params")
        .self_signed(&key)
        .expect("cert");
    assert_eq!(
        connect(vec![cert.der().clone()], &key, &ca),
        Some(CertificateProblem::SelfSigned)
    );
}

#[test]
fn s3_4_a_leaf_for_another_name_names_the_names_it_carries() {
    let ca = Authority::new("Test");
    let (leaf, key) = ca.leaf(&["other.test", "www.other.test"], |_| {});
    let problem = connect(vec![leaf, ca.intermediate.der().clone()], &key, &ca);
    assert_eq!(
        problem,
        Some(CertificateProblem::WrongName {
            presented: vec!["other.test".into(), "www.other.test".into()]
        })
    );
}

#[test]
fn s3_4_a_chain_to_a_root_nothing_here_trusts_is_the_site_or_the_trust_store() {
    let trusted = Authority::new("Trusted");
    let stranger = Authority::new("Private");
    let (leaf, key) = stranger.leaf(&[SITE], |_| {});
    let problem = connect(
        vec![leaf, stranger.intermediate.der().clone()],
        &key,
        &trusted,
    );
    assert_eq!(problem, Some(CertificateProblem::UntrustedIssuer));
}

#[test]
fn s3_4_the_site_is_blamed_only_where_the_error_establishes_it() {
    let never = |_: &str| false;
    let blamed = [
        CertificateProblem::MissingIntermediates,
        CertificateProblem::Expired { not_after: None },
        CertificateProblem::NotYetValid { not_before: None },
        CertificateProblem::SelfSigned,
        CertificateProblem::WrongName {
            presented: vec!["other.test".into()],
        },
    ];
    for problem in &blamed {
        assert!(problem.site_at_fault(), "{problem:?}");
        let text = problem.describe(SITE, Route::Fetch, &never);
        assert!(text.contains("The fault is the site's"), "{text}");
        assert!(text.contains(SITE), "{text}");
        assert!(!text.contains("trust store"), "{text}");
    }
    let untrusted = CertificateProblem::UntrustedIssuer;
    assert!(!untrusted.site_at_fault());
    let text = untrusted.describe(SITE, Route::Fetch, &never);
    assert!(text.contains("this deployment's trust store"), "{text}");
    assert!(text.contains("either the site"), "{text}");
    assert!(!text.contains("The fault is the site's"), "{text}");
    let revoked = CertificateProblem::Other(OtherProblem::Revoked);
    assert!(!revoked.site_at_fault());
    assert!(
        revoked
            .describe(SITE, Route::Browser, &never)
            .contains("revoked")
    );
}

#[test]
fn s3_4_the_wording_is_the_frameworks_never_the_runtimes() {
    let all = |_: &str| true;
    let problems = [
        CertificateProblem::MissingIntermediates,
        CertificateProblem::Expired { not_after: None },
        CertificateProblem::SelfSigned,
        CertificateProblem::WrongName {
            presented: Vec::new(),
        },
        CertificateProblem::UntrustedIssuer,
        CertificateProblem::Other(OtherProblem::BadSignature),
    ];
    for problem in &problems {
        let text = problem.describe(SITE, Route::Browser, &all);
        for runtime in [
            "invalid peer certificate",
            "UnknownIssuer",
            "NotValidForName",
            "ERR_CERT",
            "rustls",
            "webpki",
            "--ignore-certificate-errors",
        ] {
            assert!(!text.contains(runtime), "{runtime} in {text}");
        }
    }
}

#[test]
fn s3_4_a_missing_chain_names_the_browser_only_to_a_fetch_whose_agent_holds_it() {
    let problem = CertificateProblem::MissingIntermediates;
    let navigate = |tool: &str| tool == "web::navigate";
    let nothing = |_: &str| false;
    assert!(
        problem
            .describe(SITE, Route::Fetch, &navigate)
            .contains("web::navigate may still open it")
    );
    assert!(
        !problem
            .describe(SITE, Route::Fetch, &nothing)
            .contains("web::navigate")
    );
    assert!(
        !problem
            .describe(SITE, Route::Browser, &navigate)
            .contains("web::navigate")
    );
}

#[test]
fn s3_4_chromium_net_errors_map_to_the_same_problems() {
    use certificates::from_chromium_net_error as chromium;
    assert_eq!(
        chromium("net::ERR_CERT_COMMON_NAME_INVALID"),
        Some(CertificateProblem::WrongName {
            presented: Vec::new()
        })
    );
    assert_eq!(
        chromium("net::ERR_CERT_DATE_INVALID"),
        Some(CertificateProblem::OutsideValidity)
    );
    assert_eq!(
        chromium("ERR_CERT_AUTHORITY_INVALID"),
        Some(CertificateProblem::UntrustedIssuer)
    );
    assert_eq!(
        chromium("net::ERR_CERT_REVOKED"),
        Some(CertificateProblem::Other(OtherProblem::Revoked))
    );
    assert_eq!(
        chromium("net::ERR_CERT_WEAK_KEY"),
        Some(CertificateProblem::Other(OtherProblem::Weak))
    );
    assert_eq!(
        chromium("net::ERR_CERT_SOMETHING_NEW"),
        Some(CertificateProblem::Other(OtherProblem::Unrecognised))
    );
    assert!(chromium("net::ERR_CERT_DATE_INVALID").is_some_and(|p| p.site_at_fault()));
    assert!(chromium("net::ERR_CERT_AUTHORITY_INVALID").is_some_and(|p| !p.site_at_fault()));
    assert_eq!(chromium("net::ERR_CONNECTION_REFUSED"), None);
    assert_eq!(chromium("net::ERR_NAME_NOT_RESOLVED"), None);
}
