//! A memory write at the entry cap (§3.6), eviction included, recorded in
//! `docs/benchmarks.md`: the whole of `memory::write` as the daemon runs it
//! inside one store call — caps checked, the entry read longest ago found
//! and deleted, a key drawn, the row written, the turn's seen revision
//! recorded, the disclosure rendered — on a store on disk in WAL mode. Also
//! the listing at the cap, which every turn's assembly renders. Each must
//! stay under a millisecond.
//!
//! `cargo bench -p collegium-control --bench memory`

use std::hint::black_box;
use std::time::{Duration, Instant};

use collegium_control::memory::{Caps, Request, render, serve};
use collegium_control::store::Store;
use serde_json::json;

const RUNS: usize = 2_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn measure(name: &str, mut run: impl FnMut()) {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        run();
        times.push(start.elapsed());
    }
    times.sort();
    println!(
        "| {name} | {:.1} µs | {:.1} µs |",
        percentile(&times, 0.5).as_secs_f64() * 1e6,
        percentile(&times, 0.99).as_secs_f64() * 1e6
    );
}

fn main() {
    // `cargo test --all-targets` runs a bench once as a test; this one is a
    // measurement, so it runs only under `cargo bench`, which passes
    // `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("store");
    let caps = Caps::default();
    let body = "x".repeat(caps.max_body_chars);
    let mut now = 1_795_510_800_000_i64;
    let write = |store: &mut Store, now: i64| {
        let request = Request {
            agent: "mira",
            turn_id: "t1",
            channel_id: "c1",
            now,
            caps,
            timezone: chrono_tz::UTC,
            reads: true,
        };
        let served = serve(
            store,
            &request,
            "write",
            &json!({"description": "A fact a later turn needs, in one line of about sixty characters", "body": body}),
        )
        .expect("store");
        assert!(served.outcome.is_ok(), "{served:?}");
    };
    // A second agent's full store beside mira's, as a deployment has.
    for n in 0..caps.max_entries {
        now += 1;
        write(&mut store, now);
        let mut other = Request {
            agent: "theo",
            turn_id: "t2",
            channel_id: "c2",
            now,
            caps,
            timezone: chrono_tz::UTC,
            reads: true,
        };
        other.now += i64::try_from(n).unwrap_or_default();
        serve(
            &mut store,
            &other,
            "write",
            &json!({"description": "theirs", "body": "b"}),
        )
        .expect("store");
    }
    assert_eq!(store.memory_count("mira").expect("count"), caps.max_entries);
    println!("| case | median | p99 |\n|---|---|---|");
    measure(
        &format!(
            "memory::write at the cap ({} entries, {}-character bodies), one eviction",
            caps.max_entries, caps.max_body_chars
        ),
        || {
            now += 1;
            write(&mut store, now);
        },
    );
    assert_eq!(store.memory_count("mira").expect("count"), caps.max_entries);
    measure(
        &format!(
            "the listing at the cap ({} entries), read and rendered",
            caps.max_entries
        ),
        || {
            let entries = store.memory_listing("mira").expect("list");
            black_box(render::listing(&entries, &caps));
        },
    );
}
