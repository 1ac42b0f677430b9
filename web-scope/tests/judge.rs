//! The SSRF matrix of issue 17 that needs no network: literal addresses in
//! every spelling, userinfo tricks, schemes and closed hosts, in both modes.

use std::net::IpAddr;

use collegium_web_scope::{AddressRule, Embedding, Refusal, Scope, ScopeSettings, TargetHost};

/// A global address standing in for the worker's own public one.
const OWN_GLOBAL: &str = "45.33.32.156";

fn scope(own_network_browsable: bool) -> Scope {
    let own: Vec<IpAddr> = vec![
        "127.0.0.1".parse().expect("test setup"),
        "::1".parse().expect("test setup"),
        OWN_GLOBAL.parse().expect("test setup"),
    ];
    Scope::new(
        ScopeSettings {
            own_network_browsable,
            closed_hosts: vec!["Intranet.Test.".into(), "bücher.example".into()],
        },
        own,
    )
    .expect("test setup")
}

fn refused_address(scope: &Scope, url: &str) -> (IpAddr, AddressRule, Option<Embedding>, String) {
    match scope.judge_url(url) {
        Err(refusal @ Refusal::Address { .. }) => {
            let text = refusal.to_string();
            let Refusal::Address { forbidden, .. } = refusal else {
                unreachable!()
            };
            (
                forbidden.address,
                forbidden.rule,
                forbidden.embedded.map(|(e, _)| e),
                text,
            )
        }
        other => panic!("{url}: expected an address refusal, got {other:?}"),
    }
}

/// Spellings of 127.0.0.1 that `url` turns into it.
const LOOPBACK_SPELLINGS: &[&str] = &[
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.1/",
    "http://127.0.0.1./",
    "http://0x7f.1/",
    "http://\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}/",
    "http://public.test@127.0.0.1/",
    "http://127.0.0.1\\@public.test/",
    "http://127.0.0.1#@public.test",
    "HTTP://127.0.0.1:8080/x",
];

#[test]
fn s3_4_every_spelling_of_loopback_is_refused_naming_127_0_0_1() {
    let scope = scope(false);
    for url in LOOPBACK_SPELLINGS {
        let (address, rule, _, text) = refused_address(&scope, url);
        assert_eq!(address, "127.0.0.1".parse::<IpAddr>().unwrap(), "{url}");
        assert_eq!(rule, AddressRule::Loopback, "{url}");
        assert_eq!(
            text,
            "127.0.0.1 is a loopback address (this machine), in 127.0.0.0/8: only the public internet is browsable here (§3.4)",
            "{url}"
        );
    }
}

#[test]
fn s3_4_declared_own_network_opens_loopback_on_the_host_url_connects_to() {
    let scope = scope(true);
    for url in LOOPBACK_SPELLINGS {
        let target = scope
            .judge_url(url)
            .unwrap_or_else(|r| panic!("{url}: {r}"));
        assert_eq!(
            target.host,
            TargetHost::Address("127.0.0.1".parse().unwrap()),
            "{url}"
        );
    }
}

/// (URL, address named, rule, embedding, lifted by the declaration)
const MATRIX: &[(&str, &str, AddressRule, Option<Embedding>, bool)] = &[
    (
        "http://0.0.0.0/",
        "0.0.0.0",
        AddressRule::ThisNetwork,
        None,
        false,
    ),
    (
        "http://0/",
        "0.0.0.0",
        AddressRule::ThisNetwork,
        None,
        false,
    ),
    ("http://[::]/", "::", AddressRule::Unspecified, None, false),
    ("http://[::1]/", "::1", AddressRule::Loopback, None, true),
    (
        "http://[::ffff:127.0.0.1]/",
        "::ffff:127.0.0.1",
        AddressRule::Loopback,
        Some(Embedding::Mapped),
        true,
    ),
    (
        "http://[::127.0.0.1]/",
        "::127.0.0.1",
        AddressRule::Loopback,
        Some(Embedding::Compatible),
        true,
    ),
    (
        "http://[64:ff9b::7f00:1]/",
        "64:ff9b::7f00:1",
        AddressRule::Loopback,
        Some(Embedding::Nat64),
        true,
    ),
    (
        "http://[64:ff9b::a9fe:a9fe]/",
        "64:ff9b::a9fe:a9fe",
        AddressRule::CloudMetadata,
        Some(Embedding::Nat64),
        false,
    ),
    (
        "http://[64:ff9b:1::a00:1]/",
        "64:ff9b:1::a00:1",
        AddressRule::Private,
        Some(Embedding::LocalUseNat64),
        true,
    ),
    (
        "http://[2002:7f00:1::]/",
        "2002:7f00:1::",
        AddressRule::Loopback,
        Some(Embedding::SixToFour),
        true,
    ),
    (
        "http://[::ffff:0:a00:1]/",
        "::ffff:0:a00:1",
        AddressRule::Private,
        Some(Embedding::Translated),
        true,
    ),
    // Teredo: server 10.0.0.1; client 127.0.0.1 stored inverted.
    (
        "http://[2001:0:a00:1::]/",
        "2001:0:a00:1::",
        AddressRule::Private,
        Some(Embedding::TeredoServer),
        true,
    ),
    (
        "http://[2001:0:4136:e378::80ff:fffe]/",
        "2001:0:4136:e378::80ff:fffe",
        AddressRule::Loopback,
        Some(Embedding::TeredoClient),
        true,
    ),
    (
        "http://10.0.0.1/",
        "10.0.0.1",
        AddressRule::Private,
        None,
        true,
    ),
    (
        "http://172.16.0.1/",
        "172.16.0.1",
        AddressRule::Private,
        None,
        true,
    ),
    (
        "http://192.168.0.1/",
        "192.168.0.1",
        AddressRule::Private,
        None,
        true,
    ),
    (
        "http://100.64.0.1/",
        "100.64.0.1",
        AddressRule::SharedAddressSpace,
        None,
        true,
    ),
    (
        "http://100.100.100.200/",
        "100.100.100.200",
        AddressRule::CloudMetadata,
        None,
        false,
    ),
    (
        "http://169.254.169.254/latest/meta-data/",
        "169.254.169.254",
        AddressRule::CloudMetadata,
        None,
        false,
    ),
    (
        "http://[::ffff:169.254.169.254]/",
        "::ffff:169.254.169.254",
        AddressRule::CloudMetadata,
        Some(Embedding::Mapped),
        false,
    ),
    (
        "http://[fd00:ec2::254]/",
        "fd00:ec2::254",
        AddressRule::CloudMetadata,
        None,
        false,
    ),
    (
        "http://[fd12:3456::1]/",
        "fd12:3456::1",
        AddressRule::UniqueLocal,
        None,
        true,
    ),
    (
        "http://169.254.1.1/",
        "169.254.1.1",
        AddressRule::LinkLocal,
        None,
        false,
    ),
    (
        "http://[fe80::1]/",
        "fe80::1",
        AddressRule::LinkLocal,
        None,
        false,
    ),
    (
        "http://224.0.0.1/",
        "224.0.0.1",
        AddressRule::Multicast,
        None,
        false,
    ),
    (
        "http://[ff02::1]/",
        "ff02::1",
        AddressRule::Multicast,
        None,
        false,
    ),
    (
        "http://198.18.0.1/",
        "198.18.0.1",
        AddressRule::Benchmarking,
        None,
        false,
    ),
    (
        "http://255.255.255.255/",
        "255.255.255.255",
        AddressRule::Broadcast,
        None,
        false,
    ),
    (
        "http://240.0.0.1/",
        "240.0.0.1",
        AddressRule::Reserved,
        None,
        false,
    ),
    (
        "http://192.0.0.8/",
        "192.0.0.8",
        AddressRule::IetfProtocolAssignment,
        None,
        false,
    ),
    (
        "http://192.0.2.1/",
        "192.0.2.1",
        AddressRule::Documentation,
        None,
        false,
    ),
    (
        "http://198.51.100.1/",
        "198.51.100.1",
        AddressRule::Documentation,
        None,
        false,
    ),
    (
        "http://203.0.113.1/",
        "203.0.113.1",
        AddressRule::Documentation,
        None,
        false,
    ),
    (
        "http://192.88.99.1/",
        "192.88.99.1",
        AddressRule::Relay6to4Anycast,
        None,
        false,
    ),
    (
        "http://[100::1]/",
        "100::1",
        AddressRule::DiscardOnly,
        None,
        false,
    ),
    (
        "http://[2001:db8::1]/",
        "2001:db8::1",
        AddressRule::Documentation,
        None,
        false,
    ),
    (
        "http://[2001:2::1]/",
        "2001:2::1",
        AddressRule::Benchmarking,
        None,
        false,
    ),
    (
        "http://[2001:10::1]/",
        "2001:10::1",
        AddressRule::IetfProtocolAssignment,
        None,
        false,
    ),
    (
        "http://[3fff::1]/",
        "3fff::1",
        AddressRule::Documentation,
        None,
        false,
    ),
    (
        "http://[5f00::1]/",
        "5f00::1",
        AddressRule::SegmentRouting,
        None,
        false,
    ),
    (
        "http://[fec0::1]/",
        "fec0::1",
        AddressRule::SiteLocal,
        None,
        false,
    ),
    (
        "http://[4000::1]/",
        "4000::1",
        AddressRule::Reserved,
        None,
        false,
    ),
    (
        "http://45.33.32.156/",
        OWN_GLOBAL,
        AddressRule::ThisHost,
        None,
        true,
    ),
    (
        "http://[::ffff:45.33.32.156]/",
        "::ffff:45.33.32.156",
        AddressRule::ThisHost,
        Some(Embedding::Mapped),
        true,
    ),
];

#[test]
fn s3_4_the_matrix_is_refused_undeclared_naming_address_and_rule() {
    let scope = scope(false);
    for (url, address, rule, embedding, _) in MATRIX {
        let (got, got_rule, got_embedding, text) = refused_address(&scope, url);
        assert_eq!(got, address.parse::<IpAddr>().unwrap(), "{url}");
        assert_eq!(got_rule, *rule, "{url}");
        assert_eq!(got_embedding, *embedding, "{url}");
        assert!(text.starts_with(&got.to_string()), "{url}: {text}");
        assert!(text.contains(rule.description()), "{url}: {text}");
        assert!(
            text.ends_with("only the public internet is browsable here (§3.4)"),
            "{text}"
        );
    }
}

#[test]
fn s3_4_the_declaration_lifts_only_loopback_private_and_this_host() {
    let scope = scope(true);
    for (url, address, rule, _, lifted) in MATRIX {
        match scope.judge_url(url) {
            Ok(target) => {
                assert!(lifted, "{url} must stay refused");
                assert_eq!(
                    target.host,
                    TargetHost::Address(address.parse().unwrap()),
                    "{url}"
                );
            }
            Err(refusal) => {
                assert!(!lifted, "{url} must be open: {refusal}");
                let Refusal::Address { forbidden, .. } = &refusal else {
                    panic!("{url}: {refusal:?}")
                };
                assert_eq!(forbidden.rule, *rule, "{url}");
                assert!(
                    refusal
                        .to_string()
                        .ends_with("stays refused although this deployment declared its own network browsable (§3.4)"),
                    "{refusal}"
                );
            }
        }
    }
}

#[test]
fn s3_4_embedded_text_names_the_carried_address() {
    let (_, _, _, text) = refused_address(&scope(false), "http://[64:ff9b::a9fe:a9fe]/");
    assert_eq!(
        text,
        "64:ff9b::a9fe:a9fe (NAT64, carrying 169.254.169.254) is a cloud metadata address (the instance's credential service), in 169.254.169.254/32: only the public internet is browsable here (§3.4)"
    );
}

#[test]
fn s3_4_public_addresses_pass_in_both_modes() {
    for declared in [false, true] {
        let scope = scope(declared);
        for (url, address) in [
            ("https://93.184.215.14/", "93.184.215.14"),
            (
                "http://[2606:4700::6810:84e5]:8443/x",
                "2606:4700::6810:84e5",
            ),
            ("http://[::ffff:8.8.8.8]/", "::ffff:8.8.8.8"),
            ("http://[64:ff9b::808:808]/", "64:ff9b::808:808"),
            ("http://[2002:808:808::1]/", "2002:808:808::1"),
            ("http://100.128.0.1/", "100.128.0.1"),
            ("http://172.32.0.1/", "172.32.0.1"),
        ] {
            let target = scope
                .judge_url(url)
                .unwrap_or_else(|r| panic!("{url}: {r}"));
            assert_eq!(target.host, TargetHost::Address(address.parse().unwrap()));
        }
        let target = scope.judge_url("https://Example.COM./a?b#c").unwrap();
        assert_eq!(target.host, TargetHost::Name("example.com.".into()));
        assert_eq!(target.port, 443);
    }
}

#[test]
fn s3_4_localhost_and_beneath_it_are_this_machine_without_resolving() {
    for url in [
        "http://localhost/",
        "http://x.localhost:8080/",
        "http://LOCALHOST./",
    ] {
        match scope(false).judge_url(url) {
            Err(Refusal::Address {
                host, forbidden, ..
            }) => {
                assert!(host.unwrap().contains("localhost"));
                assert_eq!(forbidden.rule, AddressRule::Loopback);
            }
            other => panic!("{url}: {other:?}"),
        }
        let target = scope(true).judge_url(url).unwrap();
        assert!(matches!(target.host, TargetHost::ThisMachine(_)), "{url}");
    }
    let text = scope(false)
        .judge_url("http://x.localhost/")
        .unwrap_err()
        .to_string();
    assert_eq!(
        text,
        "x.localhost resolves to 127.0.0.1, which is a loopback address (this machine), in 127.0.0.0/8: only the public internet is browsable here (§3.4)"
    );
}

#[test]
fn s3_4_only_http_and_https_are_opened_in_both_modes() {
    for declared in [false, true] {
        let scope = scope(declared);
        for (url, scheme) in [
            ("file:///etc/passwd", "file"),
            ("FILE:///etc/passwd", "file"),
            ("data:text/html,<p>hi</p>", "data"),
            ("javascript:alert(1)", "javascript"),
            ("view-source:http://example.com/", "view-source"),
            ("ftp://example.com/pub", "ftp"),
            ("ws://example.com/", "ws"),
        ] {
            match scope.judge_url(url) {
                Err(refusal @ Refusal::Scheme { .. }) => assert_eq!(
                    refusal.to_string(),
                    format!(
                        "{scheme}: URLs are not opened here: only http and https URLs on the public internet are browsable (§3.4)"
                    )
                ),
                other => panic!("{url}: {other:?}"),
            }
        }
    }
}

#[test]
fn s3_4_closed_hosts_close_every_subdomain_in_both_modes() {
    for declared in [false, true] {
        let scope = scope(declared);
        for url in [
            "http://intranet.test/",
            "https://WIKI.Intranet.Test./",
            "http://a.b.intranet.test:8080/x",
            "http://user@a.intranet.test/",
            "http://xn--bcher-kva.example/",
            "http://shop.BÜCHER.example/",
        ] {
            match scope.judge_url(url) {
                Err(refusal @ Refusal::ClosedHost { .. }) => {
                    assert!(
                        refusal
                            .to_string()
                            .contains("closed to agents by this deployment")
                    )
                }
                other => panic!("{url}: {other:?}"),
            }
        }
        for url in ["http://notintranet.test/", "http://intranet.test.example/"] {
            assert!(scope.judge_url(url).is_ok(), "{url}");
        }
    }
    let text = scope(false)
        .judge_url("https://WIKI.Intranet.Test./")
        .unwrap_err()
        .to_string();
    assert_eq!(
        text,
        "wiki.intranet.test. is closed to agents by this deployment (intranet.test and every host beneath it) (§3.4)"
    );
}

#[test]
fn s3_4_a_closed_host_entry_that_is_not_a_host_name_is_an_error_naming_it() {
    for entry in [
        "",
        "https://x.test/",
        "10.0.0.1",
        "*.x.test",
        "x.test:80",
        "a..b",
    ] {
        let err = Scope::new(
            ScopeSettings {
                own_network_browsable: false,
                closed_hosts: vec![entry.into()],
            },
            Vec::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains(&format!("{entry:?}")), "{err}");
    }
}

#[test]
fn s3_4_unparseable_urls_are_refused_in_the_framework_words() {
    let scope = scope(false);
    for (input, words) in [
        ("example.com/page", "it is not an absolute URL"),
        (
            "http://exa mple.com/",
            "its host is not a valid international domain name",
        ),
        ("http://a<b.com/", "its host"),
        ("http://example.com:99999/", "its port is not a number"),
        ("http://[::1/", "not a valid IPv6 address"),
        ("http:///", "names no host"),
    ] {
        match scope.judge_url(input) {
            Err(refusal @ Refusal::Unparseable { .. }) => {
                assert!(refusal.to_string().contains(words), "{input}: {refusal}")
            }
            other => panic!("{input}: {other:?}"),
        }
    }
}

#[test]
fn s3_4_connect_targets_are_judged_like_hosts() {
    let scope = scope(false);
    for authority in ["127.0.0.1:22", "[::1]:80", "0x7f.1:443", "localhost:80"] {
        assert!(
            matches!(
                scope.judge_authority(authority),
                Err(Refusal::Address { .. })
            ),
            "{authority}"
        );
    }
    assert!(matches!(
        scope.judge_authority("a.intranet.test:443"),
        Err(Refusal::ClosedHost { .. })
    ));
    for malformed in [
        "example.com",
        "user@example.com:443",
        "example.com:443/x",
        "",
    ] {
        assert!(
            matches!(
                scope.judge_authority(malformed),
                Err(Refusal::Unparseable { .. })
            ),
            "{malformed}"
        );
    }
    let target = scope.judge_authority("example.com:443").unwrap();
    assert_eq!(
        (target.host, target.port),
        (TargetHost::Name("example.com".into()), 443)
    );
}

#[test]
fn s3_4_boot_line_states_both_settings() {
    assert_eq!(
        scope(false).boot_line(),
        "web scope: own network not browsable: only the public internet is open to agents; closed hosts (each with every subdomain): intranet.test, xn--bcher-kva.example"
    );
    assert!(
        scope(true)
            .boot_line()
            .contains("own network DECLARED BROWSABLE")
    );
    let open = Scope::new(ScopeSettings::default(), Vec::new()).unwrap();
    assert!(open.boot_line().ends_with("no hosts closed"));
}

#[test]
fn s3_4_this_hosts_addresses_include_loopback_and_are_refused_as_this_host() {
    let own = collegium_web_scope::own_addresses().unwrap();
    assert!(own.contains(&"127.0.0.1".parse().unwrap()), "{own:?}");
    let scope = Scope::new(ScopeSettings::default(), own.clone()).unwrap();
    for address in own {
        assert!(scope.judge_address(address).is_err(), "{address}");
    }
}
