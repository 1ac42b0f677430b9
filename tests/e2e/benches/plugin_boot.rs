//! Boot with five plugins against boot with none (issue 22, performance:
//! under 200 ms added): the daemon's start to `READY=1`, the model check's
//! phase taken out as in the cold-start bench. Each plugin is the SDK's
//! bench plugin (one tool, one collection) under its own namespace; every
//! one is started, handshaken, its collections compiled and its storage
//! served before the daemon is ready. Recorded in `docs/benchmarks.md`.
//!
//! `cargo bench -p e2e --bench plugin_boot` (after
//! `cargo build --workspace --bins`; `--release` for release figures)

use std::process::Command;
use std::time::{Duration, Instant};

use e2e::Harness;
use e2e::notify::{Said, listen, until};

const PLUGINS: usize = 5;
const BOOTS: usize = 7;

fn phase(said: &[Said], text: &str) -> Instant {
    said.iter()
        .find(|s| s.lines.iter().any(|l| l == &format!("STATUS={text}")))
        .unwrap_or_else(|| panic!("no STATUS={text}"))
        .at
}

/// One boot to READY=1, the model check taken out.
fn boot(h: &Harness, label: &str, round: usize) -> Duration {
    let socket = h.dir.path().join(format!("notify-{label}-{round}.sock"));
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
    (ready - started) - models
}

/// The median of `BOOTS` boots after one to warm the caches.
fn median_boot(h: &Harness, label: &str) -> Duration {
    boot(h, label, 0);
    let mut boots: Vec<Duration> = (1..=BOOTS).map(|round| boot(h, label, round)).collect();
    boots.sort();
    boots[BOOTS / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench plugin_boot: skipped outside `cargo bench`");
        return;
    }
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let without = median_boot(&h, "none");

    let mut grants = vec!["workspace".to_string()];
    for i in 1..=PLUGINS {
        let namespace = format!("bench{i}");
        h.install_plugin(
            &namespace,
            &format!(
                "#!/bin/sh\nBENCH_PLUGIN_NAMESPACE={namespace} exec '{}' \"$@\"\n",
                e2e::binary("collegium-bench-plugin").display()
            ),
        );
        grants.push(namespace);
    }
    let grants: Vec<&str> = grants.iter().map(String::as_str).collect();
    h.grant_mira(&grants);
    let with = median_boot(&h, "five");
    println!(
        "boot to READY=1, median of {BOOTS}, model check taken out: {:.0} ms with no plugin, {:.0} ms with {PLUGINS}; {:.0} ms added (target under 200)",
        ms(without),
        ms(with),
        ms(with.saturating_sub(without))
    );
}
