//! The store cut of `/collegium clear` (§8.5) on a 20,000-post channel,
//! recorded in `docs/benchmarks.md`: 20,000 posts (every tenth with a file,
//! all in the search index), 2,000 turns with 5 trace events each, a queue
//! row per hundredth post, beside a second channel of 2,000 posts that must
//! survive. Each run rebuilds the store, then times one `clear_channel`.
//! The target: under 1 s.
//!
//! `cargo bench -p collegium-control --bench clear`

use std::time::{Duration, Instant};

use collegium_control::store::{
    AuthorKind, ChannelKind, NewTurn, ObservedChannel, ObservedPost, ObservedVia, PostFile,
    PostRole, Store, TraceKind, TurnCause, TurnEvent,
};

const POSTS: usize = 20_000;
const OTHER_POSTS: usize = 2_000;
const TURNS: usize = 2_000;
const EVENTS: usize = 5;
const RUNS: usize = 5;
const NOW: i64 = 1_764_504_000_000;

fn post(channel: &str, n: usize) -> ObservedPost {
    let at = NOW - 10_000_000 + n as i64 * 100;
    ObservedPost {
        id: format!("{channel}-p{n}"),
        channel_id: channel.into(),
        author_id: "u1".into(),
        author_name: "ana".into(),
        author_kind: AuthorKind::Person,
        created_at: at,
        message: format!("Post {n}: an ordinary paragraph a person writes to the agents here."),
        props: None,
        role: PostRole::Post,
        turn_id: None,
        pinned: n.is_multiple_of(1_000),
        observed_at: at,
        observed_via: ObservedVia::Live,
        files: if n.is_multiple_of(10) {
            vec![PostFile {
                file_id: format!("f{n}"),
                name: "notes.txt".into(),
                mime_type: "text/plain".into(),
                size: 100,
            }]
        } else {
            Vec::new()
        },
    }
}

fn seeded(dir: &std::path::Path) -> Store {
    let mut store = Store::open(&dir.join("bench.db")).expect("store");
    store.bulk(|store| {
        for channel in ["c1", "c2"] {
            store
                .record_channel(&ObservedChannel {
                    id: channel.into(),
                    name: channel.into(),
                    display_name: channel.into(),
                    kind: ChannelKind::Open,
                })
                .expect("channel");
        }
        for n in 0..POSTS {
            store.record_post(&post("c1", n)).expect("post");
            if n.is_multiple_of(100) {
                store
                    .enqueue("mira", "c1", &format!("c1-p{n}"), NOW)
                    .expect("queue");
            }
        }
        for n in 0..OTHER_POSTS {
            store.record_post(&post("c2", n)).expect("post");
        }
        for n in 0..TURNS {
            let id = format!("t{n}");
            let started = NOW - 10_000_000 + n as i64 * 1_000;
            store
                .open_turn(&NewTurn {
                    id: id.clone(),
                    agent: "mira".into(),
                    channel_id: "c1".into(),
                    boot_id: "boot".into(),
                    started_at: started,
                    cause: TurnCause::Post,
                    answers_post_id: Some(format!("c1-p{}", n * 10)),
                    depth: 0,
                    chain_root: id.clone(),
                    chain_length: 1,
                    model: "m".into(),
                })
                .expect("turn");
            for seq in 0..EVENTS {
                store
                    .append_event(&TurnEvent {
                        turn_id: id.clone(),
                        seq: seq as i64,
                        at: started + seq as i64,
                        kind: TraceKind::Completion,
                        call_id: None,
                        tool: None,
                        arguments: None,
                        content: Some("a completion's text".into()),
                        detail: None,
                    })
                    .expect("event");
            }
        }
    });
    store
}

fn main() {
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = seeded(dir.path());
        let start = Instant::now();
        let cut = store.clear_channel("c1", NOW, false).expect("cut");
        times.push(start.elapsed());
        assert_eq!(cut.posts, POSTS);
        assert_eq!(cut.trace_events, TURNS * EVENTS);
        assert!(
            store.post("c2-p0").expect("read").is_some(),
            "the other channel stays"
        );
    }
    times.sort();
    let median: Duration = times[times.len() / 2];
    let worst: Duration = times[times.len() - 1];
    println!(
        "Clear's store cut, {POSTS} posts, {TURNS} turns x {EVENTS} events: median {:.1} ms, worst {:.1} ms over {RUNS} runs",
        median.as_secs_f64() * 1000.0,
        worst.as_secs_f64() * 1000.0
    );
    assert!(
        worst < Duration::from_secs(1),
        "the cut must take under 1 s (§8.5 benchmark)"
    );
}
