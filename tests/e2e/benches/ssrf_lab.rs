//! The SSRF lab's own costs (§3.4, the SSRF matrix): how long a lab takes to
//! build and to tear down, and how long reading its honeypots' hits takes
//! (each read settles every honeypot first), so the matrix's time budget is
//! known.
//!
//! `cargo bench -p e2e --bench ssrf_lab` (as root)

use std::time::{Duration, Instant};

use e2e::ssrf_lab::Lab;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    // `cargo test --all-targets` runs benches as tests once; this one is a
    // measurement, so it runs only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench ssrf_lab: skipped outside `cargo bench`");
        return;
    }
    let (mut starts, mut drops, mut reads) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let began = Instant::now();
        let lab = Lab::start().expect("start the lab");
        starts.push(began.elapsed());
        for _ in 0..10 {
            let began = Instant::now();
            let hits = lab.honeypot_hits().expect("hits");
            reads.push(began.elapsed());
            assert!(hits.is_empty());
        }
        let began = Instant::now();
        drop(lab);
        drops.push(began.elapsed());
    }
    println!(
        "ssrf_lab: start p50 {:?}, honeypot_hits (settling {} honeypots) p50 {:?}, drop p50 {:?}",
        median(starts),
        Lab::start().map(|l| l.honeypots().len()).unwrap_or(0),
        median(reads),
        median(drops)
    );
}
