//! Resolution judged once against a real DNS server on loopback, and
//! web::fetch's reqwest client held to the scope on every hop against a
//! real HTTP server on loopback.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use collegium_web_scope::{
    AddressRule, Refusal, Resolver, Scope, ScopeSettings, client_builder, unfollowed_redirect,
};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::rdata::{A, AAAA};
use hickory_proto::rr::{RData, Record, RecordType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UdpSocket};

/// A scripted authoritative server: each name answers its addresses with
/// TTL 0; any other name does not exist.
async fn dns_server(zone: &[(&str, &[&str])]) -> SocketAddr {
    let zone: HashMap<String, Vec<IpAddr>> = zone
        .iter()
        .map(|(name, addresses)| {
            (
                format!("{name}."),
                addresses
                    .iter()
                    .map(|a| a.parse().expect("test setup"))
                    .collect(),
            )
        })
        .collect();
    let socket = UdpSocket::bind("127.0.0.1:0").await.expect("test setup");
    let address = socket.local_addr().expect("test setup");
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        loop {
            let (len, peer) = socket.recv_from(&mut buf).await.expect("test setup");
            let query = Message::from_vec(&buf[..len]).expect("test setup");
            let question = query.queries[0].clone();
            let name = question.name.to_ascii().to_ascii_lowercase();
            let mut reply = Message::response(query.metadata.id, query.metadata.op_code);
            reply.metadata.authoritative = true;
            reply.metadata.recursion_desired = query.metadata.recursion_desired;
            reply.metadata.recursion_available = true;
            reply.add_query(question.clone());
            match zone.get(&name) {
                None => reply.metadata.response_code = ResponseCode::NXDomain,
                Some(addresses) => {
                    for address in addresses {
                        let rdata = match (address, question.query_type) {
                            (IpAddr::V4(a), RecordType::A) => RData::A(A(*a)),
                            (IpAddr::V6(a), RecordType::AAAA) => RData::AAAA(AAAA(*a)),
                            _ => continue,
                        };
                        reply.add_answer(Record::from_rdata(question.name.clone(), 0, rdata));
                    }
                }
            }
            socket
                .send_to(&reply.to_vec().expect("test setup"), peer)
                .await
                .expect("test setup");
        }
    });
    address
}

const ZONE: &[(&str, &[&str])] = &[
    ("public.test", &["93.184.215.14", "2606:4700::6810:84e5"]),
    ("private.test", &["10.0.0.1"]),
    ("mixed.test", &["93.184.215.14", "127.0.0.1"]),
    ("mixed6.test", &["93.184.215.14", "::1"]),
    ("metadata.test", &["169.254.169.254"]),
    ("loop.test", &["127.0.0.1"]),
];

fn scope(own_network_browsable: bool) -> Arc<Scope> {
    Arc::new(
        Scope::new(
            ScopeSettings {
                own_network_browsable,
                closed_hosts: vec!["intranet.test".into()],
            },
            Vec::new(),
        )
        .expect("test setup"),
    )
}

fn forbidden_rule(refusal: &Refusal) -> (Option<&str>, IpAddr, AddressRule) {
    match refusal {
        Refusal::Address {
            host, forbidden, ..
        } => (host.as_deref(), forbidden.address, forbidden.rule),
        other => panic!("expected an address refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn s3_4_every_answer_is_judged_and_one_forbidden_answer_refuses_the_name() {
    let resolver = Resolver::with_name_server(dns_server(ZONE).await).unwrap();
    let (open, closed) = (scope(true), scope(false));

    let public = closed.resolve(&resolver, "public.test", 443).await.unwrap();
    assert_eq!(public.len(), 2);
    assert!(public.iter().all(|a| a.port() == 443));

    let refusal = closed
        .resolve(&resolver, "private.test", 80)
        .await
        .unwrap_err();
    assert_eq!(
        forbidden_rule(&refusal),
        (
            Some("private.test"),
            "10.0.0.1".parse().unwrap(),
            AddressRule::Private
        )
    );
    assert_eq!(
        refusal.to_string(),
        "private.test resolves to 10.0.0.1, which is a private address (this deployment's own network), in 10.0.0.0/8: only the public internet is browsable here (§3.4)"
    );
    assert_eq!(
        open.resolve(&resolver, "private.test", 80).await.unwrap(),
        vec!["10.0.0.1:80".parse::<SocketAddr>().unwrap()]
    );

    for name in ["mixed.test", "mixed6.test"] {
        let refusal = closed.resolve(&resolver, name, 80).await.unwrap_err();
        assert_eq!(forbidden_rule(&refusal).2, AddressRule::Loopback, "{name}");
        assert_eq!(
            open.resolve(&resolver, name, 80).await.unwrap().len(),
            2,
            "{name}"
        );
    }

    for scope in [&open, &closed] {
        let refusal = scope
            .resolve(&resolver, "metadata.test", 80)
            .await
            .unwrap_err();
        assert_eq!(forbidden_rule(&refusal).2, AddressRule::CloudMetadata);
        assert_eq!(
            scope
                .resolve(&resolver, "nowhere.test", 80)
                .await
                .unwrap_err(),
            Refusal::NoAddress {
                host: "nowhere.test".into()
            }
        );
        assert!(matches!(
            scope.resolve(&resolver, "WIKI.Intranet.test", 80).await,
            Err(Refusal::ClosedHost { .. })
        ));
    }
}

/// An HTTP/1.1 server on loopback answering by path, counting connections.
async fn http_server(routes: Vec<(&'static str, String)>) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("test setup");
    let address = listener.local_addr().expect("test setup");
    let connections = Arc::new(AtomicUsize::new(0));
    let counter = connections.clone();
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.expect("test setup");
            counter.fetch_add(1, Ordering::SeqCst);
            let routes = routes.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = stream.read(&mut buf).await.expect("test setup");
                    if n == 0 {
                        return;
                    }
                    head.extend_from_slice(&buf[..n]);
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let response = match routes.iter().find(|(p, _)| *p == path) {
                    Some((_, location)) => format!(
                        "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    ),
                    None => {
                        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
                            .to_owned()
                    }
                };
                stream
                    .write_all(response.as_bytes())
                    .await
                    .expect("test setup");
            });
        }
    });
    (address, connections)
}

#[tokio::test]
async fn s3_4_every_redirect_hop_and_every_resolved_name_is_judged() {
    let resolver = Resolver::with_name_server(dns_server(ZONE).await).unwrap();
    let (server, _) = http_server(vec![
        ("/to-closed", "http://a.b.intranet.test/".into()),
        ("/to-file", "file:///etc/passwd".into()),
        (
            "/to-metadata",
            "http://169.254.169.254/latest/meta-data/".into(),
        ),
        ("/to-hex", "http://0x7f.1/".into()),
        ("/loop", "/loop".into()),
    ])
    .await;
    let port = server.port();
    let scope = scope(true);
    let client = client_builder(scope.clone(), resolver.clone())
        .build()
        .unwrap();

    let ok = client
        .get(format!("http://127.0.0.1:{port}/page"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.text().await.unwrap(), "hello");
    // A name answering loopback, pinned to the judged answer.
    let ok = client
        .get(format!("http://loop.test:{port}/page"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);

    let refused = |path: &'static str| {
        let client = client.clone();
        async move {
            let error = client
                .get(format!("http://127.0.0.1:{port}{path}"))
                .send()
                .await
                .unwrap_err();
            Refusal::find_in(&error)
                .cloned()
                .unwrap_or_else(|| panic!("{path}: {error:?}"))
        }
    };
    assert!(matches!(
        refused("/to-closed").await,
        Refusal::ClosedHost { .. }
    ));
    // reqwest hands back a 3xx to a Location it cannot follow.
    let left = client
        .get(format!("http://127.0.0.1:{port}/to-file"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        unfollowed_redirect(&scope, &left).unwrap().to_string(),
        "file: URLs are not opened here: only http and https URLs on the public internet are browsable (§3.4)"
    );
    assert_eq!(
        forbidden_rule(&refused("/to-metadata").await).2,
        AddressRule::CloudMetadata
    );
    assert!(matches!(
        refused("/loop").await,
        Refusal::TooManyRedirects { limit: 10, .. }
    ));

    // Undeclared, a redirect to another spelling of loopback is refused.
    // (The first URL is a literal, which the client never judges: web::fetch
    // calls judge_url first, which this test skips to reach the hop.)
    let closed = client_builder(self::scope(false), resolver.clone())
        .build()
        .unwrap();
    let error = closed
        .get(format!("http://127.0.0.1:{port}/to-hex"))
        .send()
        .await
        .unwrap_err();
    let refusal = Refusal::find_in(&error).expect("the redirect policy's refusal");
    assert_eq!(
        refusal.to_string(),
        "127.0.0.1 is a loopback address (this machine), in 127.0.0.0/8: only the public internet is browsable here (§3.4)"
    );
    let error = closed
        .get(format!("http://mixed.test:{port}/"))
        .send()
        .await
        .unwrap_err();
    let refusal = Refusal::find_in(&error).expect("the resolver's refusal");
    assert_eq!(
        forbidden_rule(refusal),
        (
            Some("mixed.test"),
            "127.0.0.1".parse().unwrap(),
            AddressRule::Loopback
        )
    );
}

#[tokio::test]
async fn s3_4_a_refused_name_never_reaches_the_server() {
    let resolver = Resolver::with_name_server(dns_server(ZONE).await).unwrap();
    let (server, connections) = http_server(Vec::new()).await;
    let client = client_builder(scope(false), resolver).build().unwrap();
    for name in [
        "loop.test",
        "mixed.test",
        "mixed6.test",
        "localhost",
        "x.localhost",
    ] {
        let error = client
            .get(format!("http://{name}:{}/", server.port()))
            .send()
            .await
            .unwrap_err();
        let refusal = Refusal::find_in(&error).unwrap_or_else(|| panic!("{name}: {error:?}"));
        assert_eq!(forbidden_rule(refusal).2, AddressRule::Loopback, "{name}");
    }
    assert_eq!(connections.load(Ordering::SeqCst), 0);
}
