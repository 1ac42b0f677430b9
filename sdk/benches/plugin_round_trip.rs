//! A plugin call's round trip (issue 22, performance: under 300 µs added):
//! the same SDK tool called three ways — its body alone, as a daemon-served
//! tool runs in process; through the plugin's `Toolset` service in process
//! (grant checked, audit line synced); and through the service over its
//! Unix socket, as the daemon calls a plugin. Recorded in
//! `docs/benchmarks.md`.
//!
//! `cargo bench -p collegium-sdk --bench plugin_round_trip`

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    Call, DescribeRequest, InvokeRequest, invoke_event, toolset_server::Toolset,
};
use collegium_sdk::{NoSettings, Plugin, Reply, Storage, ToolBuilder, ToolError};
use collegium_worker_kit::admission::now_ms;
use collegium_worker_kit::grant::GrantSigner;
use collegium_worker_kit::serve::{PeerPolicy, serve};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_stream::StreamExt;
use tonic::Request;

const WARMUP: usize = 50;
const RUNS: usize = 1000;

#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

fn shout_text(args: Text) -> Reply {
    Reply::text(args.text.to_uppercase())
}

async fn shout(_: collegium_sdk::Context<NoSettings>, args: Text) -> Result<Reply, ToolError> {
    Ok(shout_text(args))
}

fn plugin() -> Plugin<NoSettings> {
    Plugin::new("shout").tool(ToolBuilder::new("it", "Shouts.").does_not_gate().run(shout))
}

const ARGUMENTS: &[u8] = br#"{"text":"a short argument, as most calls have"}"#;

fn request(signer: &GrantSigner, n: usize) -> InvokeRequest {
    let call = Call {
        agent: "mira".into(),
        turn_id: "turn-1".into(),
        call_id: format!("call-{n}"),
        tool: "it".into(),
        arguments_json: ARGUMENTS.to_vec(),
        ..Call::default()
    };
    let grant = signer.sign("shout", &call, "", now_ms());
    InvokeRequest {
        call: Some(call),
        grant: Some(grant),
    }
}

fn handshake(signer: &GrantSigner) -> DescribeRequest {
    DescribeRequest {
        protocol_version: PROTOCOL_VERSION,
        boot_id: signer.boot_id().into(),
        grant_public_key: signer.public_key().to_vec(),
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--test") {
        println!("bench plugin_round_trip: skipped outside `cargo bench`");
        return;
    }
    // Audit lines are synced per call; tmpfs keeps the disk out of both
    // sides, as in the worker kit's own round-trip bench.
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        tempfile::tempdir_in("/dev/shm")
    } else {
        tempfile::tempdir()
    }
    .expect("tempdir");
    let signer = GrantSigner::generate("bench");

    // The body alone: what a daemon-served tool costs in process.
    let mut body = Vec::new();
    for _ in 0..WARMUP + RUNS {
        let started = Instant::now();
        let args: Text = serde_json::from_slice(ARGUMENTS).expect("arguments");
        std::hint::black_box(shout_text(args));
        body.push(started.elapsed());
    }

    // Through the service in process.
    let local = plugin()
        .service(&base.path().join("local.jsonl"), Storage::unavailable())
        .expect("service");
    local
        .describe(Request::new(handshake(&signer)))
        .await
        .expect("handshake");
    let mut in_process = Vec::new();
    for n in 0..WARMUP + RUNS {
        let req = request(&signer, n);
        let started = Instant::now();
        let mut events = local
            .invoke(Request::new(req))
            .await
            .expect("invoke")
            .into_inner();
        while let Some(event) = events.next().await {
            if let Some(invoke_event::Event::Result(_)) = event.expect("event").event {
                break;
            }
        }
        in_process.push(started.elapsed());
    }

    // Over the socket.
    let remote = plugin()
        .service(&base.path().join("remote.jsonl"), Storage::unavailable())
        .expect("service");
    let socket = base.path().join("shout.sock");
    let me = std::fs::metadata(base.path())
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .expect("uid");
    let _serving = serve(
        &socket,
        0o600,
        PeerPolicy {
            allowed_uids: BTreeSet::from([me]),
        },
        remote,
    )
    .await
    .expect("serve");
    let mut client = collegium_worker_kit::client::connect(&socket, None)
        .await
        .expect("connect");
    client
        .describe(handshake(&signer))
        .await
        .expect("handshake");
    let mut wire = Vec::new();
    for n in 0..WARMUP + RUNS {
        let req = request(&signer, 100_000 + n);
        let started = Instant::now();
        let mut events = client.invoke(req).await.expect("invoke").into_inner();
        while let Some(event) = events.next().await {
            if let Some(invoke_event::Event::Result(_)) = event.expect("event").event {
                break;
            }
        }
        wire.push(started.elapsed());
    }

    let body = median(body.split_off(WARMUP));
    let in_process = median(in_process.split_off(WARMUP));
    let wire = median(wire.split_off(WARMUP));
    println!("plugin call round trip, median of {RUNS}:");
    println!(
        "  the body alone (a tool in process):   {:8.1} µs",
        us(body)
    );
    println!(
        "  the SDK service in process:           {:8.1} µs",
        us(in_process)
    );
    println!(
        "  the SDK service over its socket:      {:8.1} µs",
        us(wire)
    );
    println!(
        "  added by the plugin boundary:         {:8.1} µs (target under 300)",
        us(wire.saturating_sub(body))
    );
}
