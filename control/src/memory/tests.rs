use serde_json::json;

use super::*;
use crate::store::{MemoryOrigin, Store};

const DAY: i64 = 86_400_000;
/// Tuesday 24 November 2026, 09:00 UTC.
const T0: i64 = 1_795_510_800_000;

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("s.db")).expect("open");
    (dir, store)
}

fn request<'a>(turn: &'a str, now: i64, caps: Caps) -> Request<'a> {
    Request {
        agent: "mira",
        turn_id: turn,
        channel_id: "c1",
        now,
        caps,
        timezone: chrono_tz::UTC,
        reads: true,
    }
}

fn small() -> Caps {
    Caps {
        max_entries: 2,
        max_description_chars: 20,
        max_body_chars: 30,
    }
}

fn call(
    store: &mut Store,
    request: &Request<'_>,
    tool: &str,
    arguments: serde_json::Value,
) -> Result<String, String> {
    serve(store, request, tool, &arguments)
        .expect("store")
        .outcome
        .map(|done| done.text)
}

/// Writes an entry and returns its reference.
fn kept(store: &mut Store, request: &Request<'_>, description: &str, body: &str) -> String {
    let text = call(
        store,
        request,
        "write",
        json!({"description": description, "body": body}),
    )
    .expect("kept");
    text.split_whitespace()
        .nth(2)
        .expect("reference")
        .to_string()
}

#[test]
fn s3_6_caps_come_from_the_toolset_settings() {
    assert_eq!(Caps::from_settings(None), Caps::default());
    let caps = Caps::from_settings(Some(&json!({"max_entries": 7, "max_body_chars": 90})));
    assert_eq!(
        (
            caps.max_entries,
            caps.max_description_chars,
            caps.max_body_chars
        ),
        (7, 150, 90)
    );
}

#[test]
fn s3_6_a_body_over_its_cap_is_refused_with_its_size_and_the_store_unchanged() {
    let (_dir, mut store) = open();
    let r = request("t1", T0, small());
    let refusal = call(
        &mut store,
        &r,
        "write",
        json!({"description": "d", "body": "x".repeat(31)}),
    )
    .expect_err("over the cap");
    assert!(
        refusal.contains("31 characters, over the cap of 30"),
        "{refusal}"
    );
    assert!(refusal.contains("Nothing was cut"), "{refusal}");
    let refusal = call(
        &mut store,
        &r,
        "write",
        json!({"description": "d".repeat(21), "body": "b"}),
    )
    .expect_err("over the cap");
    assert!(
        refusal.contains("description is 21 characters"),
        "{refusal}"
    );
    assert!(store.memories_of("mira").expect("list").is_empty());
}

#[test]
fn s3_6_a_write_reports_the_body_against_its_cap_and_eviction_names_the_least_recently_read() {
    let (_dir, mut store) = open();
    let caps = small();
    let a = kept(&mut store, &request("t1", T0, caps), "first", "alpha");
    let b = kept(&mut store, &request("t1", T0 + 1, caps), "second", "beta");
    call(
        &mut store,
        &request("t2", T0 + 2, caps),
        "read",
        json!({"memory": a}),
    )
    .expect("read");
    let text = call(
        &mut store,
        &request("t2", T0 + 3, caps),
        "write",
        json!({"description": "third", "body": "gamma"}),
    )
    .expect("kept");
    assert!(text.contains("Body: 5 of 30 characters."), "{text}");
    assert!(text.contains("Memories: 2 of at most 2."), "{text}");
    assert!(text.contains(&format!("evicted {b} — second")), "{text}");
    assert!(
        text.contains("beta"),
        "the evicted body is disclosed: {text}"
    );
    let left: Vec<String> = store
        .memories_of("mira")
        .expect("list")
        .into_iter()
        .map(|e| e.description)
        .collect();
    assert_eq!(left, ["first", "third"]);
}

#[test]
fn s3_6_a_body_reads_with_its_age_date_and_last_revision() {
    let (_dir, mut store) = open();
    let caps = Caps::default();
    let m = kept(
        &mut store,
        &request("t1", T0, caps),
        "Ana's invoices",
        "PDF, not paper",
    );
    let text = call(
        &mut store,
        &request("t2", T0 + 3 * DAY, caps),
        "read",
        json!({"memory": m}),
    )
    .expect("read");
    assert!(
        text.contains("Written 3 days ago, on Tuesday 24 November 2026."),
        "{text}"
    );
    assert!(!text.contains("Revised"), "{text}");
    call(
        &mut store,
        &request("t3", T0 + 4 * DAY, caps),
        "append",
        json!({"memory": m, "text": "by mail"}),
    )
    .expect("append");
    let text = call(
        &mut store,
        &request("t4", T0 + 4 * DAY + 2 * 3_600_000, caps),
        "read",
        json!({"memory": m}),
    )
    .expect("read");
    assert!(
        text.contains("Revised once (last 2 hours ago); this is revision 2."),
        "{text}"
    );
    assert!(text.ends_with("PDF, not paper\nby mail"), "{text}");
}

#[test]
fn s3_6_deleting_an_unseen_entry_is_refused_naming_the_read() {
    let (_dir, mut store) = open();
    let caps = Caps::default();
    let m = kept(&mut store, &request("t1", T0, caps), "d", "body");
    let refusal = call(
        &mut store,
        &request("t2", T0, caps),
        "delete",
        json!({"memory": m}),
    )
    .expect_err("unseen");
    assert!(
        refusal.contains("This turn has not read memory"),
        "{refusal}"
    );
    assert!(
        refusal.contains(&format!("memory::read {m} first")),
        "{refusal}"
    );
    assert_eq!(store.memories_of("mira").expect("list").len(), 1);
    // The turn that wrote it has seen it.
    call(
        &mut store,
        &request("t1", T0, caps),
        "delete",
        json!({"memory": m}),
    )
    .expect("deleted");
    assert!(store.memories_of("mira").expect("list").is_empty());
}

#[test]
fn s3_6_deleting_or_rewriting_an_entry_revised_since_it_was_seen_is_refused() {
    let (_dir, mut store) = open();
    let caps = Caps::default();
    let m = kept(&mut store, &request("t1", T0, caps), "d", "body");
    call(
        &mut store,
        &request("t2", T0, caps),
        "read",
        json!({"memory": m}),
    )
    .expect("read");
    // Another channel's turn appends: t2 saw revision 1, it is now at 2.
    call(
        &mut store,
        &request("t3", T0, caps),
        "append",
        json!({"memory": m, "text": "more"}),
    )
    .expect("append");
    for (tool, arguments) in [
        ("delete", json!({"memory": m})),
        ("rewrite", json!({"memory": m, "body": "new"})),
    ] {
        let refusal =
            call(&mut store, &request("t2", T0, caps), tool, arguments).expect_err("revised since");
        assert!(
            refusal.contains("you saw revision 1, and it is now at revision 2"),
            "{refusal}"
        );
    }
    let entry = store.memories_of("mira").expect("list").remove(0);
    assert_eq!(entry.body, "body\nmore");
    // t3 appended from a revision it had not seen, so it has not seen 2.
    assert!(
        call(
            &mut store,
            &request("t3", T0, caps),
            "delete",
            json!({"memory": m})
        )
        .is_err()
    );
}

#[test]
fn s3_6_a_replace_with_one_missing_passage_applies_nothing_and_says_first_it_was_not_read() {
    let (_dir, mut store) = open();
    let caps = Caps::default();
    let m = kept(&mut store, &request("t1", T0, caps), "d", "one two three");
    let refusal = call(
        &mut store,
        &request("t2", T0, caps),
        "replace",
        json!({"memory": m, "passages": [{"find": "one", "replace": "1"}, {"find": "four", "replace": "4"}]}),
    )
    .expect_err("one passage missing");
    assert!(
        refusal.starts_with("This turn has not read memory"),
        "{refusal}"
    );
    assert!(
        refusal.contains("Passage 2 (“four”) is not in the body."),
        "{refusal}"
    );
    assert!(!refusal.contains("Passage 1"), "{refusal}");
    assert_eq!(
        store.memories_of("mira").expect("list")[0].body,
        "one two three"
    );
    // The turn that wrote it is not told it has not read it.
    let refusal = call(
        &mut store,
        &request("t1", T0, caps),
        "replace",
        json!({"memory": m, "passages": [{"find": "o", "replace": "0"}]}),
    )
    .expect_err("found twice");
    assert!(refusal.starts_with("Nothing was changed"), "{refusal}");
    assert!(refusal.contains("in the body 2 times"), "{refusal}");
    let text = call(
        &mut store,
        &request("t1", T0, caps),
        "replace",
        json!({"memory": m, "passages": [{"find": "one", "replace": "1"}, {"find": "three", "replace": "3"}]}),
    )
    .expect("both found once");
    assert!(text.contains("revision 2, its 1st revision"), "{text}");
    assert_eq!(store.memories_of("mira").expect("list")[0].body, "1 two 3");
}

#[test]
fn s3_6_replace_naming_only_a_description_changes_it_alone_as_a_revision() {
    let (_dir, mut store) = open();
    let caps = Caps::default();
    let m = kept(&mut store, &request("t1", T0, caps), "old", "body");
    let text = call(
        &mut store,
        &request("t2", T0 + DAY, caps),
        "replace",
        json!({"memory": m, "description": "new"}),
    )
    .expect("revised");
    assert!(
        text.contains("Description replaced: was “old”, now “new”."),
        "{text}"
    );
    let entry = store.memories_of("mira").expect("list").remove(0);
    assert_eq!(
        (
            entry.description.as_str(),
            entry.body.as_str(),
            entry.revision
        ),
        ("new", "body", 2)
    );
    assert_eq!(entry.written_at, T0);
    assert_eq!(entry.provenance_turn_id, "t2");
}

#[test]
fn s3_6_a_revision_refused_at_the_cap_states_what_the_entry_holds_and_would_become() {
    let (_dir, mut store) = open();
    let caps = small();
    let m = kept(
        &mut store,
        &request("t1", T0, caps),
        "d",
        "x".repeat(25).as_str(),
    );
    let refusal = call(
        &mut store,
        &request("t1", T0, caps),
        "append",
        json!({"memory": m, "text": "yyyyyy"}),
    )
    .expect_err("over");
    assert!(
        refusal
            .contains("holds 25 characters, and this change would make it 32, over the cap of 30"),
        "{refusal}"
    );
    assert!(
        refusal.contains("rather than keep a second memory"),
        "{refusal}"
    );
    assert_eq!(store.memories_of("mira").expect("list")[0].revision, 1);
}

#[test]
fn s3_6_references_sharing_a_prefix_are_refused_as_ambiguous() {
    let (_dir, mut store) = open();
    let origin = MemoryOrigin {
        turn_id: "t1",
        channel_id: "c1",
    };
    for (description, key) in [
        ("first", "abcd120000000000"),
        ("second", "abcd340000000000"),
    ] {
        store
            .write_memory("mira", description, "b", origin, T0, 10, || key.to_string())
            .expect("write");
    }
    let refusal = call(
        &mut store,
        &request("t1", T0, Caps::default()),
        "read",
        json!({"memory": "mabcd"}),
    )
    .expect_err("ambiguous");
    assert!(refusal.contains("matches 2 memories"), "{refusal}");
    assert!(refusal.contains("mabcd120000000000 — first"), "{refusal}");
    assert!(refusal.contains("mabcd340000000000 — second"), "{refusal}");
    let text = call(
        &mut store,
        &request("t1", T0, Caps::default()),
        "read",
        json!({"memory": "mabcd34"}),
    )
    .expect("one");
    assert!(text.starts_with("Memory mabcd34 — second"), "{text}");
}

#[test]
fn s3_6_another_agents_or_a_deleted_memory_may_have_been_deleted() {
    let (_dir, mut store) = open();
    let caps = Caps::default();
    let m = kept(&mut store, &request("t1", T0, caps), "d", "b");
    let mut theirs = request("t9", T0, caps);
    theirs.agent = "ola";
    let refusal = call(&mut store, &theirs, "read", json!({"memory": m})).expect_err("not theirs");
    assert!(
        refusal.contains("It may have been deleted. Memories are private"),
        "{refusal}"
    );
    call(
        &mut store,
        &request("t1", T0, caps),
        "delete",
        json!({"memory": m}),
    )
    .expect("deleted");
    let again = call(
        &mut store,
        &request("t1", T0, caps),
        "read",
        json!({"memory": m}),
    )
    .expect_err("gone");
    assert!(again.contains("may have been deleted"), "{again}");
}

#[test]
fn s3_6_the_listing_is_byte_identical_a_day_later() {
    let (_dir, mut store) = open();
    let caps = Caps::default();
    let m = kept(
        &mut store,
        &request("t1", T0, caps),
        "Ana's invoices",
        "PDF",
    );
    kept(&mut store, &request("t1", T0, caps), "Build steps", "make");
    let before = render::listing(&store.memory_listing("mira").expect("list"), &caps);
    call(
        &mut store,
        &request("t2", T0 + DAY, caps),
        "read",
        json!({"memory": m}),
    )
    .expect("read");
    let after = render::listing(&store.memory_listing("mira").expect("list"), &caps);
    assert_eq!(before, after);
    assert!(
        before.starts_with("Your memories: 2 of at most 50.\n- m"),
        "{before}"
    );
    assert!(before.ends_with(": Build steps"), "{before}");
}

#[test]
fn s3_6_a_passage_overlapping_itself_is_found_twice() {
    assert_eq!(
        edit::replace(
            "aaa",
            &[edit::Passage {
                find: "aa".into(),
                replace: "b".into()
            }]
        ),
        Err(vec![edit::Fault::Found { index: 0, times: 2 }])
    );
    assert_eq!(
        edit::replace(
            "one two",
            &[
                edit::Passage {
                    find: "one t".into(),
                    replace: "x".into()
                },
                edit::Passage {
                    find: "two".into(),
                    replace: "y".into()
                }
            ]
        ),
        Err(vec![edit::Fault::Overlaps {
            index: 1,
            earlier: 0
        }])
    );
    assert_eq!(edit::append("a", "b"), "a\nb");
    assert_eq!(edit::append("", "b"), "b");
    assert_eq!(refs::key_prefix("[MAB12CD]").as_deref(), Some("ab12cd"));
    assert_eq!(refs::key_prefix("mab"), None);
}
