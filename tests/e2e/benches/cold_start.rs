//! A load driver: the daemon's cold start, from the process starting to
//! `READY=1` on its notify socket, with 20 agents (issue 21: under 500 ms
//! without the model checks). The model check's phase is measured from its
//! `STATUS=` to the next one and taken out, since it is a provider's round
//! trip, not the daemon's work. Recorded in `docs/benchmarks.md`.
//!
//! `cargo bench -p e2e --bench cold_start` (after
//! `cargo build --release --workspace --bins`)

use std::process::Command;
use std::time::{Duration, Instant};

use e2e::Harness;
use e2e::notify::{Said, listen, until};

const AGENTS: usize = 20;
const BOOTS: usize = 7;

/// When the phase whose `STATUS=` is `text` began.
fn phase(said: &[Said], text: &str) -> Instant {
    said.iter()
        .find(|s| s.lines.iter().any(|l| l == &format!("STATUS={text}")))
        .unwrap_or_else(|| panic!("no STATUS={text}"))
        .at
}

/// One boot: (to READY=1, of which the model check).
fn boot(h: &Harness, round: usize) -> (Duration, Duration) {
    let socket = h.dir.path().join(format!("notify-{round}.sock"));
    let said = listen(&socket);
    let mut launcher = Command::new(e2e::binary("collegium"));
    launcher.env("NOTIFY_SOCKET", &socket);
    let started = Instant::now();
    let mut daemon = h.daemon_from(launcher);
    let boot = until(&said, "READY=1", Duration::from_secs(60));
    let ready = boot.last().expect("READY=1").at;
    let models =
        phase(&boot, "checking Mattermost") - phase(&boot, "store migrated; verifying models");
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
    let _ = daemon.child.wait();
    (ready - started, models)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    // `cargo test --all-targets` runs benches as tests once; this one is a
    // measurement, so it runs only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench cold_start: skipped outside `cargo bench`");
        return;
    }
    let h = Harness::start().await;
    let mut text = std::fs::read_to_string(&h.config).expect("config");
    for i in 3..=AGENTS {
        text.push_str(&format!(
            "\n[[agents]]\nusername = \"agent{i:02}\"\nprompt = \"You help.\"\nmodel = \"demo\"\n"
        ));
    }
    std::fs::write(&h.config, text).expect("config");
    h.provision().await.expect("provisioned");
    let (first, first_models) = boot(&h, 0);
    let mut without: Vec<Duration> = Vec::new();
    let mut whole: Vec<Duration> = Vec::new();
    for round in 1..=BOOTS {
        let (ready, models) = boot(&h, round);
        whole.push(ready);
        without.push(ready - models);
    }
    without.sort();
    whole.sort();
    println!(
        "cold start to READY=1 with {AGENTS} agents: first boot (empty store, migrations) {:.0} ms, {:.0} ms without the model check",
        ms(first),
        ms(first - first_models)
    );
    println!(
        "restarts over {BOOTS} boots: median {:.0} ms without the model check (max {:.0} ms); {:.0} ms with it",
        ms(without[BOOTS / 2]),
        ms(without[BOOTS - 1]),
        ms(whole[BOOTS / 2])
    );
}
