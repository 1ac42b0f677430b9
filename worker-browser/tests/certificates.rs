//! A certificate that fails on the fetch route is told in the framework's
//! words, blaming the site only where the error establishes it (§3.4). A
//! test CA issues each chain; the worker trusts it as a deployment's own
//! authority (`--trust`), and a site serves over TLS on loopback.

mod support;

use std::sync::Arc;
use std::time::Duration;

use collegium_proto::toolset::v1::{Call, tool_result::Outcome};
use collegium_web_scope::{Scope, ScopeSettings, own_addresses};
use collegium_worker_browser::call::WebCall;
use collegium_worker_browser::fetch::{Fetcher, Trust};
use collegium_worker_kit::admission::now_ms;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use support::site::{Answer, Site};

fn ca(name: &str) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
}

struct Authority {
    root: CertifiedIssuer<'static, KeyPair>,
    intermediate: CertifiedIssuer<'static, KeyPair>,
}

impl Authority {
    fn new() -> Self {
        let root = CertifiedIssuer::self_signed(ca("Test Root"), KeyPair::generate().expect("key"))
            .expect("root");
        let intermediate = CertifiedIssuer::signed_by(
            ca("Test Intermediate"),
            KeyPair::generate().expect("key"),
            &root,
        )
        .expect("intermediate");
        Self { root, intermediate }
    }

    /// The root as a PEM file the worker is told to trust.
    fn trusted(&self, dir: &std::path::Path) -> Trust {
        let path = dir.join("authority.pem");
        std::fs::write(&path, self.root.pem()).expect("write the authority");
        Trust {
            extra_authorities: vec![path],
        }
    }

    /// A site for `localhost` serving `chain(leaf, intermediate)`.
    async fn site(
        &self,
        chain: impl FnOnce(
            CertificateDer<'static>,
            CertificateDer<'static>,
        ) -> Vec<CertificateDer<'static>>,
    ) -> Site {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
        names_its_issuer(&mut params);
        let leaf = params.signed_by(&key, &self.intermediate).expect("leaf");
        let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("protocols")
        .with_no_client_auth()
        .with_single_cert(
            chain(leaf.der().clone(), self.intermediate.der().clone()),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .expect("server config");
        let site = Site::start_tls(tls).await;
        site.script(
            "/",
            vec![Answer::html(
                "<html><body><main><p>Secure page.</p></main></body></html>",
            )],
        );
        site
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

async fn fetch_text(trust: &Trust, site: &Site) -> (&'static str, String) {
    let scope = Scope::new(
        ScopeSettings {
            own_network_browsable: true,
            closed_hosts: Vec::new(),
        },
        own_addresses().expect("own addresses"),
    )
    .expect("scope");
    let fetcher = Fetcher::new(Arc::new(scope), trust).expect("fetcher");
    let url = format!("https://localhost:{}/", site.address.port());
    let call = WebCall::read(&Call {
        tool: "fetch".into(),
        arguments_json: serde_json::json!({"url": url}).to_string().into_bytes(),
        held_tools: vec!["web::navigate".into()],
        deadline_unix_ms: now_ms() + Duration::from_secs(20).as_millis() as u64,
        ..Call::default()
    })
    .expect("call");
    match fetcher.fetch(&call).await.outcome.expect("outcome") {
        Outcome::Success(s) => ("success", s.text),
        Outcome::Refusal(r) => ("refusal", r.message),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn s3_4_a_whole_chain_from_a_trusted_authority_reads() {
    let dir = tempfile::tempdir().expect("dir");
    let authority = Authority::new();
    let site = authority
        .site(|leaf, intermediate| vec![leaf, intermediate])
        .await;
    let (kind, text) = fetch_text(&authority.trusted(dir.path()), &site).await;
    assert_eq!(kind, "success", "{text}");
    assert!(text.contains("Secure page."), "{text}");
}

#[tokio::test]
async fn s3_4_a_chain_sent_without_its_intermediate_blames_the_site() {
    let dir = tempfile::tempdir().expect("dir");
    let authority = Authority::new();
    let site = authority.site(|leaf, _| vec![leaf]).await;
    let (kind, text) = fetch_text(&authority.trusted(dir.path()), &site).await;
    assert_eq!(kind, "refusal", "{text}");
    assert!(
        text.contains("without the intermediate certificates"),
        "{text}"
    );
    assert!(text.contains("The fault is the site's"), "{text}");
    assert!(
        !text.to_lowercase().contains("rustls"),
        "never the runtime's words: {text}"
    );
}

#[tokio::test]
async fn s3_4_an_issuer_nothing_here_trusts_may_be_the_site_or_the_trust_store() {
    let authority = Authority::new();
    let site = authority
        .site(|leaf, intermediate| vec![leaf, intermediate])
        .await;
    let (kind, text) = fetch_text(&Trust::default(), &site).await;
    assert_eq!(kind, "refusal", "{text}");
    assert!(text.contains("trust store"), "{text}");
    assert!(!text.contains("The fault is the site's"), "{text}");
}

/// The browser route, real Chromium against the same TLS sites, with the
/// fetch route's verifier asked where Chromium's error cannot say whose
/// fault it is, as the worker wires it. As root (as tests run) Chromium
/// runs without its sandbox.
async fn navigate_text(site: &Site) -> String {
    use collegium_worker_browser::session::{Action, Outcome, Sessions, SessionsConfig};
    let scope = Scope::new(
        ScopeSettings {
            own_network_browsable: true,
            closed_hosts: Vec::new(),
        },
        own_addresses().expect("own addresses"),
    )
    .expect("scope");
    let checker = Arc::new(Fetcher::new(Arc::new(scope), &Trust::default()).expect("fetcher"));
    let mut config = SessionsConfig::new(std::path::PathBuf::from("/usr/bin/chromium"), None, 1);
    config.root_without_sandbox = true;
    config.check_certificate = Arc::new(move |url| {
        let checker = checker.clone();
        Box::pin(async move { checker.certificate_problem(&url).await })
    });
    let sessions = Sessions::new(config);
    let url = format!("https://localhost:{}/", site.address.port());
    let all = |_: &str| true;
    let outcome = sessions.act("t", Action::Navigate { url }, &all).await;
    sessions.end("t").await;
    match outcome {
        Outcome::Refused(text) => text,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn s3_4_the_browser_blames_a_self_signed_site() {
    let key = KeyPair::generate().expect("key");
    let leaf = CertificateParams::new(vec!["localhost".to_string()])
        .expect("params")
        .self_signed(&key)
        .expect("self-signed");
    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocols")
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    )
    .expect("server config");
    let site = Site::start_tls(tls).await;
    let text = navigate_text(&site).await;
    assert!(text.contains("it is self-signed"), "{text}");
    assert!(text.contains("The fault is the site's"), "{text}");
    assert!(!text.contains("ERR_"), "never the runtime's words: {text}");
}

#[tokio::test]
async fn s3_4_the_browser_names_the_trust_store_for_an_issuer_nothing_here_trusts() {
    let authority = Authority::new();
    let site = authority
        .site(|leaf, intermediate| vec![leaf, intermediate])
        .await;
    let text = navigate_text(&site).await;
    assert!(text.contains("trust store"), "{text}");
    assert!(!text.contains("The fault is the site's"), "{text}");
    assert!(!text.contains("ERR_"), "never the runtime's words: {text}");
}
