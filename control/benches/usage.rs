//! `/collegium usage` (§8.4) against a large store, recorded in
//! `docs/benchmarks.md`: 100,000 turns that ended in the last 24 hours (and
//! 100,000 older ones), 8 agents on 2 models each, every turn with three
//! completions and a call and result between them, one in fifty cut by its
//! time limit and one in fifty aborted by a steer. Each run is the store read
//! the command makes. The target: under 100 ms.
//!
//! `cargo bench -p collegium-control --bench usage`

use std::time::{Duration, Instant};

use collegium_control::inference::Usage;
use collegium_control::store::{NewTurn, Store, TraceKind, TurnCause, TurnEnd, TurnEvent};
use serde_json::json;

const TURNS_IN_WINDOW: usize = 100_000;
const TURNS_BEFORE: usize = 100_000;
const RUNS: usize = 50;
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn event(turn: &str, at: i64, kind: TraceKind, detail: serde_json::Value) -> TurnEvent {
    TurnEvent {
        turn_id: turn.to_string(),
        seq: 0,
        at,
        kind,
        call_id: None,
        tool: None,
        arguments: None,
        content: Some("A completion of ordinary length.".into()),
        detail: Some(detail.to_string()),
    }
}

fn fill(store: &mut Store, now: i64) {
    store.bulk(|store| {
        for index in 0..TURNS_IN_WINDOW + TURNS_BEFORE {
            let id = format!("turn{index:07}");
            // The older half ended two days ago, outside the window.
            let ended = if index < TURNS_BEFORE {
                now - 2 * DAY_MS + index as i64
            } else {
                now - DAY_MS + 1 + (index - TURNS_BEFORE) as i64 * 800
            };
            store
                .open_turn(&NewTurn {
                    id: id.clone(),
                    agent: format!("agent{}", index % 8),
                    channel_id: format!("c{}", index % 40),
                    boot_id: "boot".into(),
                    started_at: ended - 5_000,
                    cause: TurnCause::Post,
                    answers_post_id: None,
                    depth: 0,
                    chain_root: id.clone(),
                    chain_length: 1,
                    model: format!("model{}", (index / 8) % 2),
                })
                .expect("turn");
            for completion in 0..3 {
                let usage = Usage {
                    prompt_tokens: 4_000 + completion * 300,
                    cached_prompt_tokens: 3_000,
                    cache_write_tokens: 0,
                    completion_tokens: 200,
                    reasoning_tokens: 50,
                    cost_micro_usd: (index % 3 != 0).then_some(1_200),
                };
                let time_limit = completion == 2 && index % 50 == 7;
                if !time_limit {
                    store.add_usage(&id, &usage).expect("usage");
                }
                let finish = if time_limit { "TimeLimit" } else { "Stop" };
                store
                    .append_event(&event(
                        &id,
                        ended - 4_000,
                        TraceKind::Completion,
                        json!({"calls": [], "finish": finish, "upstream": null,
                               "usage": {"prompt_tokens": usage.prompt_tokens,
                                         "cached_prompt_tokens": 3_000,
                                         "completion_tokens": 200,
                                         "estimated": time_limit}}),
                    ))
                    .expect("completion");
                if completion < 2 {
                    store
                        .append_event(&event(&id, ended - 3_000, TraceKind::Call, json!({})))
                        .expect("call");
                    store
                        .append_event(&event(&id, ended - 2_000, TraceKind::Result, json!({})))
                        .expect("result");
                }
            }
            if index % 50 == 11 {
                store
                    .append_event(&event(
                        &id,
                        ended - 1_000,
                        TraceKind::Steer,
                        json!({"by": "ana", "aborted_completion":
                               {"estimated": true, "prompt_tokens": 4_000,
                                "completion_tokens": 40, "reasoning_tokens": 0}}),
                    ))
                    .expect("steer");
            }
            store
                .end_turn(
                    &id,
                    &TurnEnd {
                        exit_kind: if index % 97 == 0 {
                            "abandoned"
                        } else {
                            "completed"
                        }
                        .into(),
                        ended_at: ended,
                        ended_by: None,
                        context_reach_post_id: None,
                    },
                )
                .expect("end");
        }
    });
}

fn main() {
    // `cargo test --all-targets` runs benches as tests once; this one is a
    // measurement, so it runs only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench usage: skipped outside `cargo bench`");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("open");
    let now = 1_800_000_000_000_i64;
    let filled = Instant::now();
    fill(&mut store, now);
    println!(
        "store of {} turns ({TURNS_IN_WINDOW} in the window) filled in {:.1} s",
        TURNS_IN_WINDOW + TURNS_BEFORE,
        filled.elapsed().as_secs_f64()
    );
    let mut times = Vec::with_capacity(RUNS);
    let mut report = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        report = Some(store.usage_since(now - DAY_MS).expect("usage"));
        times.push(start.elapsed());
    }
    times.sort();
    let report = report.expect("a run");
    let turns: u64 = report.rows.iter().map(|r| r.turns).sum();
    let cut: u64 = report.cut.iter().map(|c| c.completions).sum();
    assert_eq!(turns, TURNS_IN_WINDOW as u64, "every turn in the window");
    assert_eq!(
        cut,
        (TURNS_IN_WINDOW / 50 * 2) as u64,
        "every cut completion"
    );
    println!(
        "usage over {turns} turns ({} rows, {cut} cut completions): median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
        report.rows.len(),
        percentile(&times, 0.5).as_secs_f64() * 1000.0,
        percentile(&times, 0.9).as_secs_f64() * 1000.0,
        percentile(&times, 0.99).as_secs_f64() * 1000.0
    );
}
