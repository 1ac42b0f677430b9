//! A load driver: the whole of `/collegium clear` (§8.5) on a channel of
//! 20,000 posts, against the Mattermost simulator and the real daemon. The
//! posts are seeded through the simulator's own posting route, several at a
//! time (the daemon records each from its websocket, as it would a person's
//! post), and the driver waits until the store holds every one. Each run
//! then times, from the confirmation's submission: the dialog's answer (the
//! notice posted and the store cut, what the invoker waits on), and the
//! last of Mattermost's deletions (the daemon's log line that ends them).
//! The notice is edited only where posts remain, so in a run where every
//! deletion succeeds the last deletion is the end. Recorded in
//! `docs/benchmarks.md`.
//!
//! `cargo bench -p e2e --bench clear_channel` (`CLEAR_RUNS` runs, 3 unless set)

use std::time::{Duration, Instant};

use e2e::Harness;
use e2e::clearing::{eventually, open, seen};
use e2e::scenario::store;
use serde_json::{Value, json};
use tokio::task::JoinSet;

const POSTS: usize = 20_000;
/// Posters at once while seeding.
const POSTERS: usize = 8;

/// Posts `POSTS` messages as ana through the simulator; their ids.
async fn seed(h: &Harness, channel: &str, run: usize) -> Vec<String> {
    let url = format!("{}/_sim/post", h.mattermost.url);
    let client = reqwest::Client::new();
    let mut posters = JoinSet::new();
    for poster in 0..POSTERS {
        let (url, client, channel) = (url.clone(), client.clone(), channel.to_string());
        posters.spawn(async move {
            let mut ids = Vec::new();
            for n in (poster..POSTS).step_by(POSTERS) {
                let post: Value = client
                    .post(&url)
                    .json(&json!({"as": "ana", "channel_id": channel,
                        "message": format!("Run {run}, post {n}: an ordinary paragraph a person writes here.")}))
                    .send()
                    .await
                    .expect("simulator")
                    .json()
                    .await
                    .expect("a post");
                ids.push(post["id"].as_str().expect("id").to_string());
            }
            ids
        });
    }
    let mut ids = Vec::with_capacity(POSTS);
    while let Some(done) = posters.join_next().await {
        ids.extend(done.expect("a poster"));
    }
    ids
}

/// Waits until the daemon's store holds every seeded post.
async fn recorded(h: &Harness, ids: &[String]) {
    let mut left: Vec<String> = ids.to_vec();
    for _ in 0..6_000 {
        let s = store(h);
        left.retain(|id| s.post(id).expect("read").is_none());
        if left.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} seeded posts never reached the store", left.len());
}

/// A field of a JSON log line, at the top or under `fields`.
fn field(line: &Value, name: &str) -> u64 {
    line.get(name)
        .or_else(|| line["fields"].get(name))
        .and_then(Value::as_u64)
        .unwrap_or_default()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    // `cargo test --all-targets` runs benches as tests once; this one is a
    // measurement, so it runs only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench clear_channel: skipped outside `cargo bench`");
        return;
    }
    let runs: usize = std::env::var("CLEAR_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    h.person("ana", &["town-square"]).await;
    let square = h.channel("town-square").await.id;

    for run in 0..runs {
        let seeding = Instant::now();
        let ids = seed(&h, &square, run).await;
        recorded(&h, &ids).await;
        let seeded = seeding.elapsed();
        open(&h, "ana", &square, "/collegium clear").await;
        daemon.logged();

        let started = Instant::now();
        let answer = h.submit_dialog("ana", &square, json!({})).await;
        let answered = started.elapsed();
        assert!(answer.get("error").is_none(), "{answer}");
        let finished = loop {
            if let Some(line) = daemon.logged().into_iter().find(|l| {
                l["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("cleared posts deleted from Mattermost"))
            }) {
                break line;
            }
            assert!(
                started.elapsed() < Duration::from_secs(1_800),
                "the deletions never ended"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let whole = started.elapsed();
        let (deleted, remaining) = (field(&finished, "deleted"), field(&finished, "remaining"));
        assert_eq!(remaining, 0, "every deletion succeeded: {finished}");
        eventually("the channel shows only the notice", async || {
            seen(&h, "ana", &square).await.len() == 1
        })
        .await;
        println!(
            "run {run}: seeded {POSTS} posts in {:.1} s; dialog answered (notice + cut) in {} ms; \
             {deleted} deleted, the last {:.1} s after confirmation ({:.2} ms a post)",
            seeded.as_secs_f64(),
            answered.as_millis(),
            whole.as_secs_f64(),
            whole.as_secs_f64() * 1_000.0 / deleted.max(1) as f64,
        );
    }
}
