//! PDF text throughput against `pdftotext` (poppler-utils) on a generated
//! 300-page PDF (§3.4 target: at least half its throughput), and how long
//! after its deadline a bomb's child is gone (target: within 100 ms).
//! `cargo bench -p collegium-worker-pdf --bench throughput`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use collegium_proto::pdf::v1::pdf_text_event::Event;
use support::{Worker, pdfs, read_all, request};

const RUNS: usize = 7;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// 300 pages of prose, each content stream compressed, as a report is.
fn report() -> Vec<u8> {
    let texts: Vec<String> = (1..=300)
        .map(|n| {
            (0..40)
                .map(|line| {
                    format!("Page {n}, line {line}: the quick brown fox jumps over the lazy dog.")
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    pdfs::compressed_text_pages(&texts)
}

fn pdftotext(pdf: &[u8]) -> (Duration, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("report.pdf");
    std::fs::write(&path, pdf).expect("write");
    let mut chars = 0;
    let samples = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let out = std::process::Command::new("pdftotext")
                .arg(&path)
                .arg("-")
                .output()
                .expect("pdftotext (apt-get install poppler-utils; tests/setup.sh does)");
            assert!(out.status.success());
            chars = String::from_utf8_lossy(&out.stdout).chars().count();
            started.elapsed()
        })
        .collect();
    (median(samples), chars)
}

#[tokio::main]
async fn main() {
    // `cargo test --all-targets` runs a bench once as a test; this one is a
    // measurement (minutes in a debug build), so it runs only under
    // `cargo bench`, which passes `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let pdf = report();
    let worker = Worker::start(&[]);
    let mut client = worker.client().await;

    let mut chars = 0;
    let mut samples = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let events = read_all(
            &mut client,
            request(pdf.clone(), Duration::from_secs(60), u64::MAX / 8),
        )
        .await;
        samples.push(started.elapsed());
        chars = events
            .iter()
            .map(|e| match e {
                Event::Page(p) => p.text.chars().count(),
                _ => 0,
            })
            .sum();
    }
    let ours = median(samples);
    let (theirs, their_chars) = pdftotext(&pdf);
    println!(
        "300-page PDF ({} KiB): worker {:.1} ms ({chars} chars, {:.0} pages/s), pdftotext {:.1} ms ({their_chars} chars, {:.0} pages/s); ratio {:.2} of pdftotext's throughput (target >= 0.5)",
        pdf.len() / 1024,
        ours.as_secs_f64() * 1e3,
        300.0 / ours.as_secs_f64(),
        theirs.as_secs_f64() * 1e3,
        300.0 / theirs.as_secs_f64(),
        theirs.as_secs_f64() / ours.as_secs_f64(),
    );

    // A bomb the deadline stops (the cap set far above what it reaches in
    // that time): how long after the deadline the answer comes, its child
    // killed and reaped.
    let worker = Worker::start(&["--memory-cap-mib", "3000", "--address-space-mib", "4000"]);
    let mut client = worker.client().await;
    let bomb = pdfs::text_operators();
    let deadline = Duration::from_millis(500);
    let mut overshoots = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let events = read_all(&mut client, request(bomb.clone(), deadline, 100_000)).await;
        let elapsed = started.elapsed();
        assert!(
            matches!(events.as_slice(), [Event::Failure(_)]),
            "{events:?}"
        );
        assert!(worker.children().is_empty());
        overshoots.push(elapsed.saturating_sub(deadline));
    }
    let worst = overshoots.iter().max().copied().unwrap_or_default();
    println!(
        "bomb (10^8 text operators, deadline {} ms): answered {:.1} ms after the deadline at the median, {:.1} ms at worst (target < 100 ms)",
        deadline.as_millis(),
        median(overshoots).as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e3,
    );
}
