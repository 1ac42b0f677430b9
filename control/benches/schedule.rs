//! The schedule decision (§4.2), recorded in `docs/benchmarks.md`: parsing a
//! recurrence (with its never-fires search), and `due` / `next_after` where
//! the search is longest — a year down, a leap-day schedule, the second pass
//! of a repeated hour. It runs on every scheduler wake-up and every
//! `config check`, so each must stay far below a millisecond.
//!
//! `cargo bench -p collegium-control --bench schedule`

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use collegium_control::triggers::Recurrence;

const RUNS: usize = 2_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .single()
        .expect("a valid UTC time")
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

fn recurrence(expression: &str, timezone: &str) -> Recurrence {
    Recurrence::parse(expression, timezone).expect("the recurrence parses")
}

fn main() {
    // `cargo test --all-targets` runs a bench once as a test; this one is a
    // measurement, so it runs only under `cargo bench`, which passes
    // `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    println!("| case | median | p99 |\n|---|---|---|");
    measure("parse `0 9 * * 1-5` in Europe/Berlin", || {
        black_box(Recurrence::parse("0 9 * * 1-5", "Europe/Berlin").is_ok());
    });
    measure("parse `0 9 30 2 *` (refused: never fires)", || {
        black_box(Recurrence::parse("0 9 30 2 *", "UTC").is_err());
    });
    let daily = recurrence("0 9 * * *", "Europe/Berlin");
    measure("`due`, daily, a year down", || {
        black_box(daily.due(utc(2025, 6, 1, 0, 0), utc(2026, 6, 1, 0, 0)));
    });
    let leap = recurrence("0 9 29 2 *", "UTC");
    measure("`due`, leap day, three years since", || {
        black_box(leap.due(utc(2025, 1, 1, 0, 0), utc(2028, 1, 1, 0, 0)));
    });
    let quarter = recurrence("*/15 * * * *", "Europe/Berlin");
    measure(
        "`due`, every 15 min, second pass of the repeated hour",
        || {
            black_box(quarter.due(utc(2026, 10, 24, 0, 0), utc(2026, 10, 25, 1, 50)));
        },
    );
    measure(
        "`next_after`, every 15 min, start of the repeated hour",
        || {
            black_box(quarter.next_after(utc(2026, 10, 25, 1, 0)));
        },
    );
    measure("`next_after`, daily", || {
        black_box(daily.next_after(utc(2026, 6, 1, 12, 0)));
    });
}
