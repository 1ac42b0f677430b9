//! `conversations::search` (§3.8) against a large store, recorded in
//! `docs/benchmarks.md`: 1,000,000 posts in 10 channels of 100,000, the
//! agent a member of all of them, generated in one transaction. Each run is
//! one whole search as the daemon serves it: the reach (membership, audience,
//! episode floors), the posts the turn answers, the index or the scan, and
//! the check of each hit. The target: p50 under 50 ms, p99 under 200 ms.
//!
//! `cargo bench -p collegium-control --bench search`

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use collegium_control::conversations::Caller;
use collegium_control::conversations::search::{self, SearchRequest};
use collegium_control::store::{
    AuthorKind, ChannelKind, Member, ObservedChannel, ObservedPost, ObservedVia, PostRole, Store,
};

const TOTAL_POSTS: usize = 1_000_000;
const CHANNELS: usize = 10;
const RUNS: usize = 100;

/// Words people write, the first ones far commoner than the last, so a
/// phrase can be common, ordinary or rare.
const WORDS: &[&str] = &[
    "the",
    "a",
    "to",
    "and",
    "we",
    "is",
    "on",
    "for",
    "it",
    "this",
    "that",
    "with",
    "release",
    "review",
    "deploy",
    "budget",
    "meeting",
    "customer",
    "report",
    "draft",
    "schedule",
    "invoice",
    "migration",
    "latency",
    "dashboard",
    "contract",
    "onboarding",
    "roadmap",
    "incident",
    "postmortem",
    "quarterly",
    "forecast",
    "vendor",
    "compliance",
    "kubernetes",
    "spreadsheet",
    "retention",
    "sandbox",
    "benchmark",
    "handover",
];

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// A small deterministic generator, so every run builds the same store.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    /// An index skewed towards 0: the square of a uniform draw.
    fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next() % 10_000) as f64 / 10_000.0;
        ((u * u) * n as f64) as usize
    }
}

fn post(rng: &mut Lcg, index: usize) -> ObservedPost {
    let channel = index % CHANNELS;
    let at = 1_700_000_000_000 + index as i64 * 1_000;
    let words = 8 + (rng.next() % 25) as usize;
    let mut message: Vec<String> = (0..words)
        .map(|_| WORDS[rng.skewed(WORDS.len())].to_string())
        .collect();
    // One post in 50,000 carries a rare token: 20 in the store.
    if index % 50_000 == 7 {
        message.push("kumquat-7431".into());
    }
    message.push(format!("item-{}", rng.next() % 100_000));
    ObservedPost {
        id: format!("c{channel}p{index:08}"),
        channel_id: format!("c{channel}"),
        author_id: format!("u{}", index % 17),
        author_name: format!("person{}", index % 17),
        author_kind: AuthorKind::Person,
        created_at: at,
        message: message.join(" "),
        props: None,
        role: if index.is_multiple_of(20) {
            PostRole::Status
        } else {
            PostRole::Post
        },
        turn_id: None,
        pinned: false,
        observed_at: at,
        observed_via: ObservedVia::Live,
        files: Vec::new(),
    }
}

fn main() {
    // `cargo test --all-targets` runs benches as tests once; this one is
    // a measurement, so it runs only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench search: skipped outside `cargo bench`");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("open");
    let filled = Instant::now();
    let members: Vec<Member> = ["bot-mira", "u1", "u2"]
        .iter()
        .map(|id| Member {
            user_id: (*id).into(),
            username: id.trim_start_matches("u").into(),
            kind: AuthorKind::Person,
        })
        .collect();
    for channel in 0..CHANNELS {
        let id = format!("c{channel}");
        store
            .record_channel(&ObservedChannel {
                id: id.clone(),
                name: format!("channel-{channel}"),
                display_name: format!("Channel {channel}"),
                kind: if channel < 5 {
                    ChannelKind::Open
                } else {
                    ChannelKind::Private
                },
            })
            .expect("channel");
        store.reconcile_members(&id, &members, 0).expect("members");
    }
    let mut rng = Lcg(42);
    store.bulk(|store| {
        for index in 0..TOTAL_POSTS {
            store.record_post(&post(&mut rng, index)).expect("post");
        }
    });
    println!(
        "store of {TOTAL_POSTS} posts in {CHANNELS} channels filled (and indexed) in {:.1} s",
        filled.elapsed().as_secs_f64()
    );
    let names = BTreeMap::new();
    let caller = Caller {
        agent: "mira",
        user_id: "bot-mira",
        channel_id: "c7",
        turn_id: "t-bench",
    };
    let cases: &[(&str, &str, Option<&str>)] = &[
        ("rare phrase (20 posts)", "kumquat-7431", None),
        ("ordinary word", "benchmark", None),
        ("common word", "release", None),
        ("common word, one author", "deploy", Some("person3")),
        ("two characters (scan)", "ha", None),
        ("absent phrase", "zeppelin", None),
        ("one item tag", "item-4242", None),
    ];
    let mut all = Vec::new();
    for (label, phrase, author) in cases {
        let request = SearchRequest {
            phrase: (*phrase).to_string(),
            author: author.map(str::to_string),
            after: None,
            before: None,
        };
        let mut times = Vec::with_capacity(RUNS);
        let mut hits = 0;
        for _ in 0..RUNS {
            let start = Instant::now();
            let found = search::find(&store, &caller, &request, 20, &names).expect("search");
            times.push(start.elapsed());
            hits = found.hits.len();
        }
        all.extend(times.iter().copied());
        times.sort();
        println!(
            "{label} \"{phrase}\": {hits} hits, p50 {:.2} ms, p99 {:.2} ms",
            percentile(&times, 0.5).as_secs_f64() * 1000.0,
            percentile(&times, 0.99).as_secs_f64() * 1000.0
        );
    }
    all.sort();
    println!(
        "all searches: p50 {:.2} ms, p99 {:.2} ms",
        percentile(&all, 0.5).as_secs_f64() * 1000.0,
        percentile(&all, 0.99).as_secs_f64() * 1000.0
    );
    // The worst cases, outside the set above: a walk that meets no hit
    // reads the whole reach. A rare phrase under three characters, and a
    // common phrase bounded by an author who never wrote it.
    let worst: &[(&str, &str, Option<&str>)] = &[
        ("rare two characters (whole reach scanned)", "zq", None),
        (
            "common word, an author with no posts",
            "release",
            Some("nobody"),
        ),
    ];
    for (label, phrase, author) in worst {
        let request = SearchRequest {
            phrase: (*phrase).to_string(),
            author: author.map(str::to_string),
            after: None,
            before: None,
        };
        let mut times = Vec::with_capacity(10);
        let mut hits = 0;
        for _ in 0..10 {
            let start = Instant::now();
            let found = search::find(&store, &caller, &request, 20, &names).expect("search");
            times.push(start.elapsed());
            hits = found.hits.len();
        }
        times.sort();
        println!(
            "worst case, {label} \"{phrase}\": {hits} hits, p50 {:.0} ms, max {:.0} ms",
            percentile(&times, 0.5).as_secs_f64() * 1000.0,
            percentile(&times, 1.0).as_secs_f64() * 1000.0
        );
    }
}
