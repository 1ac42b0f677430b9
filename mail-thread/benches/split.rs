//! Splitter throughput (issue 18's performance list): a generated long thread — twenty
//! replies deep, each client's boundary in turn, each message a few paragraphs — split as
//! text, and the same thread as Gmail-style HTML split as HTML. Recorded in
//! `docs/mail-thread.md`.
//!
//! `cargo bench -p collegium-mail-thread --bench split`

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use collegium_mail_thread::{split_html, split_text};

const REPLIES: usize = 20;
const WARMUP: usize = 3;
const RUNS: usize = 30;

fn message(n: usize) -> String {
    let mut text = String::new();
    for p in 0..6 {
        let _ = writeln!(
            text,
            "Paragraph {p} of reply {n}: the harbour budget needs another look before the\n\
             council meets; the ferry timetable, the school roof and the bridge all wait on\n\
             it, and the clerk asked for figures in € by Friday — résumé attached.\n"
        );
    }
    text
}

fn boundary(n: usize) -> String {
    match n % 5 {
        0 => format!(
            "On Tue, 3 Mar 2026 at 10:{:02}, Person {n} <p{n}@x.test> wrote:",
            n % 60
        ),
        1 => format!(
            "On 3 Mar 2026, at 10:{:02}, Person {n} <p{n}@x.test> wrote:",
            n % 60
        ),
        2 => format!("On 03/03/2026 10:{:02}, Person {n} wrote:", n % 60),
        3 => format!(
            "-----Original Message-----\nFrom: Person {n} <p{n}@x.test>\nSent: Tuesday, March 3, 2026 10:00 AM\nTo: Team <team@x.test>\nSubject: RE: Budget"
        ),
        _ => format!(
            "---------- Forwarded message ---------\nFrom: Person {n} <p{n}@x.test>\nDate: Tue, Mar 3, 2026 at 10:00 AM\nSubject: Budget\nTo: <team@x.test>"
        ),
    }
}

/// The newest message first; each older one below its boundary, `>`-quoted one level more
/// wherever the boundary is an attribution.
fn text_thread() -> String {
    let mut thread = String::new();
    for n in (0..REPLIES).rev() {
        let mut below = message(n);
        if !thread.is_empty() {
            let quotes = !matches!((n + 1) % 5, 3 | 4);
            below.push('\n');
            below.push_str(&boundary(n + 1));
            below.push('\n');
            for line in thread.lines() {
                if quotes {
                    below.push_str(if line.is_empty() { ">" } else { "> " });
                }
                below.push_str(line);
                below.push('\n');
            }
        }
        thread = below;
    }
    thread
}

fn html_thread() -> String {
    let mut thread = String::new();
    for n in (0..REPLIES).rev() {
        let body: String = message(n)
            .split("\n\n")
            .map(|p| format!("<div>{p}</div><div><br></div>"))
            .collect();
        thread = if thread.is_empty() {
            format!("<div dir=\"ltr\">{body}</div>")
        } else {
            format!(
                "<div dir=\"ltr\">{body}</div><div class=\"gmail_quote\"><div class=\"gmail_attr\">\
                 On Tue, 3 Mar 2026 at 10:00, Person {} &lt;p{}@x.test&gt; wrote:<br></div>\
                 <blockquote class=\"gmail_quote\" style=\"margin:0 0 0 .8ex\">{thread}</blockquote></div>",
                n + 1,
                n + 1
            )
        };
    }
    format!("<html><body>{thread}</body></html>")
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(name: &str, input: &str, split: impl Fn(&str) -> usize) {
    for _ in 0..WARMUP {
        black_box(split(input));
    }
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let parts = split(input);
        samples.push(started.elapsed());
        assert_eq!(parts, REPLIES - 1, "every reply's boundary is found");
    }
    let median = median(samples);
    let mb_per_s = input.len() as f64 / 1e6 / median.as_secs_f64();
    println!(
        "{name:6} {:7} bytes  median {:8.3} ms  {:7.1} MB/s  ({RUNS} runs)",
        input.len(),
        median.as_secs_f64() * 1e3,
        mb_per_s
    );
}

fn main() {
    // `cargo test --all-targets` runs a bench once as a test; this is a measurement, so it
    // runs only under `cargo bench`, which passes `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    time("text", &text_thread(), |t| split_text(t).quoted.len());
    time("html", &html_thread(), |h| split_html(h).quoted.len());
}
