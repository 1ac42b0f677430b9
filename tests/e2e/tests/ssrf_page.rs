//! The SSRF matrix's rows that start in a page (§3.4): what a page asks
//! Chromium to load, and where a page sends its own browser. The real
//! browser worker runs as `collegium-browser` inside the lab's worker
//! namespace, its Chromium sandboxed and every request it makes going
//! through the worker's egress proxy; the calls are the daemon's own
//! client's, with signed grants. Each row passes only as the proxy's typed
//! refusal naming the address, in the worker's log, with no honeypot
//! reached. Root only, as the lab is.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use e2e::browser_worker::{BrowserWorker, Fetched, Policy};
use e2e::ssrf_lab::{Lab, Ns, Reply, Site};
use serde_json::json;

const UNDECLARED: Policy = Policy {
    own_network_browsable: false,
};
const DECLARED: Policy = Policy {
    own_network_browsable: true,
};

/// How long a page's requests may take to reach the proxy after the action
/// that started them has answered.
const SETTLING: Duration = Duration::from_secs(15);

async fn lab_and_worker(policy: Policy) -> (Lab, BrowserWorker) {
    let lab = Lab::start().expect("start the lab");
    let worker = BrowserWorker::start(&lab, policy)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (lab, worker)
}

fn script(body: &str) -> Reply {
    Reply::new(200)
        .header("content-type", "text/javascript")
        .body(body.to_string())
}

/// Waits until the worker has logged a refusal matching each of `rows`
/// (the words the log line must hold, all of them), and returns the rows it
/// never refused.
async fn unrefused<'a>(worker: &BrowserWorker, rows: &[(&'a str, &[&str])]) -> Vec<&'a str> {
    let deadline = Instant::now() + SETTLING;
    loop {
        let log = worker.stderr();
        let refusals: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("egress refused"))
            .collect();
        let missing: Vec<&str> = rows
            .iter()
            .filter(|(_, words)| {
                !refusals
                    .iter()
                    .any(|line| words.iter().all(|w| line.contains(w)))
            })
            .map(|(row, _)| *row)
            .collect();
        if missing.is_empty() || Instant::now() > deadline {
            return missing;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_what_a_page_asks_for_is_refused_at_the_proxy_and_reaches_no_honeypot() {
    e2e::require_root();
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    let page = r#"<h1>A page that reaches inward</h1>
<img src="http://10.0.0.1/img" alt="pixel">
<iframe src="http://169.254.169.254/iframe"></iframe>
<style>@font-face { font-family: inward; src: url(http://192.168.0.1/font) }
p.styled { font-family: inward }</style>
<p class="styled">styled text</p>
<button onclick="window.open('http://[fd00:ec2::254]/popup')">Open</button>
<script>
fetch('http://172.16.0.1/fetch').catch(() => {});
new Worker('/worker.js');
navigator.sendBeacon('http://198.18.0.1/beacon', 'payload');
try { new WebSocket('ws://127.0.0.1:8080/socket'); } catch (e) {}
const peer = new RTCPeerConnection({ iceServers: [{ urls: 'stun:10.0.0.1:3478' }] });
peer.createDataChannel('probe');
peer.createOffer().then((offer) => peer.setLocalDescription(offer));
</script>"#;
    lab.host(
        "inward.test",
        Site::new().page("/", page).route(
            "/worker.js",
            script("fetch('http://100.64.0.1/worker').catch(() => {});"),
        ),
    )
    .expect("inward.test");
    let attempt = lab
        .attempt(worker.pid())
        .expect("the worker runs inside the lab's worker namespace");
    let opened = worker
        .call(
            "turn-page",
            "navigate",
            json!({ "url": "http://inward.test/" }),
        )
        .await;
    let text = match &opened {
        Fetched::Success(text) => text.clone(),
        other => panic!("the page itself loads: {other:?}"),
    };
    assert!(text.contains("A page that reaches inward"), "{text}");
    // The pop-up opens on a click, as a person's would.
    let button = text
        .lines()
        .find(|l| l.contains("button \"Open\""))
        .and_then(|l| l.split('[').nth(1))
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("the Open button has a ref: {text}"))
        .to_string();
    let clicked = worker
        .call("turn-page", "click", json!({ "ref": button }))
        .await;
    assert!(
        matches!(&clicked, Fetched::Success(t) if t.contains("opened a tab for itself at http://[fd00:ec2::254]/popup; it was closed")),
        "{clicked:?}"
    );
    let missing = unrefused(
        &worker,
        &[
            ("img", &["http://10.0.0.1/img"]),
            ("iframe", &["http://169.254.169.254/iframe"]),
            ("CSS font", &["http://192.168.0.1/font"]),
            ("fetch()", &["http://172.16.0.1/fetch"]),
            ("dedicated worker", &["http://100.64.0.1/worker"]),
            ("sendBeacon", &["http://198.18.0.1/beacon"]),
            ("WebSocket", &["127.0.0.1", "8080"]),
            ("pop-up", &["fd00:ec2::254", "popup"]),
        ],
    )
    .await;
    // WebRTC's STUN to 10.0.0.1:3478 has no proxy to go through, and
    // Chromium sends no UDP but through one: the UDP honeypot stays silent.
    let hits = attempt.honeypot_hits().expect("read the honeypots");
    worker.end_turn("turn-page").await;
    assert!(hits.is_empty(), "honeypots reached: {hits:?}");
    assert!(
        missing.is_empty(),
        "never refused: {missing:?}\n{}",
        worker.stderr()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_page_that_sends_its_browser_inward_is_refused_at_the_hop() {
    e2e::require_root();
    let (lab, worker) = lab_and_worker(UNDECLARED).await;
    let closed = lab
        .host(
            "wiki.intranet.test",
            Site::new().page("/", "<h1>the closed wiki</h1>"),
        )
        .expect("wiki.intranet.test");
    let go = |to: &str| format!("<p>leaving</p><script>location.replace('{to}')</script>");
    lab.host(
        "hops.test",
        Site::new()
            .page(
                "/meta",
                "<meta http-equiv=\"refresh\" content=\"0;url=http://127.0.0.1/meta\"><p>leaving</p>",
            )
            .page("/script", go("http://0x7f.1/script"))
            .page("/file", go("file:///etc/passwd"))
            .page("/closed", go("http://wiki.intranet.test/")),
    )
    .expect("hops.test");
    let attempt = lab
        .attempt(worker.pid())
        .expect("the worker runs inside the lab's worker namespace");
    let rows = [
        ("/meta", "127.0.0.1 is a loopback address"),
        ("/script", "127.0.0.1 is a loopback address"),
        (
            "/closed",
            "wiki.intranet.test is closed to agents by this deployment",
        ),
    ];
    let mut failures = Vec::new();
    for (path, names) in rows {
        let turn = format!("turn-hop{}", path.replace('/', "-"));
        let url = format!("http://hops.test{path}");
        let result = worker.call(&turn, "navigate", json!({ "url": url })).await;
        worker.end_turn(&turn).await;
        if !matches!(&result, Fetched::Refusal(text) if text.contains(names)) {
            failures.push(format!(
                "{path}: expected a refusal naming {names:?}, got {result:?}"
            ));
        }
    }
    // A page's own step to file: Chromium stops before any request: there
    // is nothing to refuse, and the session stays on the page that tried.
    let file = worker
        .call(
            "turn-hop-file",
            "navigate",
            json!({ "url": "http://hops.test/file" }),
        )
        .await;
    worker.end_turn("turn-hop-file").await;
    match &file {
        Fetched::Success(text)
            if text.contains("Address: http://hops.test/file") && !text.contains("root:") => {}
        other => failures.push(format!(
            "/file: expected the page that tried, got {other:?}"
        )),
    }
    let missing = unrefused(
        &worker,
        &[
            ("meta refresh", &["http://127.0.0.1/meta", "loopback"]),
            ("script", &["http://127.0.0.1/script", "loopback"]),
            ("closed", &["wiki.intranet.test", "closed to agents"]),
        ],
    )
    .await;
    let hits = attempt.honeypot_hits().expect("read the honeypots");
    assert!(hits.is_empty(), "honeypots reached: {hits:?}");
    assert!(
        closed.connections().is_empty(),
        "{:?}",
        closed.connections()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(missing.is_empty(), "never logged as refused: {missing:?}");
}

/// A service worker needs a secure context: a page on the worker's own
/// loopback is one, and the own-network declaration lets it load. Debian's
/// headless Chromium fetches the worker's script and never runs it (its
/// registration never settles, with or without this framework), so its
/// request to the metadata address is never made; what is checked is that
/// nothing reaches the honeypot, and that should the script run, its
/// request is the proxy's refusal (docs/spec-findings.md).
#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_service_worker_reaches_no_honeypot() {
    e2e::require_root();
    let (lab, worker) = lab_and_worker(DECLARED).await;
    let page = r#"<h1>A page with a service worker</h1>
<script>navigator.serviceWorker.register('/sw.js');</script>"#;
    let sw = "self.addEventListener('install', (event) => {\n\
              event.waitUntil(fetch('http://169.254.169.254/service-worker').catch(() => {}));\n});\n\
              fetch('http://169.254.169.254/service-worker').catch(() => {});";
    let site = lab
        .serve_at(
            Ns::Worker,
            SocketAddr::from((Ipv4Addr::LOCALHOST, 8081)),
            Site::new().page("/", page).route("/sw.js", script(sw)),
        )
        .expect("a loopback page");
    let attempt = lab
        .attempt(worker.pid())
        .expect("the worker runs inside the lab's worker namespace");
    let opened = worker
        .call(
            "turn-sw",
            "navigate",
            json!({ "url": "http://127.0.0.1:8081/" }),
        )
        .await;
    assert!(
        matches!(&opened, Fetched::Success(t) if t.contains("A page with a service worker")),
        "{opened:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !site.requests().iter().any(|r| r.target == "/sw.js") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        site.requests().iter().any(|r| r.target == "/sw.js"),
        "the service worker's script was fetched: {:?}",
        site.requests()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let hits = attempt.honeypot_hits().expect("read the honeypots");
    worker.end_turn("turn-sw").await;
    assert!(hits.is_empty(), "honeypots reached: {hits:?}");
    let log = worker.stderr();
    for line in log.lines().filter(|l| l.contains("service-worker")) {
        assert!(
            line.contains("egress refused") && line.contains("it stays refused"),
            "{line}"
        );
    }
}
