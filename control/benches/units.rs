//! Open work (§3.15) with 200 open units, recorded in `docs/benchmarks.md`:
//! one agent created 100 units and was assigned 100 in one channel, against
//! 10 colleagues with 2,000 turns of history between them; each run
//! renders the section as assembly does — the units read, every line's
//! standing computed live from the turn records and pending decisions. The
//! target: under 2 ms median.
//!
//! `cargo bench -p collegium-control --bench units`

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use collegium_control::store::{NewReport, NewTurn, NewUnit, Store, TurnCause, TurnEnd, UnitState};
use collegium_control::units::render::open_work;
use collegium_control::units::standing::Viewpoint;

const UNITS: usize = 200;
const COLLEAGUES: usize = 10;
const TURNS: usize = 2_000;
const RUNS: usize = 300;
const NOW: i64 = 1_764_504_000_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("store");
    let colleague = |n: usize| format!("agent{}", n % COLLEAGUES);
    store.bulk(|store| {
        for n in 0..TURNS {
            let started = NOW - 86_400_000 + n as i64 * 30_000;
            let id = format!("t{n}");
            store
                .open_turn(&NewTurn {
                    id: id.clone(),
                    agent: colleague(n),
                    channel_id: "c1".into(),
                    boot_id: "boot".into(),
                    started_at: started,
                    cause: TurnCause::Post,
                    answers_post_id: None,
                    depth: 0,
                    chain_root: id.clone(),
                    chain_length: 1,
                    model: "m".into(),
                })
                .expect("turn");
            // The last turn of each colleague stays running.
            if n + COLLEAGUES < TURNS {
                store
                    .end_turn(
                        &id,
                        &TurnEnd {
                            exit_kind: "completed".into(),
                            ended_at: started + 20_000,
                            ended_by: None,
                            context_reach_post_id: None,
                        },
                    )
                    .expect("end");
            }
        }
        for n in 0..UNITS {
            let at = NOW - 3_600_000 + n as i64 * 1_000;
            let id = store
                .reserve_unit_number("c1", "lead", at)
                .expect("reserve");
            let (creator, assignee) = if n % 2 == 0 {
                ("lead".to_string(), colleague(n))
            } else {
                (colleague(n), "lead".to_string())
            };
            store
                .record_assignment(&NewUnit {
                    id,
                    channel_id: "c1".into(),
                    creator,
                    assignee,
                    outcome: format!(
                        "Outcome {n}: a paragraph of what is wanted, at ordinary length."
                    ),
                    criteria: "c".into(),
                    context: "x".into(),
                    assignment_post_id: format!("p{n}"),
                    assigning_turn_id: "t0".into(),
                    follows: None,
                    at,
                })
                .expect("unit");
        }
    });
    // A report writes in its own transaction, so these follow the bulk load.
    for n in (0..UNITS).step_by(3) {
        let unit_id = n as i64 + 1;
        store
            .record_report(&NewReport {
                unit_id,
                post_id: format!("r{n}"),
                state: UnitState::Review,
                body: "done".into(),
                by_framework: false,
                turn_id: None,
                at: NOW - 3_600_000 + n as i64 * 1_000 + 500,
            })
            .expect("report");
    }
    let names = BTreeMap::new();
    let render = |store: &Store| {
        open_work(
            store,
            Viewpoint {
                reader: "lead",
                channel_id: "c1",
                boot_id: "boot",
                now: NOW,
                timezone: chrono_tz::Europe::Berlin,
                display_names: &names,
            },
            UNITS,
        )
        .expect("render")
    };
    let lines = render(&store).lines().count();
    assert!(lines > UNITS, "every unit is listed");
    for _ in 0..20 {
        render(&store);
    }
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(render(&store));
            start.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "Open work, {UNITS} open units, {COLLEAGUES} colleagues, {TURNS} turns: median {:.3} ms, p99 {:.3} ms over {RUNS} runs",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3
    );
}
