use std::collections::BTreeMap;

use super::*;
use crate::store::{ChannelKind, NewTurn, ObservedChannel, ObservedVia, TurnCause};

const AGENT_ID: &str = "bot-mira";

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("s.db")).expect("open");
    store
        .record_channel(&ObservedChannel {
            id: "c1".into(),
            name: "research".into(),
            display_name: "Research".into(),
            kind: ChannelKind::Open,
        })
        .expect("channel");
    (dir, store)
}

fn post(
    id: &str,
    at: Millis,
    author: &str,
    kind: AuthorKind,
    role: PostRole,
    text: &str,
) -> ObservedPost {
    ObservedPost {
        id: id.into(),
        channel_id: "c1".into(),
        author_id: if author == "mira" {
            AGENT_ID.into()
        } else {
            format!("u-{author}")
        },
        author_name: author.into(),
        author_kind: kind,
        created_at: at,
        message: text.into(),
        props: None,
        role,
        turn_id: None,
        pinned: false,
        observed_at: at,
        observed_via: ObservedVia::Live,
        files: Vec::new(),
    }
}

fn names() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("mira".to_string(), "Mira".to_string()),
        ("theo".to_string(), "Theo the Operator".to_string()),
    ])
}

fn request<'a>(
    budget: u64,
    anchor: Option<&'a str>,
    names: &'a BTreeMap<String, String>,
) -> WindowRequest<'a> {
    WindowRequest {
        agent: "mira",
        agent_user_id: AGENT_ID,
        channel_id: "c1",
        budget_tokens: budget,
        anchor,
        turn_started_at: Millis::MAX,
        floor: 0,
        display_names: names,
        timezone: chrono_tz::Tz::UTC,
    }
}

fn texts(window: &Window) -> Vec<String> {
    window
        .messages
        .iter()
        .map(|m| match m {
            Message::User(t) => t.lines().nth(1).unwrap_or_default().to_string(),
            Message::Assistant(a) => format!("me: {}", a.text),
            Message::ToolResult { content, .. } => format!("result: {content}"),
        })
        .collect()
}

#[test]
fn s3_8_window_names_authors_without_at_and_leaves_out_status_posts() {
    let (_dir, mut store) = store();
    store
        .record_post(&post(
            "p1",
            1,
            "ana",
            AuthorKind::Person,
            PostRole::Post,
            "@mira what is new?",
        ))
        .expect("post");
    store
        .record_post(&post(
            "p2",
            2,
            "theo",
            AuthorKind::Agent,
            PostRole::Status,
            "🔧 working",
        ))
        .expect("post");
    store
        .record_post(&post(
            "p3",
            3,
            "theo",
            AuthorKind::Agent,
            PostRole::Reply,
            "Nothing from me.",
        ))
        .expect("post");
    store
        .record_post(&post(
            "p4",
            4,
            "mira",
            AuthorKind::Agent,
            PostRole::Reply,
            "Here is the news.",
        ))
        .expect("post");
    let names = names();
    let window = build(&store, &request(10_000, None, &names)).expect("window");
    assert_eq!(
        texts(&window),
        [
            "Mira what is new?",
            "Nothing from me.",
            "me: Here is the news."
        ]
    );
    let Message::User(first) = &window.messages[0] else {
        panic!("a user message")
    };
    assert!(
        first.starts_with("ana (person) · 1970-01-01 00:00 · post p1"),
        "{first}"
    );
    let Message::User(second) = &window.messages[1] else {
        panic!("a user message")
    };
    assert!(second.starts_with("Theo the Operator (agent)"), "{second}");
    assert!(window.ends_on_own);
    assert_eq!(window.people, ["ana"]);
}

#[test]
fn s3_8_walk_stops_at_the_first_unit_that_does_not_fit() {
    let (_dir, mut store) = store();
    store
        .record_post(&post(
            "p1",
            1,
            "ana",
            AuthorKind::Person,
            PostRole::Post,
            "short",
        ))
        .expect("post");
    store
        .record_post(&post(
            "p2",
            2,
            "ana",
            AuthorKind::Person,
            PostRole::Post,
            &"long ".repeat(400),
        ))
        .expect("post");
    store
        .record_post(&post(
            "p3",
            3,
            "ana",
            AuthorKind::Person,
            PostRole::Post,
            "newest",
        ))
        .expect("post");
    let names = names();
    let window = build(&store, &request(200, None, &names)).expect("window");
    // p2 does not fit, so p1 is not reached either: no gap the model cannot see.
    assert_eq!(window.post_ids, ["p3"]);
}

#[test]
fn s3_8_the_oldest_entry_holds_still_until_it_no_longer_fits() {
    let (_dir, mut store) = store();
    for i in 0..20 {
        store
            .record_post(&post(
                &format!("p{i:02}"),
                i,
                "ana",
                AuthorKind::Person,
                PostRole::Post,
                &"word ".repeat(20),
            ))
            .expect("post");
    }
    let names = names();
    let budget = 600;
    let fresh = build(&store, &request(budget, None, &names)).expect("window");
    assert!(
        fresh.charged_tokens <= budget * TRIM_SHARE_PERCENT / 100,
        "a fresh window walks to the share"
    );
    let anchor = fresh.reach.clone().expect("reach");
    store
        .record_post(&post(
            "p20",
            20,
            "ana",
            AuthorKind::Person,
            PostRole::Post,
            &"word ".repeat(20),
        ))
        .expect("post");
    let next = build(&store, &request(budget, Some(&anchor), &names)).expect("window");
    assert_eq!(
        next.reach.as_deref(),
        Some(anchor.as_str()),
        "same oldest entry"
    );
    assert_eq!(
        next.messages[..fresh.messages.len()],
        fresh.messages[..],
        "the prefix is byte-identical"
    );
    for i in 21..40 {
        store
            .record_post(&post(
                &format!("p{i:02}"),
                i,
                "ana",
                AuthorKind::Person,
                PostRole::Post,
                &"word ".repeat(20),
            ))
            .expect("post");
    }
    let trimmed = build(&store, &request(budget, Some(&anchor), &names)).expect("window");
    assert_ne!(
        trimmed.reach.as_deref(),
        Some(anchor.as_str()),
        "trimmed from the old end"
    );
    assert!(trimmed.charged_tokens <= budget * TRIM_SHARE_PERCENT / 100);
}

#[test]
fn s3_8_own_trace_is_interleaved_with_replay_lines_and_posts_in_the_same_millisecond_keep_their_order()
 {
    let (_dir, mut store) = store();
    store
        .record_post(&post(
            "pb",
            10,
            "ana",
            AuthorKind::Person,
            PostRole::Post,
            "second by id",
        ))
        .expect("post");
    store
        .record_post(&post(
            "pa",
            10,
            "ana",
            AuthorKind::Person,
            PostRole::Post,
            "first by id",
        ))
        .expect("post");
    store
        .open_turn(&NewTurn {
            id: "t1".into(),
            agent: "mira".into(),
            channel_id: "c1".into(),
            boot_id: "b".into(),
            started_at: 11,
            cause: TurnCause::Post,
            answers_post_id: Some("pb".into()),
            depth: 0,
            chain_root: "t1".into(),
            chain_length: 1,
            model: "demo".into(),
        })
        .expect("turn");
    let detail = serde_json::to_string(&CompletionDetail {
        calls: vec![RecordedCall {
            id: "call-1".into(),
            name: "web__fetch".into(),
            arguments: "{}".into(),
        }],
    })
    .expect("json");
    store
        .append_event(&TurnEvent {
            turn_id: "t1".into(),
            seq: 0,
            at: 12,
            kind: TraceKind::Completion,
            call_id: None,
            tool: None,
            arguments: None,
            content: Some("Fetching.".into()),
            detail: Some(detail),
        })
        .expect("event");
    store
        .append_event(&TurnEvent {
            turn_id: "t1".into(),
            seq: 0,
            at: 13,
            kind: TraceKind::Result,
            call_id: Some("call-1".into()),
            tool: Some("web::fetch".into()),
            arguments: None,
            content: Some("x".repeat(3000)),
            detail: None,
        })
        .expect("event");
    store
        .record_post(&post(
            "pc",
            14,
            "mira",
            AuthorKind::Agent,
            PostRole::Reply,
            "Done.",
        ))
        .expect("post");
    let names = names();
    let window = build(&store, &request(10_000, None, &names)).expect("window");
    assert_eq!(
        texts(&window),
        [
            "first by id",
            "second by id",
            "me: Fetching.",
            "result: [web::fetch returned 3,000 characters]",
            "me: Done."
        ]
    );
}
