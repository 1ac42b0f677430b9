//! A load driver: the daemon's resident memory with 20 agents connected
//! (issue 7), each with its own socket, after boot and after every agent
//! has taken a turn. Recorded in `docs/benchmarks.md`.
//!
//! `cargo bench -p e2e --bench daemon_memory`

use std::time::Duration;

use e2e::Harness;
use e2e::people::now_ms;
use model_sim::script::Scripted;

const AGENTS: usize = 20;

fn resident_kib(pid: u32) -> u64 {
    e2e::procs::resident_kib(pid).expect("the daemon's VmRSS")
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    // `cargo test --all-targets` runs benches as tests once; this one is
    // a measurement, so it runs only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench daemon_memory: skipped outside `cargo bench`");
        return;
    }
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    let mut text = std::fs::read_to_string(&h.config).expect("config");
    for i in 3..=AGENTS {
        text.push_str(&format!(
            "\n[[agents]]\nusername = \"agent{i:02}\"\nprompt = \"You help.\"\nmodel = \"demo\"\n"
        ));
    }
    std::fs::write(&h.config, text).expect("config");
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pid = daemon.child.id();
    let idle = resident_kib(pid);
    h.person("ana", &["town-square"]).await;
    let square = h.channel("town-square").await.id;
    let mut agents: Vec<String> = vec!["mira".into(), "theo".into()];
    agents.extend((3..=AGENTS).map(|i| format!("agent{i:02}")));
    for agent in &agents {
        h.model.sim.script(
            "demo-model",
            vec![Scripted {
                text: Some(format!("{agent} answering.")),
                ..Default::default()
            }],
        );
        let since = now_ms() - 1;
        h.say("ana", &square, &format!("@{agent} hello")).await;
        h.wait_post(&square, agent, "answering", since).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = resident_kib(pid);
    println!(
        "daemon resident memory with {AGENTS} agents connected: {:.1} MiB after boot, {:.1} MiB after one turn each",
        idle as f64 / 1024.0,
        after as f64 / 1024.0
    );
}
