//! A load driver: how long a trigger takes from arriving to its
//! announcement (§4.2; target: median under 100 ms), against the
//! Mattermost simulator. Two paths: a webhook arriving in an idle channel
//! (intake, the store, the lanes, the system bot's post), and a trigger
//! that waited on a busy channel, from the end of the turn that held it to
//! its announcement. Times are the simulator's post times against the
//! moment the request was sent and the store's record of the turn's end;
//! both clocks are this host's. Recorded in `docs/benchmarks.md`.
//!
//! `cargo bench -p e2e --bench trigger_delivery`

use std::time::Duration;

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{completions_reach, ended_turn, store};
use e2e::triggers::item;
use model_sim::script::Scripted;

const RUNS: usize = 40;
const SECRET: &str = "bench-trigger-secret";

fn reply(text: &str) -> Scripted {
    Scripted {
        text: Some(text.into()),
        ..Default::default()
    }
}

fn percentile(sorted: &[i64], p: f64) -> i64 {
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at]
}

fn report(name: &str, mut samples: Vec<i64>) {
    samples.sort_unstable();
    println!(
        "{name}: n={} median={} ms p90={} ms max={} ms",
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.9),
        samples.last().copied().unwrap_or_default()
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    // `cargo test --all-targets` runs benches as tests once; this one is a
    // measurement, so it runs only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench trigger_delivery: skipped outside `cargo bench`");
        return;
    }
    let h = Harness::with_trigger_route(SECRET, "debounce_window_ms = 0").await;
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    h.person("ana", &["town-square"]).await;
    let square = h.channel("town-square").await.id;
    let bearer = format!("Bearer {SECRET}");

    let mut idle = Vec::new();
    for n in 0..RUNS {
        h.model
            .sim
            .script("demo-model", vec![reply(&format!("Seen {n}."))]);
        let sent = now_ms();
        let (status, _) = h
            .webhook(
                Some(&bearer),
                item("mira", "town-square", &format!("Idle {n}"), "r", "b"),
            )
            .await;
        assert_eq!(status, 202);
        let announced = h.wait_announcement(&square, &format!("“Idle {n}”")).await;
        idle.push(announced.create_at - sent);
        h.wait_post(&square, "mira", &format!("Seen {n}."), sent)
            .await;
        ended_turn(&h, "mira", &square).await;
    }
    report("idle channel, webhook to announcement", idle);

    let mut busy = Vec::new();
    for n in 0..RUNS {
        let hold = format!("hold-{n}");
        h.model.sim.script(
            "demo-model",
            vec![
                Scripted {
                    text: Some(format!("Thought {n}.")),
                    hold: Some(hold.clone()),
                    ..Default::default()
                },
                reply(&format!("Queued {n} seen.")),
            ],
        );
        let since = now_ms();
        let before = e2e::scenario::turn_requests(&h).len();
        h.say("ana", &square, &format!("@mira think {n}")).await;
        completions_reach(&h, before + 1).await;
        let (status, _) = h
            .webhook(
                Some(&bearer),
                item("mira", "town-square", &format!("Busy {n}"), "r", "b"),
            )
            .await;
        assert_eq!(status, 202);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let held = store(&h)
            .last_turn("mira", &square)
            .expect("query")
            .expect("the held turn")
            .id;
        h.model.sim.release(&hold);
        let announced = h.wait_announcement(&square, &format!("“Busy {n}”")).await;
        let ended = store(&h)
            .turn(&held)
            .expect("query")
            .and_then(|t| t.ended_at)
            .expect("the held turn ended before its channel's trigger was announced");
        busy.push(announced.create_at - ended);
        h.wait_post(&square, "mira", &format!("Queued {n} seen."), since)
            .await;
        ended_turn(&h, "mira", &square).await;
    }
    report("busy channel, turn end to announcement", busy);
}
