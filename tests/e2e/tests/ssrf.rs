//! The SSRF matrix (§3.4) through the real browser worker, in the lab: every
//! attempt is a `web::fetch` the daemon's own client sends over the worker's
//! socket with a signed grant, to the `collegium-worker-browser` binary
//! running as `collegium-browser` inside the lab's worker namespace. An
//! attempt passes only as a typed refusal naming what it stopped, with no
//! honeypot reached. The egress proxy's rows run it in-process inside the
//! lab. Root only, as the lab is.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use collegium_web_scope::{Resolver, Scope, ScopeSettings, own_addresses};
use collegium_worker_browser::proxy::EgressProxy;
use e2e::browser_worker::{BrowserWorker, CLOSED_HOST, Fetched, Policy};
use e2e::ssrf_lab::plan::{WORKER_V4, WORKER_V6};
use e2e::ssrf_lab::{Answer, Attempt, Lab, Ns, RecordType, Reply, Site, TestHost};

const DECLARED: Policy = Policy {
    own_network_browsable: true,
};
const UNDECLARED: Policy = Policy {
    own_network_browsable: false,
};

async fn lab_and_worker(policy: Policy) -> (Lab, BrowserWorker) {
    let lab = Lab::start().expect("start the lab");
    let worker = BrowserWorker::start(&lab, policy)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (lab, worker)
}

/// One attempt: the worker checked inside the lab before the call is sent,
/// and what reached a honeypot read after it returned.
async fn attempt(lab: &Lab, worker: &BrowserWorker, url: &str) -> (Fetched, Vec<String>) {
    let attempt = lab
        .attempt(worker.pid())
        .expect("the worker runs inside the lab's worker namespace");
    let fetched = worker.fetch(url).await;
    let hits = attempt
        .honeypot_hits()
        .expect("read the honeypots")
        .iter()
        .map(|h| format!("{:?} {}:{}", h.transport, h.addr, h.port))
        .collect();
    (fetched, hits)
}

/// Every row must end as a typed refusal whose text names `names`, with no
/// honeypot reached; each failing row is told on its own line.
async fn refused(lab: &Lab, worker: &BrowserWorker, rows: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (url, names) in rows {
        let (fetched, hits) = attempt(lab, worker, url).await;
        match &fetched {
            Fetched::Refusal(text) if text.contains(names) => {}
            other => failures.push(format!(
                "{url}: expected a refusal naming {names:?}, got {other:?}"
            )),
        }
        if !hits.is_empty() {
            failures.push(format!("{url}: reached honeypots {hits:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} attempts failed:\n{}\nthe worker said:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n"),
        worker.stderr()
    );
}

/// A page read: a success holding `text`, with no honeypot reached.
async fn read(lab: &Lab, worker: &BrowserWorker, url: &str, text: &str) {
    let (fetched, hits) = attempt(lab, worker, url).await;
    assert!(
        matches!(&fetched, Fetched::Success(read) if read.contains(text)),
        "{url}: expected the page holding {text:?}, got {fetched:?}"
    );
    assert!(hits.is_empty(), "{url}: reached honeypots {hits:?}");
}

fn public(lab: &Lab) -> TestHost {
    lab.host(
        "public.test",
        Site::new().page("/", "<h1>the public page</h1>"),
    )
    .expect("public.test")
}

/// The literal spellings of loopback and "this machine" (§3.4, the SSRF
/// matrix), each with what its refusal must name.
const LOOPBACK_SPELLINGS: &[(&str, &str)] = &[
    ("http://127.1/", "127.0.0.1 is a loopback address"),
    ("http://2130706433/", "127.0.0.1 is a loopback address"),
    ("http://0x7f000001/", "127.0.0.1 is a loopback address"),
    ("http://0177.0.0.1/", "127.0.0.1 is a loopback address"),
    ("http://0x7f.0.0.1/", "127.0.0.1 is a loopback address"),
    ("http://127.0.0.1./", "127.0.0.1 is a loopback address"),
    (
        "http://\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}/",
        "127.0.0.1 is a loopback address",
    ),
    ("http://0.0.0.0/", "0.0.0.0 is a \"this network\" address"),
    ("http://0/", "0.0.0.0 is a \"this network\" address"),
    ("http://[::]/", ":: is the unspecified address"),
];

/// The IPv6 forms of forbidden addresses, each with what its refusal must
/// name: the IPv4 address it carries.
const IPV6_FORMS: &[(&str, &str)] = &[
    ("http://[::1]/", "::1 is a loopback address"),
    ("http://[::ffff:127.0.0.1]/", "carrying 127.0.0.1"),
    ("http://[::127.0.0.1]/", "carrying 127.0.0.1"),
    ("http://[64:ff9b::7f00:1]/", "carrying 127.0.0.1"),
    ("http://[64:ff9b::a9fe:a9fe]/", "carrying 169.254.169.254"),
    ("http://[64:ff9b:1::a00:1]/", "carrying 10.0.0.1"),
    ("http://[2002:7f00:1::]/", "carrying 127.0.0.1"),
    ("http://[::ffff:0:a00:1]/", "carrying 10.0.0.1"),
];

/// Private, shared, metadata, link-local, multicast, benchmarking and
/// broadcast addresses, each with what its refusal must name.
const FORBIDDEN_RANGES: &[(&str, &str)] = &[
    ("http://10.0.0.1/", "10.0.0.1 is a private address"),
    ("http://172.16.0.1/", "172.16.0.1 is a private address"),
    ("http://192.168.0.1/", "192.168.0.1 is a private address"),
    ("http://100.64.0.1/", "100.64.0.1 is a shared address"),
    (
        "http://169.254.169.254/",
        "169.254.169.254 is a cloud metadata address",
    ),
    (
        "http://[fd00:ec2::254]/",
        "fd00:ec2::254 is a cloud metadata address",
    ),
    ("http://[fe80::1]/", "fe80::1 is a link-local address"),
    ("http://224.0.0.1/", "224.0.0.1 is a multicast address"),
    ("http://[ff02::1]/", "ff02::1 is a multicast address"),
    ("http://198.18.0.1/", "198.18.0.1 is a benchmarking address"),
    (
        "http://255.255.255.255/",
        "255.255.255.255 is the broadcast address",
    ),
];

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_every_literal_spelling_of_loopback_is_refused() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    refused(&lab, &worker, LOOPBACK_SPELLINGS).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_every_ipv6_form_of_a_forbidden_address_is_refused_naming_what_it_carries() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    refused(&lab, &worker, IPV6_FORMS).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_private_shared_metadata_link_local_multicast_and_own_addresses_are_refused() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    let own_v4 = format!("http://{WORKER_V4}/");
    let own_v6 = format!("http://[{WORKER_V6}]/");
    let own_v4_named = format!("{WORKER_V4} is an address of this machine");
    let own_v6_named = format!("{WORKER_V6} is an address of this machine");
    refused(
        &lab,
        &worker,
        &FORBIDDEN_RANGES
            .iter()
            .copied()
            .chain([
                (own_v4.as_str(), own_v4_named.as_str()),
                (&own_v6, &own_v6_named),
            ])
            .collect::<Vec<_>>(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_name_with_any_forbidden_answer_is_refused_whole() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    let site = lab
        .host_unnamed(Site::new().page("/", "<h1>the global half</h1>"))
        .expect("a global host");
    let global = site.addrs[0].ip();
    lab.dns()
        .set("private.test", &[IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))])
        .expect("private.test");
    lab.dns()
        .set("mixed.test", &[global, IpAddr::V4(Ipv4Addr::LOCALHOST)])
        .expect("mixed.test");
    refused(
        &lab,
        &worker,
        &[
            ("http://localhost/", "localhost resolves to"),
            ("http://x.localhost/", "x.localhost resolves to 127.0.0.1"),
            ("http://private.test/", "private.test resolves to 10.0.0.1"),
            ("http://mixed.test/", "mixed.test resolves to 127.0.0.1"),
        ],
    )
    .await;
    assert!(
        site.requests().is_empty(),
        "a name with a forbidden answer is refused whole, its global answer never asked: {:?}",
        site.requests()
    );
}

/// `rebind.test`: a global page first (TTL 0), 127.0.0.1 next. The page
/// closes its connection, so a second request cannot ride a pooled one and
/// must ask the name server again.
fn rebinding(lab: &Lab) -> TestHost {
    let site = lab
        .host_unnamed(Site::new().route(
            "/",
            Reply::html("<h1>the first answer's page</h1>").header("connection", "close"),
        ))
        .expect("a global host");
    lab.dns()
        .script(
            "rebind.test",
            vec![
                Answer::new([site.addrs[0].ip()]).ttl(0),
                Answer::new([IpAddr::V4(Ipv4Addr::LOCALHOST)]).ttl(0),
            ],
        )
        .expect("rebind.test");
    site
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_rebinding_name_is_read_at_its_global_answer_and_never_reaches_loopback() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    let site = rebinding(&lab);
    read(
        &lab,
        &worker,
        "http://rebind.test/",
        "the first answer's page",
    )
    .await;
    refused(
        &lab,
        &worker,
        &[("http://rebind.test/", "rebind.test resolves to 127.0.0.1")],
    )
    .await;
    assert_eq!(
        site.requests().len(),
        1,
        "the global page was read once: {:?}",
        site.requests()
    );
    let asked_a = lab
        .dns()
        .asked()
        .iter()
        .filter(|a| a.name == "rebind.test" && a.record_type == RecordType::A)
        .count();
    assert_eq!(asked_a, 2, "each fetch resolved the name once");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_userinfo_tricks_are_judged_on_the_host_connected_to() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    let public = public(&lab);
    refused(
        &lab,
        &worker,
        &[
            ("http://public.test@127.0.0.1/", "127.0.0.1 is a loopback"),
            ("http://127.0.0.1\\@public.test/", "127.0.0.1 is a loopback"),
            ("http://127.0.0.1#@public.test/", "127.0.0.1 is a loopback"),
        ],
    )
    .await;
    assert!(public.requests().is_empty(), "{:?}", public.requests());
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_redirect_out_of_scope_is_refused_at_the_hop() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    let closed = lab
        .host(
            "wiki.intranet.test",
            Site::new().page("/", "<h1>the closed wiki</h1>"),
        )
        .expect("wiki.intranet.test");
    let hops = lab
        .host(
            "hops.test",
            Site::new()
                .route("/302", Reply::redirect(302, "http://127.0.0.1/"))
                .route("/307", Reply::redirect(307, "http://127.0.0.1/"))
                .route("/hex", Reply::redirect(302, "http://0x7f.1/"))
                .route("/file", Reply::redirect(302, "file:///etc/passwd"))
                .route(
                    "/closed",
                    Reply::redirect(307, "http://wiki.intranet.test/"),
                ),
        )
        .expect("hops.test");
    refused(
        &lab,
        &worker,
        &[
            ("http://hops.test/302", "127.0.0.1 is a loopback"),
            ("http://hops.test/307", "127.0.0.1 is a loopback"),
            ("http://hops.test/hex", "127.0.0.1 is a loopback"),
            ("http://hops.test/file", "file: URLs are not opened"),
            (
                "http://hops.test/closed",
                "is closed to agents by this deployment (intranet.test",
            ),
        ],
    )
    .await;
    assert_eq!(hops.requests().len(), 5, "{:?}", hops.requests());
    assert!(closed.requests().is_empty(), "{:?}", closed.requests());
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_only_http_and_https_are_opened() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    let public = public(&lab);
    refused(
        &lab,
        &worker,
        &[
            ("file:///etc/passwd", "file: URLs are not opened"),
            ("FILE:///etc/passwd", "file: URLs are not opened"),
            ("data:text/html,<h1>hi</h1>", "data: URLs are not opened"),
            ("javascript:alert(1)", "javascript: URLs are not opened"),
            (
                "view-source:http://public.test/",
                "view-source: URLs are not opened",
            ),
            ("ftp://public.test/", "ftp: URLs are not opened"),
        ],
    )
    .await;
    assert!(public.requests().is_empty(), "{:?}", public.requests());
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_closed_host_and_every_name_beneath_it_are_refused_while_a_lookalike_is_read() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    // The closed names answer a global test host, so only the closed-host
    // rule stands between the worker and them.
    let closed = lab
        .host(CLOSED_HOST, Site::new().page("/", "<h1>the intranet</h1>"))
        .expect("intranet.test");
    let addrs: Vec<IpAddr> = closed.addrs.iter().map(SocketAddr::ip).collect();
    for name in ["wiki.intranet.test", "a.b.intranet.test"] {
        lab.dns().set(name, &addrs).expect("a closed name");
    }
    lab.host(
        "notintranet.test",
        Site::new().page("/", "<h1>not the intranet</h1>"),
    )
    .expect("notintranet.test");
    let beneath =
        "is closed to agents by this deployment (intranet.test and every host beneath it)";
    refused(
        &lab,
        &worker,
        &[
            ("http://intranet.test/", beneath),
            ("http://WIKI.Intranet.Test./", beneath),
            ("http://a.b.intranet.test/", beneath),
        ],
    )
    .await;
    assert!(closed.requests().is_empty(), "{:?}", closed.requests());
    read(
        &lab,
        &worker,
        "http://notintranet.test/",
        "not the intranet",
    )
    .await;
}

/// A page on the worker's own loopback and one on 10.0.0.1 (beside its
/// honeypot's ports), for the own-network rows.
fn own_network_pages(lab: &Lab) -> (TestHost, TestHost) {
    let loopback = lab
        .serve_at(
            Ns::Worker,
            SocketAddr::from((Ipv4Addr::LOCALHOST, 8081)),
            Site::new().page("/", "<h1>the loopback page</h1>"),
        )
        .expect("a loopback page");
    let private = lab
        .serve_at(
            Ns::Net,
            SocketAddr::from((Ipv4Addr::new(10, 0, 0, 1), 8081)),
            Site::new().page("/", "<h1>the private page</h1>"),
        )
        .expect("a page on 10.0.0.1");
    (loopback, private)
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_own_network_declared_loopback_and_private_pages_load_and_the_rest_stays_refused() {
    let (lab, worker) = lab_and_worker(DECLARED).await;
    let (loopback, private) = own_network_pages(&lab);
    lab.host(CLOSED_HOST, Site::new().page("/", "<h1>the intranet</h1>"))
        .expect("intranet.test");
    read(&lab, &worker, "http://127.0.0.1:8081/", "the loopback page").await;
    read(&lab, &worker, "http://10.0.0.1:8081/", "the private page").await;
    assert_eq!(loopback.requests().len(), 1);
    assert_eq!(private.requests().len(), 1);
    // The control: a honeypot the declaration opens answers the worker, and
    // is counted, so a silent honeypot elsewhere means not reached.
    let (fetched, hits) = attempt(&lab, &worker, "http://10.0.0.1/").await;
    assert!(
        matches!(&fetched, Fetched::Success(text) if text.contains("honeypot 10.0.0.1:80")),
        "{fetched:?}"
    );
    assert_eq!(hits, vec!["Tcp 10.0.0.1:80".to_string()]);
    let stays = "it stays refused although this deployment declared its own network browsable";
    refused(
        &lab,
        &worker,
        &[
            (
                "http://169.254.169.254/",
                "metadata address (the instance's credential service), in 169.254.169.254/32: it stays refused",
            ),
            (
                "http://[fd00:ec2::254]/",
                "metadata address (the instance's credential service), in fd00:ec2::254/128: it stays refused",
            ),
            (
                "http://[64:ff9b::a9fe:a9fe]/",
                "(NAT64, carrying 169.254.169.254) is a cloud metadata address (the instance's credential service), in 169.254.169.254/32: it stays refused",
            ),
            ("http://[fe80::1]/", stays),
            ("http://0.0.0.0/", stays),
            ("file:///etc/passwd", "file: URLs are not opened"),
            ("data:text/html,<h1>hi</h1>", "data: URLs are not opened"),
            ("http://intranet.test/", "is closed to agents by this deployment"),
            ("http://WIKI.Intranet.Test./", "is closed to agents by this deployment"),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_own_network_undeclared_the_same_pages_are_refused_and_never_reached() {
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    let (loopback, private) = own_network_pages(&lab);
    refused(
        &lab,
        &worker,
        &[
            (
                "http://127.0.0.1:8081/",
                "127.0.0.1 is a loopback address (this machine), in 127.0.0.0/8: only the public internet is browsable here",
            ),
            ("http://10.0.0.1:8081/", "10.0.0.1 is a private address"),
        ],
    )
    .await;
    assert!(
        loopback.connections().is_empty(),
        "{:?}",
        loopback.connections()
    );
    assert!(
        private.connections().is_empty(),
        "{:?}",
        private.connections()
    );
}

/// One raw request to the proxy at `proxy`: the status line and the body.
fn ask_proxy(proxy: SocketAddr, request: &str) -> Result<(String, String), String> {
    let mut stream =
        std::net::TcpStream::connect(proxy).map_err(|e| format!("connect to the proxy: {e}"))?;
    // A guard against a proxy that never answers, not a measurement.
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("send: {e}"))?;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(e) => return Err(format!("read: {e}")),
        }
        if let Some(body) = complete(&answer) {
            let text = String::from_utf8_lossy(&answer).into_owned();
            let status = text.lines().next().unwrap_or_default().to_string();
            return Ok((status, body));
        }
    }
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Ok((
        head.lines().next().unwrap_or_default().to_string(),
        body.into(),
    ))
}

/// The body once a response with a `content-length` has arrived whole.
fn complete(answer: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(answer);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    (body.len() >= length).then(|| body.to_string())
}

/// `url`'s host, as a request line or an authority carries it.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest)
}

/// An absolute-form GET of `url`, as a browser sends plain http to a proxy.
fn absolute_get(url: &str) -> String {
    let host = host_of(url);
    format!("GET {url} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
}

/// A CONNECT to `url`'s host at `port`, as a browser opens a tunnel.
fn connect(url: &str, port: u16) -> String {
    let host = host_of(url);
    format!("CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n")
}

fn proxy_rows(
    attempt: &Attempt<'_>,
    proxy: SocketAddr,
    rows: &[(&str, &str, &str)],
) -> Vec<String> {
    let mut failures = Vec::new();
    for (request, status, names) in rows {
        let first = request.lines().next().unwrap_or_default();
        match ask_proxy(proxy, request) {
            Ok((line, body)) if line.contains(status) && body.contains(names) => {}
            Ok((line, body)) => failures.push(format!(
                "{first}: expected {status} naming {names:?}, got {line:?} {body:?}"
            )),
            Err(e) => failures.push(format!("{first}: {e}")),
        }
        match attempt.honeypot_hits() {
            Ok(hits) if hits.is_empty() => {}
            Ok(hits) => failures.push(format!("{first}: reached honeypots {hits:?}")),
            Err(e) => failures.push(format!("{first}: reading the honeypots failed: {e}")),
        }
    }
    failures
}

#[test]
fn s3_4_the_egress_proxy_refuses_connect_and_absolute_form_requests_out_of_scope() {
    let lab = Lab::start().expect("start the lab");
    public(&lab);
    let rebound = rebinding(&lab);
    lab.dns()
        .set("private.test", &[IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))])
        .expect("private.test");
    let nameserver = lab.nameserver();
    let failures = lab
        .attempt_in_worker(|attempt| {
            // Its threads are started from this one, inside the lab.
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("a runtime");
            let scope = Scope::new(
                ScopeSettings {
                    own_network_browsable: false,
                    closed_hosts: vec![CLOSED_HOST.into()],
                },
                own_addresses().expect("the worker namespace's addresses"),
            )
            .expect("a scope");
            let resolver = Resolver::with_name_server(nameserver).expect("a resolver");
            let proxy = runtime
                .block_on(EgressProxy::start(Arc::new(scope), resolver))
                .expect("the proxy starts");
            let at = proxy.address();
            let mut failures = proxy_rows(
                attempt,
                at,
                &[
                    (
                        "GET http://public.test/ HTTP/1.1\r\nHost: public.test\r\nConnection: close\r\n\r\n",
                        "200",
                        "the public page",
                    ),
                    (
                        "GET http://rebind.test/ HTTP/1.1\r\nHost: rebind.test\r\nConnection: close\r\n\r\n",
                        "200",
                        "the first answer's page",
                    ),
                    (
                        "GET http://rebind.test/ HTTP/1.1\r\nHost: rebind.test\r\nConnection: close\r\n\r\n",
                        "403",
                        "rebind.test resolves to 127.0.0.1",
                    ),
                ],
            );
            failures.extend(proxy_rows(
                attempt,
                at,
                &[
                    ("CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", "403", "127.0.0.1 is a loopback"),
                    ("CONNECT [::1]:22 HTTP/1.1\r\nHost: [::1]:22\r\n\r\n", "403", "::1 is a loopback"),
                    ("CONNECT 0x7f.1:443 HTTP/1.1\r\nHost: 0x7f.1:443\r\n\r\n", "403", "127.0.0.1 is a loopback"),
                    ("CONNECT localhost:22 HTTP/1.1\r\nHost: localhost:22\r\n\r\n", "403", "localhost resolves to"),
                    ("CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\n", "403", "10.0.0.1 is"),
                    ("CONNECT 169.254.169.254:80 HTTP/1.1\r\nHost: 169.254.169.254:80\r\n\r\n", "403", "169.254.169.254 is"),
                    ("CONNECT private.test:443 HTTP/1.1\r\nHost: private.test:443\r\n\r\n", "403", "private.test resolves to 10.0.0.1"),
                    ("CONNECT wiki.intranet.test:443 HTTP/1.1\r\nHost: wiki.intranet.test:443\r\n\r\n", "403", "is closed to agents"),
                    ("GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", "403", "127.0.0.1 is a loopback"),
                    ("GET http://0x7f000001:22/ HTTP/1.1\r\nHost: 0x7f000001:22\r\nConnection: close\r\n\r\n", "403", "127.0.0.1 is a loopback"),
                    ("GET http://[::ffff:127.0.0.1]/ HTTP/1.1\r\nHost: [::ffff:127.0.0.1]\r\nConnection: close\r\n\r\n", "403", "carrying 127.0.0.1"),
                    ("GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\nConnection: close\r\n\r\n", "403", "169.254.169.254 is"),
                    ("GET http://private.test/ HTTP/1.1\r\nHost: private.test\r\nConnection: close\r\n\r\n", "403", "private.test resolves to 10.0.0.1"),
                    ("GET http://WIKI.Intranet.Test./ HTTP/1.1\r\nHost: WIKI.Intranet.Test.\r\nConnection: close\r\n\r\n", "403", "is closed to agents"),
                    ("GET http://public.test@127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", "403", "127.0.0.1 is a loopback"),
                ],
            ));
            // The fetch route's tables, on both of the proxy's request forms.
            let tables: Vec<(String, &str, &str)> = [LOOPBACK_SPELLINGS, IPV6_FORMS, FORBIDDEN_RANGES]
                .concat()
                .into_iter()
                .filter(|(url, _)| url.is_ascii())
                .flat_map(|(url, names)| {
                    [
                        (absolute_get(url), "403", names),
                        (connect(url, 443), "403", names),
                    ]
                })
                .collect();
            let borrowed: Vec<(&str, &str, &str)> = tables
                .iter()
                .map(|(request, status, names)| (request.as_str(), *status, *names))
                .collect();
            failures.extend(proxy_rows(attempt, at, &borrowed));
            drop(proxy);
            runtime.shutdown_timeout(Duration::from_secs(2));
            failures
        })
        .expect("the proxy runs inside the lab");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(rebound.requests().len(), 1, "{:?}", rebound.requests());
}

/// A browser worker restarted under the daemon with its own network opened
/// (an operator's slip, or someone wanting the intranet) is handshaken again
/// and held to the policy of the boot: it serves nothing, naming what
/// changed, and the loopback page it would now open is never reached (§3.4;
/// ARCHITECTURE §4).
#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_worker_restarted_with_another_policy_serves_nothing() {
    let (lab, mut worker) = lab_and_worker(UNDECLARED).await;
    let (loopback, _private) = own_network_pages(&lab);
    public(&lab);
    read(&lab, &worker, "http://public.test/", "the public page").await;
    worker
        .restart(&lab, DECLARED)
        .unwrap_or_else(|e| panic!("{e}"));
    let fetched = worker.fetch("http://127.0.0.1:8081/").await;
    match &fetched {
        Fetched::Other(text)
            if text.contains("NotSent")
                && text.contains(
                    "web_scope.own_network_browsable: the restarted worker reports true; at boot it was false",
                ) => {}
        other => panic!("the restarted worker served: {other:?}"),
    }
    assert!(
        loopback.connections().is_empty(),
        "{:?}",
        loopback.connections()
    );
    // Restarted again as it booted, it serves once more.
    worker
        .restart(&lab, UNDECLARED)
        .unwrap_or_else(|e| panic!("{e}"));
    read(&lab, &worker, "http://public.test/", "the public page").await;
}
