//! One call's round trip through the wire against the same call in process
//! (issue: worker machinery), recorded in `docs/benchmarks.md`. Both paths
//! check a signed grant and append a synced audit line; the difference is
//! what the Unix socket, HTTP/2 and protobuf add.
//!
//! `cargo bench -p collegium-worker-kit --bench round_trip`

#[path = "../tests/support/shout.rs"]
mod shout;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{Call, DescribeRequest, InvokeRequest, toolset_server::Toolset};
use collegium_worker_kit::admission::now_ms;
use collegium_worker_kit::client;
use collegium_worker_kit::grant::GrantSigner;
use collegium_worker_kit::serve::{PeerPolicy, serve};
use tokio_stream::StreamExt;
use tonic::Request;

fn handshake(signer: &GrantSigner) -> DescribeRequest {
    DescribeRequest {
        protocol_version: PROTOCOL_VERSION,
        boot_id: signer.boot_id().into(),
        grant_public_key: signer.public_key().to_vec(),
    }
}

fn request(signer: &GrantSigner, n: usize) -> InvokeRequest {
    let call = Call {
        agent: "mira".into(),
        turn_id: "turn-1".into(),
        call_id: format!("call-{n}"),
        tool: "it".into(),
        arguments_json: br#"{"text":"a short argument, as most calls have"}"#.to_vec(),
        ..Call::default()
    };
    let grant = signer.sign("shout", &call, "", now_ms());
    InvokeRequest {
        call: Some(call),
        grant: Some(grant),
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

const WARMUP: usize = 50;
const RUNS: usize = 1000;

#[tokio::main]
async fn main() {
    // Audit lines are synced per call; tmpfs keeps the disk out of both sides.
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        tempfile::tempdir_in("/dev/shm")
    } else {
        tempfile::tempdir()
    }
    .expect("tempdir");
    let signer = GrantSigner::generate("bench");

    let (local, _) = shout::shout(&base.path().join("local.jsonl"));
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
            event.expect("event");
        }
        if n >= WARMUP {
            in_process.push(started.elapsed());
        }
    }

    let socket = base.path().join("shout.sock");
    let policy = PeerPolicy {
        allowed_uids: BTreeSet::from([nix::unistd::geteuid().as_raw()]),
    };
    let (remote, _) = shout::shout(&base.path().join("wire.jsonl"));
    let serving = serve(&socket, 0o660, policy, remote).await.expect("serve");
    let mut client = client::connect(&socket, None).await.expect("connect");
    client
        .describe(handshake(&signer))
        .await
        .expect("handshake");
    let mut wire = Vec::new();
    for n in 0..WARMUP + RUNS {
        let req = request(&signer, n);
        let started = Instant::now();
        let mut events = client.invoke(req).await.expect("invoke").into_inner();
        while events.message().await.expect("event").is_some() {}
        if n >= WARMUP {
            wire.push(started.elapsed());
        }
    }
    serving.shutdown().await.expect("shutdown");

    let local = median(in_process);
    let remote = median(wire);
    println!("round trip of one call, {RUNS} runs after {WARMUP} of warm-up (medians):");
    println!(
        "  in process          {:>9.1} µs",
        local.as_secs_f64() * 1e6
    );
    println!(
        "  over the Unix socket {:>8.1} µs",
        remote.as_secs_f64() * 1e6
    );
    println!(
        "  added by the wire   {:>9.1} µs",
        (remote.as_secs_f64() - local.as_secs_f64()) * 1e6
    );
}
