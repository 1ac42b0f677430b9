//! The egress proxy's overhead (issue 17 target: p50 under 1 ms a request):
//! the same GET to a loopback upstream, direct and through the proxy, each
//! over one kept-alive client connection, own network declared.
//!
//! Run: `cargo bench -p collegium-worker-browser --bench proxy`

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use collegium_web_scope::{Resolver, Scope, ScopeSettings};
use collegium_worker_browser::proxy::EgressProxy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const WARM_UP: usize = 200;
const SAMPLES: usize = 3000;
const PAGE: &[u8] = &[b'x'; 2048];

fn main() {
    // `cargo test --all-targets` runs a bench once as a test; this one is a
    // measurement (minutes in a debug build), so it runs only under
    // `cargo bench`, which passes `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime for the benchmark");
    runtime.block_on(run());
}

async fn run() {
    let upstream = upstream().await;
    let scope = Scope::new(
        ScopeSettings {
            own_network_browsable: true,
            closed_hosts: Vec::new(),
        },
        Vec::new(),
    )
    .expect("empty settings are valid");
    let resolver =
        Resolver::with_name_server("127.0.0.1:9".parse().expect("an address")).expect("a resolver");
    let proxy = EgressProxy::start(Arc::new(scope), resolver)
        .await
        .expect("the proxy starts");

    let url = format!("http://{upstream}/page");
    let direct = measure(
        upstream,
        &format!("GET /page HTTP/1.1\r\nHost: {upstream}\r\n\r\n"),
    )
    .await;
    let proxied = measure(
        proxy.address(),
        &format!("GET {url} HTTP/1.1\r\nHost: {upstream}\r\nProxy-Connection: keep-alive\r\n\r\n"),
    )
    .await;
    let (d50, d90) = (percentile(&direct, 50), percentile(&direct, 90));
    let (p50, p90) = (percentile(&proxied, 50), percentile(&proxied, 90));
    println!(
        "egress proxy, {SAMPLES} GETs of a {} byte page on loopback",
        PAGE.len()
    );
    println!(
        "  direct:  p50 {:>8.1} µs  p90 {:>8.1} µs",
        micros(d50),
        micros(d90)
    );
    println!(
        "  proxied: p50 {:>8.1} µs  p90 {:>8.1} µs",
        micros(p50),
        micros(p90)
    );
    println!(
        "  overhead: p50 {:.1} µs, p90 {:.1} µs (target: p50 under 1000 µs)",
        micros(p50.saturating_sub(d50)),
        micros(p90.saturating_sub(d90))
    );
}

async fn measure(to: SocketAddr, request: &str) -> Vec<Duration> {
    let mut stream = TcpStream::connect(to).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let mut samples = Vec::with_capacity(SAMPLES);
    for i in 0..WARM_UP + SAMPLES {
        let started = Instant::now();
        stream.write_all(request.as_bytes()).await.expect("write");
        let status = read_response(&mut stream).await;
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        if i >= WARM_UP {
            samples.push(started.elapsed());
        }
    }
    samples.sort();
    samples
}

/// Reads one response with a Content-Length body; returns its head.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).await.expect("read head");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).expect("an ASCII head");
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().expect("a length"))
        })
        .expect("a Content-Length");
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.expect("read body");
    head
}

/// A kept-alive HTTP/1.1 upstream answering every request with the page.
async fn upstream() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("bound");
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut pending = Vec::new();
                let mut response =
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", PAGE.len())
                        .into_bytes();
                response.extend_from_slice(PAGE);
                loop {
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        if stream.write_all(&response).await.is_err() {
                            return;
                        }
                    }
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => pending.extend_from_slice(&buf[..n]),
                    }
                }
            });
        }
    });
    address
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
