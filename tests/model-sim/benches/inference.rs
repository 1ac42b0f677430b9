//! Benchmarks of the inference layer (issue: inference), recorded in
//! `docs/benchmarks.md`:
//! - stream parsing: a long streamed completion decoded by each adapter, in
//!   stream events per second;
//! - per-completion overhead: a short scripted completion through the whole
//!   adapter over loopback HTTP against the model simulator, median and p99.
//!
//! `cargo bench -p model-sim --bench inference`

use std::time::{Duration, Instant};

use collegium_control::config::model::ProviderKind;
use collegium_control::inference::{
    CallLimits, Cancel, CompletionRequest, Message, Provider, ProviderConfig, RetryPolicy,
    StreamEvent, decode,
};
use model_sim::WireKind;
use model_sim::script::{Scripted, ScriptedCall};
use serde_json::json;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn parsing(kind: ProviderKind, wire: WireKind) {
    let text: String = (0..4000).map(|i| format!("word{i} ")).collect();
    let scripted = Scripted {
        text: Some(text),
        reasoning: Some("thinking ".repeat(500)),
        tool_calls: vec![ScriptedCall {
            name: "web__fetch".into(),
            arguments: json!({"url": "https://example.com/".repeat(50)}),
            raw_arguments: None,
        }],
        ..Scripted::default()
    };
    let lines = model_sim::render(
        wire,
        "bench",
        &json!({"stream_options": {"include_usage": true}}),
        &scripted,
    );
    let events = lines.len();
    let stream: String = lines.concat();
    let mut times = Vec::new();
    for _ in 0..30 {
        let start = Instant::now();
        let completion = decode(kind, stream.as_bytes()).expect("decodes");
        times.push(start.elapsed());
        assert!(!completion.tool_calls.is_empty());
    }
    times.sort();
    let median = percentile(&times, 0.5);
    println!(
        "parse {kind:?}: {events} events ({} KiB) in {:.2} ms median → {:.0} events/s",
        stream.len() / 1024,
        median.as_secs_f64() * 1000.0,
        events as f64 / median.as_secs_f64()
    );
}

async fn overhead(kind: ProviderKind) {
    let sim = model_sim::start("127.0.0.1:0".parse().expect("addr"), false)
        .await
        .expect("sim");
    sim.sim.script(
        "bench",
        vec![Scripted {
            text: Some("OK".into()),
            standing: true,
            ..Scripted::default()
        }],
    );
    let base_url = match kind {
        ProviderKind::Openrouter => format!("{}/api/v1", sim.url),
        _ => format!("{}/v1", sim.url),
    };
    let provider = Provider::new(
        ProviderConfig {
            kind,
            base_url,
            api_key: Some("k".into()),
            model: "bench".into(),
            max_output_tokens: None,
            reasoning_effort: None,
        },
        RetryPolicy::default(),
    )
    .expect("provider");
    let request = CompletionRequest {
        system: "bench".into(),
        messages: vec![Message::User("ping".into())],
        ..CompletionRequest::default()
    };
    let limits = CallLimits {
        idle_timeout: Duration::from_secs(5),
        wall_clock: Duration::from_secs(10),
    };
    let mut times = Vec::new();
    for i in 0..300 {
        let start = Instant::now();
        let mut ignore = |_: &StreamEvent| {};
        provider
            .complete(&request, limits, Cancel::never(), &mut ignore)
            .await
            .expect("completion");
        if i >= 20 {
            times.push(start.elapsed());
        }
    }
    times.sort();
    println!(
        "completion {kind:?} over loopback: median {:.3} ms, p99 {:.3} ms ({} runs)",
        percentile(&times, 0.5).as_secs_f64() * 1000.0,
        percentile(&times, 0.99).as_secs_f64() * 1000.0,
        times.len()
    );
}

fn main() {
    // `cargo test --all-targets` runs benches as tests once; keep that quick.
    let quick =
        std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench");
    if quick {
        println!("bench inference: skipped outside `cargo bench`");
        return;
    }
    parsing(ProviderKind::OpenaiCompatible, WireKind::Openai);
    parsing(ProviderKind::Openrouter, WireKind::Openrouter);
    parsing(ProviderKind::Anthropic, WireKind::Anthropic);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for kind in [
        ProviderKind::OpenaiCompatible,
        ProviderKind::Openrouter,
        ProviderKind::Anthropic,
    ] {
        runtime.block_on(overhead(kind));
    }
}
