//! The web toolset end to end (§3.4): the daemon, the browser worker as
//! `collegium-browser` and the PDF worker as `collegium-pdf`, a turn that
//! reads a page and a PDF with web::fetch and opens the page in a browser
//! session, which ends with the turn; and the boot's refusals of a browser
//! worker missing or enforcing another policy than the configuration's.
//! CI runs as root; as anyone else the workers cannot be started as their
//! users, and that is what is checked.

use std::io::{Read, Write};
use std::net::TcpListener;

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{calls, reply, square_with, tool_results, turn_requests};
use e2e::web_workers::{
    chromium_processes_of, declare_web, provision_workers, start_browser, start_pdf,
};
use serde_json::json;

const PAGE: &str = "<!doctype html><html><head><title>Harbour notes</title></head><body>\
<nav><a href=\"/\">Home</a></nav><main><h1>Tide tables</h1>\
<p>High water at the harbour is at 06:12 on Monday.</p>\
<form><label>Name <input name=\"who\"></label><button>Send</button></form></main></body></html>";

/// A one-page PDF whose text layer says `text`.
fn pdf(text: &str) -> Vec<u8> {
    let content = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_string(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A site on loopback serving the page at `/` and the PDF at `/tides.pdf`.
fn site() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let document = pdf("Spring tides expected on the ninth");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            let head = String::from_utf8_lossy(&head);
            let (kind, body) = if head.starts_with("GET /tides.pdf") {
                ("application/pdf", document.clone())
            } else {
                ("text/html; charset=utf-8", PAGE.as_bytes().to_vec())
            };
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            );
            let _ = stream.write_all(&body);
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_an_agent_reads_a_page_and_a_pdf_and_browses_in_a_session_ended_with_its_turn() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.grant_mira(&["web"]);
    declare_web(&h, true);
    if !nix::unistd::geteuid().is_root() {
        let refused = start_browser(&h, &[]).err().expect("refused");
        assert!(
            refused.contains("provision") || refused.contains("no OS user"),
            "{refused}"
        );
        return;
    }
    h.provision().await.expect("provisioned");
    provision_workers(&h);
    let _browser = start_browser(&h, &["--own-network-browsable"]).expect("the browser worker");
    let _pdf = start_pdf(&h).expect("the PDF worker");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let port = site();
    let page = format!("http://127.0.0.1:{port}/");
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("web__fetch", json!({"url": page}))]),
            calls(&[("web__fetch", json!({"url": format!("{page}tides.pdf")}))]),
            calls(&[("web__navigate", json!({"url": page}))]),
            reply("High water is at 06:12."),
        ],
    );
    let square = square_with(&h, &["ana"]).await;
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira when is high water?").await;
    h.wait_post(&square, "mira", "High water is at 06:12.", since)
        .await;
    let requests = turn_requests(&h);
    let results = tool_results(requests.last().expect("completions"));
    assert!(
        results[0].contains("High water at the harbour is at 06:12"),
        "{}",
        results[0]
    );
    assert!(
        !results[0].contains("Home"),
        "the fetch reads the main content: {}",
        results[0]
    );
    assert!(results[1].contains("--- page 1 ---"), "{}", results[1]);
    assert!(
        results[1].contains("Spring tides expected on the ninth"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("Tide tables"), "{}", results[2]);
    assert!(
        results[2].contains("Name"),
        "the form's controls come with refs: {}",
        results[2]
    );
    // The session ended with the turn: no browser of the worker's user is
    // left once the daemon told the worker (§3.4).
    let mut left = chromium_processes_of("collegium-browser");
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        left = chromium_processes_of("collegium-browser");
    }
    assert!(
        left.is_empty(),
        "Chromium processes left after the turn: {left:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_browser_worker_enforcing_another_policy_than_the_configuration_refuses_boot() {
    let h = Harness::start().await;
    h.grant_mira(&["web::fetch"]);
    declare_web(&h, true);
    e2e::require_root();
    h.provision().await.expect("provisioned");
    provision_workers(&h);
    // Started without the declaration the configuration makes.
    let _browser = start_browser(&h, &[]).expect("the browser worker");
    let _pdf = start_pdf(&h).expect("the PDF worker");
    let (code, logged) = h.daemon_refusal();
    assert_ne!(code, Some(0), "{logged}");
    assert!(
        logged.contains("web_scope.own_network_browsable")
            && logged.contains("--own-network-browsable"),
        "{logged}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_an_agent_holding_web_fetch_without_a_browser_worker_refuses_boot() {
    let h = Harness::start().await;
    h.grant_mira(&["web::fetch"]);
    e2e::require_root();
    h.provision().await.expect("provisioned");
    provision_workers(&h);
    let (code, logged) = h.daemon_refusal();
    assert_ne!(code, Some(0), "{logged}");
    assert!(
        logged.contains("start collegium-worker-browser (as collegium-browser)"),
        "{logged}"
    );
}
