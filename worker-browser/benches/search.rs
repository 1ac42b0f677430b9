//! What web::search adds to a provider's own latency (§3.4), recorded in
//! `docs/benchmarks.md`: one search of 20 hits through the whole client
//! (request built, HTTP over loopback to the search simulator, the answer
//! read, parsed, stripped of markup and rendered), median and p99, per wire.
//!
//! `cargo bench -p collegium-worker-browser --bench search`

use std::time::{Duration, Instant};

use collegium_worker_browser::search::{self, Provider, SearchSettings};
use search_sim::{Config, Scripted, SimHit};
use serde_json::json;

const WARM_UP: usize = 20;
const RUNS: usize = 500;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn hits() -> Vec<SimHit> {
    (0..20)
        .map(|i| {
            SimHit::new(
                &format!("Result {i}: the Rust async book's chapter on executors"),
                &format!("https://example.org/rust/async/chapter-{i}"),
                &"An async runtime for the Rust programming language, with tasks & timers. "
                    .repeat(3),
            )
        })
        .collect()
}

async fn bench(provider: Provider) {
    let running = search_sim::start("127.0.0.1:0".parse().expect("address"), Config::default())
        .await
        .expect("simulator");
    running
        .sim
        .script("rust async", vec![Scripted::Results { hits: hits() }]);
    let search_settings = match provider {
        Provider::Brave => json!({
            "provider": "brave",
            "api_key": {"value": "sim-brave-key"},
            "base_url": running.brave_endpoint(),
        }),
        Provider::Searxng => json!({"provider": "searxng", "base_url": running.url}),
    };
    let settings = SearchSettings::from_settings_json(&json!({ "search": search_settings }))
        .expect("settings")
        .expect("a provider");
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let mut times = Vec::with_capacity(RUNS);
    for run in 0..WARM_UP + RUNS {
        let start = Instant::now();
        let hits = search::search(&client, &settings, "rust async", 20)
            .await
            .expect("hits");
        let text = search::render(provider, "rust async", &hits);
        let elapsed = start.elapsed();
        assert_eq!(hits.len(), 20);
        assert!(!text.contains("<strong>"));
        if run >= WARM_UP {
            times.push(elapsed);
        }
    }
    times.sort();
    println!(
        "search {provider}: 20 hits, median {:.3} ms, p99 {:.3} ms ({RUNS} runs)",
        percentile(&times, 0.5).as_secs_f64() * 1000.0,
        percentile(&times, 0.99).as_secs_f64() * 1000.0
    );
}

#[tokio::main]
async fn main() {
    // `cargo test --all-targets` runs a bench once as a test; this one is a
    // measurement (minutes in a debug build), so it runs only under
    // `cargo bench`, which passes `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    bench(Provider::Brave).await;
    bench(Provider::Searxng).await;
}
