//! The egress proxy on loopback, driven with raw HTTP/1.1 as Chromium
//! speaks it, against a real upstream server on loopback (§3.4).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use collegium_web_scope::{AddressRule, Refusal, Resolver, Scope, ScopeSettings};
use collegium_worker_browser::proxy::{EgressProxy, REFUSAL_HEADER, RunningProxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use url::Url;

/// An HTTP server on loopback that keeps every request head it is sent.
struct Upstream {
    address: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
    connections: Arc<Mutex<usize>>,
}

impl Upstream {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("test setup");
        let address = listener.local_addr().expect("test setup");
        let heads = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(Mutex::new(0));
        let (kept, counted) = (heads.clone(), connections.clone());
        tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.expect("test setup");
                *counted.lock().expect("test setup") += 1;
                let kept = kept.clone();
                tokio::spawn(async move {
                    let head = read_head(&mut stream).await;
                    kept.lock().expect("test setup").push(head);
                    stream
                        .write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nKeep-Alive: timeout=5\r\nConnection: close\r\n\r\nhello",
                        )
                        .await
                        .expect("test setup");
                });
            }
        });
        Self {
            address,
            heads,
            connections,
        }
    }

    fn connections(&self) -> usize {
        *self.connections.lock().expect("test setup")
    }
}

async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.expect("test setup") == 0 {
            break;
        }
        head.push(byte[0]);
    }
    String::from_utf8(head).expect("test setup")
}

async fn proxy(own_network_browsable: bool) -> RunningProxy {
    let scope = Scope::new(
        ScopeSettings {
            own_network_browsable,
            closed_hosts: vec!["intranet.test".into()],
        },
        Vec::new(),
    )
    .expect("test setup");
    // No name in these tests is resolved; a name server nothing answers on
    // would only turn a wrong resolution into a visible failure.
    let resolver =
        Resolver::with_name_server("127.0.0.1:9".parse().expect("test setup")).expect("test setup");
    EgressProxy::start(Arc::new(scope), resolver)
        .await
        .expect("test setup")
}

/// Sends one raw request to the proxy and reads the whole answer.
async fn exchange(proxy: &RunningProxy, request: &str) -> String {
    let mut stream = TcpStream::connect(proxy.address())
        .await
        .expect("test setup");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("test setup");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("test setup");
    String::from_utf8(answer).expect("test setup")
}

fn get(url: &str) -> String {
    format!(
        "GET {url} HTTP/1.1\r\nHost: {}\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\nConnection: close\r\n\r\n",
        Url::parse(url).map_or("x".into(), |u| u.host_str().unwrap_or("x").to_owned())
    )
}

/// Opens a tunnel; `Ok` holds the stream past the 200, `Err` the answer.
async fn connect(proxy: &RunningProxy, authority: &str) -> Result<TcpStream, String> {
    let mut stream = TcpStream::connect(proxy.address())
        .await
        .expect("test setup");
    stream
        .write_all(format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes())
        .await
        .expect("test setup");
    let head = read_head(&mut stream).await;
    if head.starts_with("HTTP/1.1 200") {
        Ok(stream)
    } else {
        let mut rest = Vec::new();
        // A refusal's body follows; the connection stays open for more.
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .map_or(0, |n| n.trim().parse().expect("test setup"));
        rest.resize(length, 0);
        stream.read_exact(&mut rest).await.expect("test setup");
        Err(head + &String::from_utf8(rest).expect("test setup"))
    }
}

fn refusal_header(answer: &str) -> &str {
    answer
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{REFUSAL_HEADER}: ")))
        .unwrap_or_else(|| panic!("no refusal header in {answer}"))
}

const LOOPBACK_REFUSAL: &str = "127.0.0.1 is a loopback address (this machine), in 127.0.0.0/8: only the public internet is browsable here (§3.4)";

#[tokio::test]
async fn s3_4_declared_own_network_forwards_a_get_without_proxy_headers() {
    let upstream = Upstream::start().await;
    let proxy = proxy(true).await;
    let url = format!("http://{}/page?q=1", upstream.address);
    let answer = exchange(&proxy, &get(&url)).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(answer.ends_with("hello"), "{answer}");
    assert!(
        !answer.to_ascii_lowercase().contains("keep-alive: timeout"),
        "{answer}"
    );
    let heads = upstream.heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 1);
    let head = heads[0].to_ascii_lowercase();
    assert!(head.starts_with("get /page?q=1 http/1.1\r\n"), "{head}");
    assert!(
        head.contains(&format!("host: {}\r\n", upstream.address)),
        "{head}"
    );
    assert!(!head.contains("proxy-"), "{head}");
}

#[tokio::test]
async fn s3_4_declared_own_network_tunnels_a_connect() {
    let upstream = Upstream::start().await;
    let proxy = proxy(true).await;
    for authority in [
        upstream.address.to_string(),
        format!("localhost:{}", upstream.address.port()),
    ] {
        let mut tunnel = connect(&proxy, &authority).await.unwrap();
        tunnel
            .write_all(b"GET /through HTTP/1.1\r\nHost: upstream\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        tunnel.read_to_string(&mut answer).await.unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 200 OK") && answer.ends_with("hello"),
            "{answer}"
        );
    }
    assert!(upstream.heads.lock().unwrap()[0].starts_with("GET /through HTTP/1.1"));
}

#[tokio::test]
async fn s3_4_undeclared_the_same_get_and_connect_are_refused_and_the_upstream_is_silent() {
    let upstream = Upstream::start().await;
    let proxy = proxy(false).await;
    let url = format!("http://{}/page", upstream.address);
    let answer = exchange(&proxy, &get(&url)).await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden"), "{answer}");
    assert_eq!(refusal_header(&answer), LOOPBACK_REFUSAL);
    assert!(answer.ends_with(LOOPBACK_REFUSAL), "{answer}");

    let answer = connect(&proxy, &upstream.address.to_string())
        .await
        .unwrap_err();
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden"), "{answer}");
    assert_eq!(refusal_header(&answer), LOOPBACK_REFUSAL);
    assert_eq!(upstream.connections(), 0);

    // The worker reports the refused load as the refusal, found by URL: the
    // request itself, and for https the tunnel to its host and port.
    let log = proxy.log();
    let refusal = log.refusal_for(&Url::parse(&url).unwrap()).unwrap();
    assert_eq!(refusal.to_string(), LOOPBACK_REFUSAL);
    let https = Url::parse(&format!(
        "https://127.0.0.1:{}/other",
        upstream.address.port()
    ))
    .unwrap();
    assert!(matches!(
        log.refusal_for(&https),
        Some(Refusal::Address { .. })
    ));
    assert!(
        log.refusal_for(&Url::parse("https://example.com/").unwrap())
            .is_none()
    );
}

#[tokio::test]
async fn s3_4_raw_attempts_on_the_proxy_are_refused_naming_the_address() {
    let proxy = proxy(false).await;
    for (authority, named) in [
        ("127.0.0.1:22", "127.0.0.1"),
        ("[::1]:80", "::1"),
        ("0x7f.1:443", "127.0.0.1"),
    ] {
        let answer = connect(&proxy, authority).await.unwrap_err();
        assert!(answer.starts_with("HTTP/1.1 403"), "{authority}: {answer}");
        assert!(
            refusal_header(&answer).starts_with(&format!("{named} is a loopback address")),
            "{answer}"
        );
    }
    let answer = exchange(&proxy, &get("http://0x7f.1/")).await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert_eq!(refusal_header(&answer), LOOPBACK_REFUSAL);
    assert!(
        proxy
            .log()
            .refusal_for(&Url::parse("http://0x7f.1/").unwrap())
            .is_some()
    );
    // Another spelling of the same host and port finds it through the key.
    assert!(
        proxy
            .log()
            .refusal_for(&Url::parse("http://127.0.0.1:80/other").unwrap())
            .is_some()
    );
}

#[tokio::test]
async fn s3_4_schemes_and_closed_hosts_are_refused_in_both_modes() {
    for declared in [false, true] {
        let proxy = proxy(declared).await;
        let answer = exchange(
            &proxy,
            "GET file://localhost/etc/passwd HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert!(
            refusal_header(&answer).starts_with("file: URLs are not opened here"),
            "{answer}"
        );
        // No authority at all: hyper refuses to read it as a request.
        let answer = exchange(
            &proxy,
            "GET file:///etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
        assert!(!answer.contains("root:"), "{answer}");

        for authority in [
            "intranet.test:443",
            "WIKI.Intranet.Test.:443",
            "a.b.intranet.test:80",
        ] {
            let answer = connect(&proxy, authority).await.unwrap_err();
            assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
            assert!(
                refusal_header(&answer).contains("is closed to agents by this deployment"),
                "{answer}"
            );
        }
        let answer = connect(&proxy, "169.254.169.254:80").await.unwrap_err();
        assert!(refusal_header(&answer).starts_with("169.254.169.254 is a cloud metadata address"));
        let refusal = proxy
            .log()
            .refusal_for(&Url::parse("http://169.254.169.254/latest/meta-data/").unwrap())
            .unwrap();
        let Refusal::Address { forbidden, .. } = refusal else {
            panic!("{refusal:?}")
        };
        assert_eq!(forbidden.rule, AddressRule::CloudMetadata);
    }
}

#[tokio::test]
async fn s3_4_an_origin_form_request_is_not_a_proxy_request() {
    let proxy = proxy(true).await;
    let answer = exchange(
        &proxy,
        "GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("is not a proxy request"), "{answer}");
}

#[tokio::test]
async fn s3_4_shutting_down_closes_open_tunnels() {
    let upstream = Upstream::start().await;
    let proxy = proxy(true).await;
    let address = proxy.address();
    let mut tunnel = connect(&proxy, &upstream.address.to_string())
        .await
        .unwrap();
    proxy.shutdown().await;
    let mut rest = Vec::new();
    // The tunnel ends (EOF or reset) instead of staying open.
    let _ = tunnel.read_to_end(&mut rest).await;
    assert!(TcpStream::connect(address).await.is_err());
}

/// A name server on loopback answering `name` with `address` (TTL 0), and
/// every other name with NXDOMAIN.
async fn name_server(name: &'static str, address: std::net::Ipv4Addr) -> SocketAddr {
    use hickory_proto::op::{Message, ResponseCode};
    use hickory_proto::rr::rdata::A;
    use hickory_proto::rr::{RData, Record, RecordType};

    let socket = UdpSocket::bind("127.0.0.1:0").await.expect("bind");
    let bound = socket.local_addr().expect("bound");
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        while let Ok((len, peer)) = socket.recv_from(&mut buf).await {
            let Ok(query) = Message::from_vec(&buf[..len]) else {
                continue;
            };
            let question = query.queries[0].clone();
            let mut reply = Message::response(query.metadata.id, query.metadata.op_code);
            reply.metadata.recursion_desired = query.metadata.recursion_desired;
            reply.metadata.recursion_available = true;
            reply.add_query(question.clone());
            if question
                .name
                .to_ascii()
                .eq_ignore_ascii_case(&format!("{name}."))
            {
                if question.query_type == RecordType::A {
                    reply.add_answer(Record::from_rdata(
                        question.name.clone(),
                        0,
                        RData::A(A(address)),
                    ));
                }
            } else {
                reply.metadata.response_code = ResponseCode::NXDomain;
            }
            let _ = socket
                .send_to(&reply.to_vec().expect("encodes"), peer)
                .await;
        }
    });
    bound
}

async fn proxy_resolving_with(own_network_browsable: bool, server: SocketAddr) -> RunningProxy {
    let scope = Scope::new(
        ScopeSettings {
            own_network_browsable,
            closed_hosts: Vec::new(),
        },
        Vec::new(),
    )
    .expect("valid settings");
    let resolver = Resolver::with_name_server(server).expect("a resolver");
    EgressProxy::start(Arc::new(scope), resolver)
        .await
        .expect("starts")
}

#[tokio::test]
async fn s3_4_a_name_is_resolved_once_judged_and_the_judged_address_connected() {
    let upstream = Upstream::start().await;
    let server = name_server("app.test", std::net::Ipv4Addr::LOCALHOST).await;
    let port = upstream.address.port();

    let closed = proxy_resolving_with(false, server).await;
    let answer = connect(&closed, &format!("app.test:{port}"))
        .await
        .unwrap_err();
    assert_eq!(
        refusal_header(&answer),
        "app.test resolves to 127.0.0.1, which is a loopback address (this machine), in 127.0.0.0/8: only the public internet is browsable here (§3.4)"
    );
    let answer = exchange(&closed, &get(&format!("http://app.test:{port}/x"))).await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    let answer = connect(&closed, "nowhere.test:443").await.unwrap_err();
    assert_eq!(
        refusal_header(&answer),
        "nowhere.test does not resolve: no address answers for that name"
    );
    assert_eq!(upstream.connections(), 0);

    let open = proxy_resolving_with(true, server).await;
    let answer = exchange(&open, &get(&format!("http://app.test:{port}/x"))).await;
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("hello"),
        "{answer}"
    );
    let heads = upstream.heads.lock().unwrap().clone();
    assert!(
        heads[0].contains(&format!("host: app.test:{port}\r\n")),
        "{heads:?}"
    );
}

/// A connection that never finishes its request's head is closed once
/// `HEAD_WITHIN` passes: a flood of half-open connections from this host
/// cannot pin the proxy's tasks for ever.
#[tokio::test]
async fn s3_4_a_connection_that_never_finishes_its_head_is_closed() {
    let proxy = proxy(true).await;
    let mut stream = TcpStream::connect(proxy.address())
        .await
        .expect("test setup");
    stream
        .write_all(b"GET http://example.test/ HTTP/1.1\r\nHost: exa")
        .await
        .expect("test setup");
    let mut buf = [0u8; 512];
    let read = tokio::time::timeout(
        collegium_worker_browser::proxy::HEAD_WITHIN + std::time::Duration::from_secs(10),
        stream.read(&mut buf),
    )
    .await
    .expect("the proxy closed the connection, or answered, by its deadline");
    // Hyper answers 408 to a head that timed out, or closes outright.
    match read {
        Ok(0) | Err(_) => {}
        Ok(n) => {
            let answer = String::from_utf8_lossy(&buf[..n]);
            assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        }
    }
}

/// Only the worker's own user may use its proxy: an agent's command, as
/// another user, is closed unanswered and its target never reached, even
/// for an address the scope lets through (§6.4; §3.4).
#[tokio::test]
async fn s6_4_a_client_of_another_user_is_closed_unanswered() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test makes a network namespace: run it as root, as CI does"
    );
    let upstream = Upstream::start().await;
    let proxy = proxy(true).await;
    let request = get(&format!("http://{}/", upstream.address));
    let script = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{}; printf '%s' \"$REQUEST\" >&3; cat <&3",
        proxy.address().port()
    );
    let output = tokio::process::Command::new("bash")
        .args(["-c", &script])
        .env("REQUEST", &request)
        .uid(65534)
        .gid(65534)
        .output()
        .await
        .expect("run a client as nobody");
    assert!(
        output.stdout.is_empty(),
        "the proxy answered another user: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(upstream.connections(), 0);
    // The worker's own user is served as before.
    let answer = exchange(&proxy, &request).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
