//! A generated 1 MB HTML page read as web::fetch reads it: decoded, pruned, its main content
//! converted to markdown with the rest counted, and windowed (§3.4; the target is
//! under 30 ms). A find over the same page is timed beside it. Recorded in the docs.
//!
//! `cargo bench -p collegium-web-page --bench convert`

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use collegium_web_page::{Fetched, Reading, Response, classify};
use url::Url;

const TARGET_BYTES: usize = 1024 * 1024;
const WARMUP: usize = 3;
const RUNS: usize = 30;

/// A news site's article page grown to a megabyte: navigation, a banner and a footer around
/// an article of paragraphs with links and emphasis, lists, tables, figures and a drop-down.
fn page() -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>A long report</title>\
         <style>body{font:16px serif}</style><script>window.x=1</script></head><body>\
         <header><a href=\"/\"><img src=\"/logo.png\" alt=\"The Paper\"></a></header><nav><ul>",
    );
    for n in 0..60 {
        let _ = write!(html, "<li><a href=\"/section/{n}\">Section {n}</a></li>");
    }
    html.push_str("</ul></nav><article><h1>A long report</h1>");
    let mut n = 0;
    while html.len() < TARGET_BYTES - 4_000 {
        let _ = write!(
            html,
            "<h2>Part {n}</h2><p>The council met on day {n} to discuss the <a href=\"../topics/{n}\">budget \
             for the harbour</a>, and <strong>agreed</strong> to <em>defer</em> the vote; résumé of \
             the debate follows, with figures in €.</p><p>Members asked about the bridge, the \
             ferry timetable and the school roof; the clerk read the minutes of meeting {n} aloud.</p>\
             <ul><li>Item one of {n}</li><li>Item two of {n}</li><li>Item three</li></ul>\
             <table><tr><th>Line</th><th>Amount</th></tr><tr><td>Roads</td><td>{n}00</td></tr></table>\
             <figure><img src=\"/img/{n}.jpg\" alt=\"Photograph {n}\"><figcaption>Caption {n}.</figcaption></figure>"
        );
        if n % 50 == 0 {
            html.push_str("<select name=\"pick\">");
            for o in 0..40 {
                let _ = write!(html, "<option>Choice {o}</option>");
            }
            html.push_str("</select>");
        }
        n += 1;
    }
    html.push_str("</article><footer><p>© The Paper. <a href=\"/privacy\">Privacy</a></p></footer></body></html>");
    html
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(html: &str, url: &Url, reading: &Reading) -> (Duration, Duration) {
    let response = Response {
        requested: url,
        final_url: url,
        status: 200,
        content_type: Some("text/html; charset=utf-8"),
        headers: &[],
        body: html.as_bytes(),
        retried: None,
    };
    for _ in 0..WARMUP {
        black_box(classify(&response, reading));
    }
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let fetched = classify(&response, reading);
        samples.push(started.elapsed());
        assert!(
            matches!(fetched, Fetched::Page(_)),
            "the generated page reads as a page"
        );
        black_box(fetched);
    }
    let worst = samples.iter().max().copied().unwrap_or_default();
    (median(samples), worst)
}

fn main() {
    // `cargo test --all-targets` runs a bench once as a test; this one is a
    // measurement (minutes in a debug build), so it runs only under
    // `cargo bench`, which passes `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let html = page();
    let url = Url::parse("https://paper.example/reports/long.html").expect("a fixed URL parses");
    println!("page: {} bytes of HTML", html.len());
    let readings = [
        ("main content, first window", Reading::default()),
        (
            "whole page, first window",
            Reading {
                whole_page: true,
                ..Reading::default()
            },
        ),
        (
            "main content, find 3 phrases",
            Reading {
                find: vec![
                    "meeting 977".into(),
                    "ferry".into(),
                    "no such phrase".into(),
                ],
                ..Reading::default()
            },
        ),
    ];
    for (name, reading) in &readings {
        let (median, worst) = time(&html, &url, reading);
        println!(
            "{name:32} median {:7.2} ms   worst {:7.2} ms   ({RUNS} runs)",
            ms(median),
            ms(worst)
        );
    }
    floor(&html);
}

/// The same page through the parser and the converter alone, with none of this crate's work:
/// what any reading built on htmd costs.
fn floor(html: &str) {
    let converter = htmd::HtmlToMarkdown::builder()
        .scripting_enabled(false)
        .build();
    let (mut parse, mut convert, mut drop_tree) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..WARMUP + RUNS {
        let started = Instant::now();
        let tree = converter
            .html_to_tree(html)
            .expect("an in-memory parse does not fail");
        let parsed = started.elapsed();
        black_box(converter.tree_to_markdown(&tree));
        let converted = started.elapsed();
        drop(tree);
        let dropped = started.elapsed();
        if run >= WARMUP {
            parse.push(parsed);
            convert.push(converted - parsed);
            drop_tree.push(dropped - converted);
        }
    }
    println!(
        "floor: html5ever parse {:.2} ms, htmd convert {:.2} ms, tree drop {:.2} ms (medians)",
        ms(median(parse)),
        ms(median(convert)),
        ms(median(drop_tree))
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
