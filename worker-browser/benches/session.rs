//! What a browser session costs (§3.4 Browsing): a turn's first navigate
//! (a Chromium started, its context and page opened), a navigate in a live
//! session, a click with the snapshot after it, and a turn's end. Real
//! Chromium against a page served on loopback; medians of a few rounds.
//! `cargo bench -p collegium-worker-browser --bench session`

use std::path::PathBuf;
use std::time::{Duration, Instant};

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use collegium_worker_browser::session::{Action, Outcome, Sessions, SessionsConfig};

const ROUNDS: usize = 7;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn page() -> String {
    let mut page = String::from("<h1>A page</h1><form>");
    for i in 0..50 {
        page.push_str(&format!(
            "<p>Paragraph {i} of the page.</p><label>Field {i} <input name=\"f{i}\"></label>"
        ));
    }
    page.push_str("</form><button onclick=\"document.body.append('clicked')\">Go</button>");
    page
}

fn ok(outcome: Outcome) -> String {
    match outcome {
        Outcome::Page(text) => text,
        other => panic!("not a page: {other:?}"),
    }
}

fn main() {
    // `cargo test --all-targets` runs a bench once as a test; this one is a
    // measurement (minutes in a debug build), so it runs only under
    // `cargo bench`, which passes `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let app = Router::new().route("/", get(|| async { Html(page()) }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let site = listener.local_addr().expect("address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        let mut config = SessionsConfig::new(PathBuf::from("/usr/bin/chromium"), None, 1);
        config.root_without_sandbox = true;
        let sessions = Sessions::new(config);
        let all = |_: &str| true;
        let url = format!("http://{site}/");
        let (mut first, mut again, mut click, mut end) = (vec![], vec![], vec![], vec![]);
        for round in 0..ROUNDS {
            let turn = format!("turn-{round}");
            let started = Instant::now();
            let text = ok(sessions
                .act(&turn, Action::Navigate { url: url.clone() }, &all)
                .await);
            first.push(started.elapsed());
            let started = Instant::now();
            ok(sessions
                .act(&turn, Action::Navigate { url: url.clone() }, &all)
                .await);
            again.push(started.elapsed());
            let go = text
                .find("[Go][")
                .map(|at| &text[at + 5..])
                .and_then(|rest| rest.split(']').next())
                .expect("the button's ref")
                .to_string();
            let started = Instant::now();
            ok(sessions
                .act(&turn, Action::Click { reference: go }, &all)
                .await);
            click.push(started.elapsed());
            let started = Instant::now();
            sessions.end(&turn).await;
            end.push(started.elapsed());
        }
        println!(
            "first navigate of a turn (browser start): {:?}",
            median(first)
        );
        println!(
            "navigate in a live session:              {:?}",
            median(again)
        );
        println!(
            "click and snapshot:                      {:?}",
            median(click)
        );
        println!("end of a turn (every process gone):      {:?}", median(end));
    });
}
