//! `/collegium trace` (§8.3) of a 500-event turn, recorded in
//! `docs/benchmarks.md`: 100 completions, each with its reasoning stored
//! beside it and four calls, and their 400 results of 2,000 characters,
//! in a store on disk among 2,000 other turns. Each run reads the turns
//! the post belongs to, gathers the trace and renders it, as the command
//! does. The target: under 100 ms.
//!
//! `cargo bench -p collegium-control --bench trace`

use std::time::{Duration, Instant};

use collegium_control::store::{NewTurn, Store, TraceKind, TurnCause, TurnEnd, TurnEvent};
use collegium_control::trace::{Reader, gather, render};
use serde_json::json;

const COMPLETIONS: usize = 100;
const CALLS: usize = 4;
const OTHER_TURNS: usize = 2_000;
const RUNS: usize = 100;
const NOW: i64 = 1_764_504_000_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn turn(store: &Store, id: &str, started: i64) {
    store
        .open_turn(&NewTurn {
            id: id.into(),
            agent: "mira".into(),
            channel_id: "c1".into(),
            boot_id: "boot".into(),
            started_at: started,
            cause: TurnCause::Post,
            answers_post_id: Some(format!("p-{id}")),
            depth: 0,
            chain_root: id.into(),
            chain_length: 1,
            model: "m".into(),
        })
        .expect("turn");
    store
        .end_turn(
            id,
            &TurnEnd {
                exit_kind: "completed".into(),
                ended_at: started + 60_000,
                ended_by: None,
                context_reach_post_id: None,
            },
        )
        .expect("end");
    store
        .record_answer(id, &format!("p-{id}"), "start")
        .expect("answer");
}

fn event(
    at: i64,
    kind: TraceKind,
    call: Option<String>,
    content: String,
    detail: String,
) -> TurnEvent {
    TurnEvent {
        turn_id: "traced".into(),
        seq: 0,
        at,
        kind,
        call_id: call.clone(),
        tool: call.map(|_| "workspace__read".to_string()),
        arguments: Some(r#"{"path":"notes.txt"}"#.into()),
        content: Some(content),
        detail: Some(detail),
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("store");
    store.bulk(|store| {
        for n in 0..OTHER_TURNS {
            turn(store, &format!("t{n}"), NOW - 86_400_000 + n as i64 * 30_000);
        }
        turn(store, "traced", NOW);
        store.set_status_post("traced", "status").expect("status");
        let mut at = NOW;
        let result = "x".repeat(2_000);
        let reasoning = "private reasoning ".repeat(60);
        for c in 0..COMPLETIONS {
            at += 300;
            let calls: Vec<_> = (0..CALLS)
                .map(|k| json!({"id": format!("call_{c}_{k}"), "name": "workspace__read", "arguments": "{}"}))
                .collect();
            let detail = json!({
                "calls": calls,
                "usage": {"prompt_tokens": 20_000, "cached_prompt_tokens": 18_000,
                          "completion_tokens": 200, "reasoning_tokens": 150, "estimated": false},
                "upstream": "Anthropic", "finish": "ToolCalls",
                "relief": {"stood_in": {}, "shortened": {}},
            });
            store
                .append_event_with_reasoning(
                    &event(at, TraceKind::Completion, None, "Reading.".into(), detail.to_string()),
                    Some(&reasoning),
                )
                .expect("completion");
            for k in 0..CALLS {
                at += 50;
                let detail = json!({"action": "✓ read notes.txt — returned 2,000 characters"});
                store
                    .append_event(&event(
                        at,
                        TraceKind::Result,
                        Some(format!("call_{c}_{k}")),
                        result.clone(),
                        detail.to_string(),
                    ))
                    .expect("result");
            }
        }
    });
    let name = |u: &str| u.to_string();
    let reader = Reader {
        timezone: chrono_tz::Europe::Berlin,
        now: NOW,
        name: &name,
    };
    let trace = |store: &Store| {
        let traces: Vec<_> = store
            .turns_of_post("status")
            .expect("turns")
            .into_iter()
            .filter_map(|(turn, how)| gather(store, &turn, how).expect("gather"))
            .collect();
        render("status", &traces, &reader)
    };
    let text = trace(&store);
    assert!(text.contains("**Events** (500):"), "the whole trace");
    assert!(
        !text.contains("private reasoning"),
        "never reasoning (§3.12)"
    );
    for _ in 0..5 {
        trace(&store);
    }
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(trace(&store));
            start.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "Trace of a 500-event turn ({} characters), among {OTHER_TURNS} turns: median {:.3} ms, p99 {:.3} ms over {RUNS} runs",
        text.chars().count(),
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3
    );
}
