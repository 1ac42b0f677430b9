//! Search and read against a real store (§3.8, §8.4, §8.5).

use std::collections::BTreeMap;

use serde_json::json;

use super::read::{self, ReadRequest};
use super::render::Style;
use super::search::{self, SearchRequest};
use super::*;
use crate::store::{
    AuthorKind, ChannelKind, Member, Millis, NewTurn, ObservedChannel, ObservedPost, ObservedVia,
    PostRole, TraceKind, TurnCause, TurnEvent,
};

const AGENT: &str = "mira";
const AGENT_ID: &str = "u-mira";

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("s.db")).expect("open");
    let channels: &[(&str, ChannelKind, &[&str])] = &[
        ("town", ChannelKind::Open, &[AGENT_ID, "u-a", "u-b"]),
        ("ab", ChannelKind::Private, &[AGENT_ID, "u-a", "u-b"]),
        (
            "abc",
            ChannelKind::Private,
            &[AGENT_ID, "u-a", "u-b", "u-c"],
        ),
        ("dm", ChannelKind::Direct, &[AGENT_ID, "u-a"]),
        ("group", ChannelKind::Group, &[AGENT_ID, "u-a", "u-b"]),
        ("elsewhere", ChannelKind::Open, &["u-a", "u-b"]),
    ];
    for (id, kind, members) in channels {
        store
            .record_channel(&ObservedChannel {
                id: (*id).into(),
                name: (*id).into(),
                display_name: format!("{id} display"),
                kind: *kind,
            })
            .expect("channel");
        let members: Vec<Member> = members
            .iter()
            .map(|m| Member {
                user_id: (*m).into(),
                username: m.trim_start_matches("u-").into(),
                kind: if *m == AGENT_ID {
                    AuthorKind::Agent
                } else {
                    AuthorKind::Person
                },
            })
            .collect();
        store.reconcile_members(id, &members, 0).expect("members");
        record(
            &mut store,
            &format!("p-{id}"),
            id,
            100,
            "a",
            PostRole::Post,
            "The Launch Plan is ready",
        );
    }
    (dir, store)
}

fn record(
    store: &mut Store,
    id: &str,
    channel: &str,
    at: Millis,
    author: &str,
    role: PostRole,
    text: &str,
) {
    let post = ObservedPost {
        id: id.into(),
        channel_id: channel.into(),
        author_id: format!("u-{author}"),
        author_name: author.into(),
        author_kind: if author == AGENT {
            AuthorKind::Agent
        } else {
            AuthorKind::Person
        },
        created_at: at,
        message: text.into(),
        props: None,
        role,
        turn_id: None,
        pinned: false,
        observed_at: at,
        observed_via: ObservedVia::Live,
        files: Vec::new(),
    };
    store.record_post(&post).expect("post");
}

fn caller(channel: &str) -> Caller<'_> {
    Caller {
        agent: AGENT,
        user_id: AGENT_ID,
        channel_id: channel,
        turn_id: "t-now",
    }
}

fn phrase(text: &str) -> SearchRequest {
    SearchRequest {
        phrase: text.into(),
        author: None,
        after: None,
        before: None,
    }
}

fn names() -> BTreeMap<String, String> {
    BTreeMap::from([("mira".to_string(), "Mira".to_string())])
}

fn hits(store: &Store, channel: &str, request: &SearchRequest) -> Vec<String> {
    search::find(store, &caller(channel), request, 20, &names())
        .expect("search")
        .hits
        .into_iter()
        .map(|p| p.id)
        .collect()
}

fn read_text(store: &Store, channel: &str, id: &str) -> String {
    let style = Style {
        display_names: &names(),
        timezone: chrono_tz::Tz::UTC,
    };
    match read::find(store, &caller(channel), id).expect("read") {
        Some((post, reach)) => read::render(
            &ReadRequest {
                post: id.into(),
                offset: 0,
            },
            &post,
            &reach,
            channel,
            &style,
        )
        .expect("renders"),
        None => read::not_found(id),
    }
}

#[test]
fn s3_8_from_a_private_channel_search_reaches_public_ones_and_those_holding_everyone_here() {
    let (_dir, store) = store();
    let mut found = hits(&store, "ab", &phrase("launch plan"));
    found.sort();
    // dm lacks b; elsewhere lacks the agent.
    assert_eq!(found, ["p-ab", "p-abc", "p-group", "p-town"]);
}

#[test]
fn s3_8_from_a_public_channel_search_reaches_public_channels_alone() {
    let (_dir, store) = store();
    assert_eq!(hits(&store, "town", &phrase("LAUNCH")), ["p-town"]);
    assert_eq!(
        read_text(&store, "town", "p-abc").replace("p-abc", "ID"),
        read_text(&store, "town", "p-nowhere").replace("p-nowhere", "ID"),
        "a post out of reach reads as one never written"
    );
}

#[test]
fn s3_8_a_dm_reaches_the_group_its_person_is_in_and_not_the_reverse() {
    let (_dir, store) = store();
    let mut from_dm = hits(&store, "dm", &phrase("plan"));
    from_dm.sort();
    assert_eq!(from_dm, ["p-ab", "p-abc", "p-dm", "p-group", "p-town"]);
    assert!(!hits(&store, "group", &phrase("plan")).contains(&"p-dm".to_string()));
}

#[test]
fn s3_8_a_member_added_here_since_narrows_what_surfaces() {
    let (_dir, store) = store();
    assert!(hits(&store, "ab", &phrase("plan")).contains(&"p-group".to_string()));
    let c = Member {
        user_id: "u-c".into(),
        username: "c".into(),
        kind: AuthorKind::Person,
    };
    store.add_member("ab", &c, 1).expect("add");
    let found = hits(&store, "ab", &phrase("plan"));
    assert!(
        !found.contains(&"p-group".to_string()),
        "c cannot read the group: {found:?}"
    );
    assert!(found.contains(&"p-abc".to_string()));
}

#[test]
fn s3_8_status_posts_notices_and_prompts_are_never_hits_and_traces_are_not_posts() {
    let (_dir, mut store) = store();
    for (id, role) in [
        ("status", PostRole::Status),
        ("notice", PostRole::Notice),
        ("prompt", PostRole::Prompt),
    ] {
        record(&mut store, id, "town", 200, AGENT, role, "zebra crossing");
    }
    store
        .open_turn(&NewTurn {
            id: "t-old".into(),
            agent: AGENT.into(),
            channel_id: "town".into(),
            boot_id: "b".into(),
            started_at: 150,
            cause: TurnCause::Post,
            answers_post_id: None,
            depth: 0,
            chain_root: "t-old".into(),
            chain_length: 1,
            model: "demo".into(),
        })
        .expect("turn");
    store
        .append_event(&TurnEvent {
            turn_id: "t-old".into(),
            seq: 0,
            at: 151,
            kind: TraceKind::Completion,
            call_id: None,
            tool: None,
            arguments: None,
            content: Some("thinking about the zebra crossing".into()),
            detail: None,
        })
        .expect("event");
    assert!(hits(&store, "town", &phrase("zebra")).is_empty());
    assert_eq!(
        read_text(&store, "town", "status"),
        read::not_found("status"),
        "a status post reads as never written"
    );
    let found =
        search::find(&store, &caller("town"), &phrase("zebra"), 20, &names()).expect("search");
    let text = search::render(
        &phrase("zebra"),
        &found,
        "town",
        &Style {
            display_names: &names(),
            timezone: chrono_tz::Tz::UTC,
        },
    );
    assert!(text.starts_with("No post matches \"zebra\""), "{text}");
    assert!(
        text.contains(
            "never a trace, stored reasoning, a status post, an approval prompt or a notice"
        ),
        "the empty result states the bound: {text}"
    );
}

#[test]
fn s3_8_the_agents_own_replies_are_hits_and_the_posts_the_turn_answers_are_not() {
    let (_dir, mut store) = store();
    record(
        &mut store,
        "mine",
        "town",
        300,
        AGENT,
        PostRole::Reply,
        "I filed the budget memo",
    );
    record(
        &mut store,
        "asks",
        "town",
        400,
        "a",
        PostRole::Post,
        "where is the budget memo?",
    );
    store
        .open_turn(&NewTurn {
            id: "t-now".into(),
            agent: AGENT.into(),
            channel_id: "town".into(),
            boot_id: "b".into(),
            started_at: 401,
            cause: TurnCause::Post,
            answers_post_id: Some("asks".into()),
            depth: 0,
            chain_root: "t-now".into(),
            chain_length: 1,
            model: "demo".into(),
        })
        .expect("turn");
    store
        .record_answer("t-now", "asks", "start")
        .expect("answer");
    assert_eq!(hits(&store, "town", &phrase("budget memo")), ["mine"]);
    assert!(read_text(&store, "town", "asks").contains("where is the budget memo?"));
}

#[test]
fn s3_8_a_reset_hides_what_came_before_it_from_search_and_read() {
    let (_dir, mut store) = store();
    record(
        &mut store,
        "after",
        "town",
        500,
        "a",
        PostRole::Post,
        "launch plan v2",
    );
    store
        .reset_episode(AGENT, "town", 300, "ana")
        .expect("reset");
    assert_eq!(hits(&store, "town", &phrase("launch plan")), ["after"]);
    assert_eq!(
        read_text(&store, "town", "p-town"),
        read::not_found("p-town")
    );
    // The boundary is this agent's: another agent still reaches the post.
    let other = Caller {
        agent: "theo",
        user_id: AGENT_ID,
        channel_id: "town",
        turn_id: "t",
    };
    let found = search::find(&store, &other, &phrase("launch plan"), 20, &names()).expect("search");
    assert_eq!(found.hits.len(), 2);
}

#[test]
fn s8_4_a_forgotten_post_is_absent_from_search_read_window_and_pins() {
    let (_dir, mut store) = store();
    store
        .set_pins("town", &["p-town".to_string()])
        .expect("pin");
    assert!(store.forget_post("p-town", 1_000).expect("forget"));
    assert!(!store.forget_post("no-such-post", 1_000).expect("forget"));
    assert!(hits(&store, "town", &phrase("launch")).is_empty());
    assert_eq!(
        read_text(&store, "town", "p-town"),
        read::not_found("p-town")
    );
    assert!(
        store
            .posts_before("town", None, 0, 10)
            .expect("window")
            .is_empty()
    );
    assert!(store.pinned_posts("town").expect("pins").is_empty());
}

#[test]
fn s8_5_posts_older_than_a_clear_are_out_of_reach() {
    let (_dir, mut store) = store();
    record(
        &mut store,
        "new",
        "ab",
        900,
        "b",
        PostRole::Post,
        "launch plan after the clear",
    );
    store.set_cleared_before("ab", 800).expect("clear");
    assert_eq!(store.cleared_before("ab").expect("read"), Some(800));
    let found = hits(&store, "ab", &phrase("launch plan"));
    assert!(
        found.contains(&"new".to_string()) && !found.contains(&"p-ab".to_string()),
        "{found:?}"
    );
    assert_eq!(store.context_floor(AGENT, "ab").expect("floor"), 800);
}

#[test]
fn s3_8_a_one_character_phrase_is_a_scan_and_a_huge_one_is_refused_with_its_length() {
    let (_dir, mut store) = store();
    record(
        &mut store,
        "slash",
        "town",
        200,
        "a",
        PostRole::Post,
        "use a/b testing",
    );
    record(
        &mut store,
        "accent",
        "town",
        210,
        "a",
        PostRole::Post,
        "Élan vital",
    );
    assert_eq!(hits(&store, "town", &phrase("/")), ["slash"]);
    assert_eq!(
        hits(&store, "town", &phrase("él")),
        ["accent"],
        "non-ASCII folds in a scan"
    );
    assert_eq!(
        hits(&store, "town", &phrase("ÉLAN")),
        ["accent"],
        "and in the index"
    );
    let huge = "x".repeat(10_000);
    let refusal = search::parse(&json!({"phrase": huge}), chrono_tz::Tz::UTC).expect_err("refused");
    assert!(
        refusal.contains("10000 characters") && refusal.contains("at most 500"),
        "{refusal}"
    );
}

#[test]
fn s3_8_author_and_dates_bound_a_search() {
    let (_dir, mut store) = store();
    let day = 86_400_000;
    record(
        &mut store,
        "b-old",
        "town",
        2 * day,
        "b",
        PostRole::Post,
        "quarterly numbers",
    );
    record(
        &mut store,
        "b-new",
        "town",
        5 * day,
        "b",
        PostRole::Post,
        "quarterly numbers again",
    );
    record(
        &mut store,
        "mira",
        "town",
        5 * day,
        AGENT,
        PostRole::Reply,
        "quarterly numbers noted",
    );
    let request = search::parse(
        &json!({"phrase": "quarterly", "author": "@B", "after": "1970-01-04"}),
        chrono_tz::Tz::UTC,
    )
    .expect("parses");
    assert_eq!(hits(&store, "town", &request), ["b-new"]);
    let by_name = search::parse(
        &json!({"phrase": "quarterly", "author": "Mira"}),
        chrono_tz::Tz::UTC,
    )
    .expect("parses");
    assert_eq!(
        hits(&store, "town", &by_name),
        ["mira"],
        "an agent by its display name"
    );
    let before = search::parse(
        &json!({"phrase": "quarterly", "before": "1970-01-04T00:00:00Z"}),
        chrono_tz::Tz::UTC,
    )
    .expect("parses");
    assert_eq!(hits(&store, "town", &before), ["b-old"]);
    let bad = search::parse(
        &json!({"phrase": "q", "after": "last week"}),
        chrono_tz::Tz::UTC,
    )
    .expect_err("refused");
    assert!(bad.contains("2026-03-14"), "{bad}");
}

#[test]
fn s3_8_a_hit_is_bounded_around_the_match_and_says_what_it_left_out() {
    let (_dir, mut store) = store();
    let long = format!("{} the needle {}", "a".repeat(1_000), "b".repeat(20_000));
    record(&mut store, "long", "town", 200, "a", PostRole::Post, &long);
    let style = Style {
        display_names: &names(),
        timezone: chrono_tz::Tz::UTC,
    };
    let found =
        search::find(&store, &caller("town"), &phrase("NEEDLE"), 20, &names()).expect("search");
    let text = search::render(&phrase("NEEDLE"), &found, "town", &style);
    assert!(text.contains("1 post match \"NEEDLE\""), "{text}");
    assert!(
        text.contains("post long · this channel · a (person) · 1970-01-01 00:00\n<<<\n"),
        "{text}"
    );
    assert!(text.contains("the needle"), "{text}");
    assert!(
        text.contains("characters 856–1161 of 21012, around the match; 855 before and 19851 after")
            && text.contains("conversations::read with post long reads it whole"),
        "{text}"
    );
    let (post, reach) = read::find(&store, &caller("town"), "long")
        .expect("read")
        .expect("in reach");
    let first = read::render(
        &ReadRequest {
            post: "long".into(),
            offset: 0,
        },
        &post,
        &reach,
        "town",
        &style,
    )
    .expect("page");
    assert!(first.contains("[Shown: characters 1–8000 of 21012. 13012 more follow: conversations::read with post long and offset 8000 reads on.]"), "{first}");
    let last = read::render(
        &ReadRequest {
            post: "long".into(),
            offset: 16_000,
        },
        &post,
        &reach,
        "town",
        &style,
    )
    .expect("page");
    assert!(last.contains("characters 16001–21012 of 21012."), "{last}");
    let past = read::render(
        &ReadRequest {
            post: "long".into(),
            offset: 30_000,
        },
        &post,
        &reach,
        "town",
        &style,
    )
    .expect_err("refused");
    assert!(past.contains("has 21012 characters"), "{past}");
}

#[test]
fn s3_8_more_hits_than_the_cap_are_stated_not_dropped() {
    let (_dir, mut store) = store();
    for n in 0..5 {
        record(
            &mut store,
            &format!("r{n}"),
            "town",
            200 + n,
            "a",
            PostRole::Post,
            "recurring topic",
        );
    }
    let found =
        search::find(&store, &caller("town"), &phrase("recurring"), 3, &names()).expect("search");
    assert_eq!(
        found.hits.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
        ["r4", "r3", "r2"]
    );
    assert!(found.more);
    let text = search::render(
        &phrase("recurring"),
        &found,
        "town",
        &Style {
            display_names: &names(),
            timezone: chrono_tz::Tz::UTC,
        },
    );
    assert!(text.contains("More posts match than the 3 shown"), "{text}");
}

#[test]
fn s8_2_an_edited_pinned_post_is_found_by_its_new_text_only() {
    let (_dir, store) = store();
    assert!(
        store
            .follow_edit("p-town", true, "The rocket schedule", 300)
            .expect("edit")
    );
    assert!(hits(&store, "town", &phrase("launch plan")).is_empty());
    assert_eq!(hits(&store, "town", &phrase("rocket")), ["p-town"]);
}

fn own_action(store: &Store, turn: &str, at: Millis) {
    store
        .open_turn(&NewTurn {
            id: turn.into(),
            agent: AGENT.into(),
            channel_id: "town".into(),
            boot_id: "b".into(),
            started_at: at,
            cause: TurnCause::Post,
            answers_post_id: None,
            depth: 0,
            chain_root: turn.into(),
            chain_length: 1,
            model: "demo".into(),
        })
        .expect("turn");
    store
        .append_event(&TurnEvent {
            turn_id: turn.into(),
            seq: 1,
            at: at + 1,
            kind: TraceKind::Result,
            call_id: Some("call-1".into()),
            tool: Some("workspace::read".into()),
            arguments: None,
            content: Some(format!("read at {at}")),
            detail: Some(json!({"action": format!("workspace::read at {at}")}).to_string()),
        })
        .expect("event");
}

#[test]
fn s3_8_the_window_and_earlier_actions_stop_at_the_agents_latest_reset() {
    let (_dir, mut store) = store();
    own_action(&store, "t-before", 150);
    own_action(&store, "t-after", 350);
    record(
        &mut store,
        "later",
        "town",
        400,
        "a",
        PostRole::Post,
        "after the reset",
    );
    store
        .reset_episode(AGENT, "town", 300, "ana")
        .expect("reset");
    // An older reset never moves the boundary back.
    store
        .reset_episode(AGENT, "town", 200, "ana")
        .expect("reset");
    let floor = store.context_floor(AGENT, "town").expect("floor");
    assert_eq!(floor, 300);
    let names = names();
    let window = crate::context::window::build(
        &store,
        &crate::context::window::WindowRequest {
            agent: AGENT,
            agent_user_id: AGENT_ID,
            channel_id: "town",
            budget_tokens: 10_000,
            anchor: None,
            turn_started_at: Millis::MAX,
            floor,
            display_names: &names,
            timezone: chrono_tz::Tz::UTC,
        },
    )
    .expect("window");
    assert_eq!(window.post_ids, ["later"], "p-town is before the reset");
    // Earlier actions: the agent's own, newest first, none before the reset.
    let earlier =
        crate::turns::assemble::earlier_actions(&store, AGENT, "town", floor, Some(1_000))
            .expect("earlier");
    assert_eq!(
        earlier.iter().map(|a| a.line.as_str()).collect::<Vec<_>>(),
        ["workspace::read at 350"]
    );
    let unbounded = crate::turns::assemble::earlier_actions(&store, AGENT, "town", 0, Some(1_000))
        .expect("earlier");
    assert_eq!(
        unbounded
            .iter()
            .map(|a| a.line.as_str())
            .collect::<Vec<_>>(),
        ["workspace::read at 350", "workspace::read at 150"],
        "newest first"
    );
    // Another agent's reset is not this one's.
    store
        .reset_episode("theo", "town", 10_000, "ana")
        .expect("reset");
    assert_eq!(store.context_floor(AGENT, "town").expect("floor"), 300);
}
