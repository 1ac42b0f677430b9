//! Context assembly (§3.8) against a large store, recorded in
//! `docs/benchmarks.md`: a store of 1,000,000 posts in 10 channels, one of
//! them holding 100,000; each run builds that channel's window for an agent
//! (posts walked backwards in pages, its own trace interleaved). The target:
//! under 5 ms median, growing with the window, not with the history.
//!
//! `cargo bench -p collegium-control --bench context`

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use collegium_control::context::window::{self, WindowRequest};
use collegium_control::store::{
    AuthorKind, ChannelKind, ObservedChannel, ObservedPost, ObservedVia, PostRole, Store,
};

const TOTAL_POSTS: usize = 1_000_000;
const CHANNELS: usize = 10;
const RUNS: usize = 200;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn post(channel: usize, index: usize) -> ObservedPost {
    let at = 1_700_000_000_000 + index as i64 * 1_000;
    ObservedPost {
        id: format!("c{channel}p{index:08}"),
        channel_id: format!("c{channel}"),
        author_id: format!("u{}", index % 17),
        author_name: format!("person{}", index % 17),
        author_kind: AuthorKind::Person,
        created_at: at,
        message: format!(
            "Post {index} in channel {channel}: an ordinary message of about the length people write, \
             with a question or an update about item {}.",
            index % 311
        ),
        props: None,
        role: PostRole::Post,
        turn_id: None,
        pinned: false,
        observed_at: at,
        observed_via: ObservedVia::Live,
        files: Vec::new(),
    }
}

fn main() {
    // `cargo test --all-targets` runs benches as tests once; this one is
    // a measurement, so it runs only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench context: skipped outside `cargo bench`");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bench.db");
    let mut store = Store::open(&path).expect("open");
    let filled = Instant::now();
    for channel in 0..CHANNELS {
        store
            .record_channel(&ObservedChannel {
                id: format!("c{channel}"),
                name: format!("channel-{channel}"),
                display_name: format!("Channel {channel}"),
                kind: ChannelKind::Open,
            })
            .expect("channel");
    }
    store
        .record_channel(&ObservedChannel {
            id: format!("c{CHANNELS}"),
            name: "small".into(),
            display_name: "Small".into(),
            kind: ChannelKind::Open,
        })
        .expect("channel");
    store.bulk(|store| {
        for index in 0..TOTAL_POSTS {
            let channel = index % CHANNELS;
            store
                .record_post(&post(channel, index / CHANNELS))
                .expect("post");
        }
        // A channel of 1,000 posts in the same store: the same window over a
        // short history costs what it costs over a long one.
        for index in 0..1_000 {
            store.record_post(&post(CHANNELS, index)).expect("post");
        }
    });
    println!(
        "store of {TOTAL_POSTS} posts ({} per channel) filled in {:.1} s",
        TOTAL_POSTS / CHANNELS,
        filled.elapsed().as_secs_f64()
    );
    let names = BTreeMap::new();
    for (channel, history, budget) in [
        ("c3", "100,000", 8_000u64),
        ("c3", "100,000", 32_000),
        ("c3", "100,000", 128_000),
        ("c10", "1,000", 32_000),
    ] {
        let mut times = Vec::with_capacity(RUNS);
        let mut posts = 0;
        for _ in 0..RUNS {
            let start = Instant::now();
            let built = window::build(
                &store,
                &WindowRequest {
                    agent: "mira",
                    agent_user_id: "bot-mira",
                    channel_id: channel,
                    budget_tokens: budget,
                    anchor: None,
                    turn_started_at: i64::MAX,
                    floor: 0,
                    display_names: &names,
                    timezone: chrono_tz::Tz::UTC,
                },
            )
            .expect("window");
            times.push(start.elapsed());
            posts = built.post_ids.len();
        }
        times.sort();
        println!(
            "window of {budget} tokens ({posts} posts) over a {history}-post channel: median {:.2} ms, p99 {:.2} ms",
            percentile(&times, 0.5).as_secs_f64() * 1000.0,
            percentile(&times, 0.99).as_secs_f64() * 1000.0
        );
    }
}
