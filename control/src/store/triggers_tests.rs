use super::*;
use crate::store::ObservedVia;

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("s.db")).expect("open");
    (dir, store)
}

fn mail(reference: &str) -> NewTrigger {
    NewTrigger {
        source: TriggerSource::Mail,
        agent: "mira".into(),
        channel_id: "c1".into(),
        sender: "ana@example.com".into(),
        subject: "Invoice".into(),
        reference: reference.into(),
        body: Some("Please pay.".into()),
        detail: serde_json::json!({"uid": 7}),
    }
}

fn firing(occurrence: i64) -> NewTrigger {
    NewTrigger {
        source: TriggerSource::Schedule,
        agent: "mira".into(),
        channel_id: "c1".into(),
        sender: "schedule".into(),
        subject: "daily".into(),
        reference: "daily".into(),
        body: Some("Post the report.".into()),
        detail: serde_json::json!({"occurrence": occurrence}),
    }
}

const CURSOR: MailCursor = MailCursor {
    uidvalidity: 5,
    last_uid: 9,
    last_internal_date: 100,
};

#[test]
fn s3_13_the_cursor_moves_with_the_rows_it_read() {
    let (_dir, mut store) = open();
    assert_eq!(store.mail_cursor("mira").expect("cursor"), None);
    let ids = store
        .record_mail("mira", CURSOR, &[mail("a@x"), mail("b@x")], 1)
        .expect("record");
    assert_eq!(ids.len(), 2);
    assert_eq!(store.mail_cursor("mira").expect("cursor"), Some(CURSOR));
    let first = store.next_pending("c1").expect("pending").expect("one");
    assert_eq!(first.id, ids[0]);
    assert_eq!(first.body.as_deref(), Some("Please pay."));
    assert_eq!(first.detail["uid"], 7);
}

#[test]
fn s3_13_a_renumbered_mailbox_read_again_records_nothing_twice() {
    let (_dir, mut store) = open();
    store
        .record_mail("mira", CURSOR, &[mail("a@x")], 1)
        .expect("record");
    let again = store
        .record_mail("mira", CURSOR, &[mail("a@x"), mail("c@x")], 2)
        .expect("record");
    assert_eq!(again.len(), 1, "only the message not seen before");
    assert_eq!(
        store
            .trigger(again[0])
            .expect("read")
            .expect("row")
            .reference,
        "c@x"
    );
}

#[test]
fn s4_2_a_busy_channel_delays_a_schedule_and_never_stacks_it() {
    let (_dir, mut store) = open();
    store.schedule_mark("mira", "daily", 1).expect("mark");
    let first = store
        .record_firing(&firing(10), "daily", 10, 11)
        .expect("fire");
    let second = store
        .record_firing(&firing(20), "daily", 20, 21)
        .expect("fire");
    assert_eq!(
        first, second,
        "one waiting row, carrying the newer occurrence"
    );
    let row = store.trigger(first).expect("read").expect("row");
    assert_eq!(row.detail["occurrence"], 20);
    let mark = store.schedule_mark("mira", "daily", 99).expect("mark");
    assert_eq!(mark.declared_at, 1, "declared once");
    assert_eq!(mark.last_occurrence, Some(20));
}

#[test]
fn s4_2_announcing_a_firing_marks_the_previous_one_handled() {
    let (_dir, mut store) = open();
    store.schedule_mark("mira", "daily", 1).expect("mark");
    let first = store
        .record_firing(&firing(10), "daily", 10, 11)
        .expect("fire");
    store.mark_announced(first, "p1", 12).expect("announce");
    let second = store
        .record_firing(&firing(20), "daily", 20, 21)
        .expect("fire");
    assert_ne!(first, second, "an announced firing is not reused");
    let webhook = store
        .record_trigger(
            &NewTrigger {
                source: TriggerSource::Webhook,
                reference: "daily".into(),
                ..firing(0)
            },
            13,
        )
        .expect("record");
    store.mark_announced(webhook, "p0", 13).expect("announce");
    store.mark_announced(second, "p2", 22).expect("announce");
    let outstanding: Vec<i64> = store
        .outstanding_triggers("mira", "c1")
        .expect("outstanding")
        .iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(
        outstanding,
        [second, webhook],
        "the earlier firing is handled; another source's row is untouched"
    );
}

#[test]
fn s4_2_resolving_is_once_and_only_for_an_announced_trigger() {
    let (_dir, mut store) = open();
    let id = store.record_trigger(&mail("a@x"), 1).expect("record");
    assert!(!store.resolve_trigger(id, 2).expect("resolve"), "pending");
    store.mark_announced(id, "p1", 3).expect("announce");
    assert_eq!(
        store
            .trigger_announced_by("p1")
            .expect("read")
            .map(|t| t.id),
        Some(id)
    );
    assert!(store.resolve_trigger(id, 4).expect("resolve"));
    assert!(!store.resolve_trigger(id, 5).expect("resolve"), "once");
    assert!(
        store
            .outstanding_triggers("mira", "c1")
            .expect("read")
            .is_empty()
    );
}

#[test]
fn s4_2_a_restart_announces_again_once() {
    let (_dir, mut store) = open();
    let id = store.record_trigger(&mail("a@x"), 1).expect("record");
    store.mark_announced(id, "p1", 2).expect("announce");
    assert_eq!(
        store.announce_again("p1").expect("again"),
        AnnounceAgain::Sent
    );
    store.mark_announced(id, "p2", 3).expect("announce");
    assert_eq!(
        store.announce_again("p2").expect("again"),
        AnnounceAgain::HadItsOneMore,
        "one more, no more"
    );
    assert!(store.resolve_trigger(id, 4).expect("resolve"));
    assert_eq!(
        store.announce_again("p2").expect("again"),
        AnnounceAgain::NotOutstanding,
        "a resolved trigger is owed nothing"
    );
    assert_eq!(
        store.trigger(id).expect("read").expect("row").announcements,
        2
    );
}

#[test]
fn s4_2_labels_round_trip() {
    assert_eq!(trigger_label(12), "T-12");
    for text in ["T-12", "[T-12]", "12", " t-12 "] {
        assert_eq!(parse_trigger_label(text), Some(12), "{text}");
    }
    for text in ["", "T-", "T-0", "x12", "<abc@mail>"] {
        assert_eq!(parse_trigger_label(text), None, "{text}");
    }
}

fn with_channel() -> (tempfile::TempDir, Store) {
    let (dir, store) = open();
    store
        .conn
        .execute_batch(
            "INSERT INTO channels (id, name, display_name, kind) VALUES ('c1', 'c1', 'c1', 'open')",
        )
        .expect("channel");
    (dir, store)
}

/// The system bot's announcement of `trigger` as the store records it.
fn announcement(
    id: &str,
    trigger: i64,
    at: Millis,
    via: ObservedVia,
) -> crate::store::ObservedPost {
    crate::store::ObservedPost {
        id: id.into(),
        channel_id: "c1".into(),
        author_id: "u-collegium".into(),
        author_name: "collegium".into(),
        author_kind: crate::store::AuthorKind::SystemBot,
        created_at: at,
        message: format!("@mira New mail [T-{trigger}]"),
        props: Some(
            serde_json::json!({"collegium_role": "notice", "collegium_trigger": trigger})
                .to_string(),
        ),
        role: crate::store::PostRole::Notice,
        turn_id: None,
        pinned: false,
        observed_at: at,
        observed_via: via,
        files: Vec::new(),
    }
}

fn answered_by_a_turn(store: &Store, post: &str) {
    store
        .open_turn(&crate::store::NewTurn {
            id: "t1".into(),
            agent: "mira".into(),
            channel_id: "c1".into(),
            boot_id: "b1".into(),
            started_at: 300,
            cause: crate::store::TurnCause::Trigger,
            answers_post_id: Some(post.into()),
            depth: 0,
            chain_root: "t1".into(),
            chain_length: 1,
            model: "m".into(),
        })
        .expect("turn");
}

/// Records the system bot's announcement `post` of `trigger`, read at
/// `at` over `via`.
fn posted(store: &mut Store, post: &str, trigger: i64, at: Millis, via: ObservedVia) {
    store
        .record_post(&announcement(post, trigger, at, via))
        .expect("post");
}

/// A crash between Mattermost creating the announcement and the store
/// recording it: the post read back at boot records it, once.
#[test]
fn s7_3_an_announcement_a_crash_left_unrecorded_is_recorded_from_the_channel() {
    let (_dir, mut store) = with_channel();
    let id = store.record_trigger(&mail("<a@x>"), 10).expect("record");
    posted(&mut store, "p1", id, 100, ObservedVia::Backfill);
    assert_eq!(
        store.recover_unrecorded_announcements().expect("recover"),
        1
    );
    let trigger = store.trigger(id).expect("read").expect("row");
    assert_eq!(trigger.status, TriggerStatus::Announced);
    assert_eq!(trigger.announcement_post_id.as_deref(), Some("p1"));
    assert_eq!(trigger.announcements, 1);
    assert_eq!(store.recover_unrecorded_announcements().expect("again"), 0);

    // It started nothing, so it is owed its announcement; once a turn
    // answers it, it is not.
    assert_eq!(
        store.unstarted_announcements(50).expect("unstarted"),
        vec![(id, "p1".to_string())]
    );
    answered_by_a_turn(&store, "p1");
    assert!(
        store
            .unstarted_announcements(50)
            .expect("unstarted")
            .is_empty()
    );
}

/// Sent back once, announced again and cut off again: the second post is
/// the one recovered, and the count says two (§4.2).
#[test]
fn s4_2_a_second_announcement_left_unrecorded_counts_as_the_second() {
    let (_dir, mut store) = with_channel();
    let id = store.record_trigger(&mail("<a@x>"), 10).expect("record");
    posted(&mut store, "p1", id, 100, ObservedVia::Live);
    store.mark_announced(id, "p1", 101).expect("announced");
    assert_eq!(
        store.announce_again("p1").expect("again"),
        AnnounceAgain::Sent
    );
    posted(&mut store, "p2", id, 200, ObservedVia::Backfill);
    assert_eq!(
        store.recover_unrecorded_announcements().expect("recover"),
        1
    );
    let trigger = store.trigger(id).expect("read").expect("row");
    assert_eq!(trigger.announcement_post_id.as_deref(), Some("p2"));
    assert_eq!(trigger.announcements, 2);
    assert_eq!(
        store.announce_again("p2").expect("no third"),
        AnnounceAgain::HadItsOneMore
    );
}

/// Only what the stopped process announced and never saw arrive is owed:
/// not a post it saw (its turn may have been refused), nor one announced
/// before it started.
#[test]
fn s7_3_an_announcement_seen_live_or_made_before_the_last_start_is_not_owed() {
    let (_dir, mut store) = with_channel();
    let seen = store.record_trigger(&mail("<a@x>"), 10).expect("record");
    posted(&mut store, "p1", seen, 100, ObservedVia::Live);
    store.mark_announced(seen, "p1", 100).expect("announced");
    let old = store.record_trigger(&mail("<b@x>"), 10).expect("record");
    posted(&mut store, "p2", old, 40, ObservedVia::Backfill);
    store.mark_announced(old, "p2", 40).expect("announced");
    assert!(
        store
            .unstarted_announcements(50)
            .expect("unstarted")
            .is_empty()
    );
    assert_eq!(
        store.recover_unrecorded_announcements().expect("recover"),
        0
    );
}

/// Of two posts naming a pending trigger the earlier is its first
/// announcement; a post from before the trigger was recorded (an old
/// store's trigger of the same number) is none of its.
#[test]
fn s7_3_the_earliest_announcement_after_the_trigger_is_the_one_recovered() {
    let (_dir, mut store) = with_channel();
    let id = store
        .record_trigger(&mail("<a@x>"), 1_000_000)
        .expect("record");
    posted(&mut store, "stale", id, 100, ObservedVia::Backfill);
    assert_eq!(
        store.recover_unrecorded_announcements().expect("recover"),
        0
    );
    posted(&mut store, "p2", id, 1_000_200, ObservedVia::Backfill);
    posted(&mut store, "p1", id, 1_000_100, ObservedVia::Backfill);
    assert_eq!(
        store.recover_unrecorded_announcements().expect("recover"),
        1
    );
    let trigger = store.trigger(id).expect("read").expect("row");
    assert_eq!(trigger.announcement_post_id.as_deref(), Some("p1"));
    assert_eq!(trigger.announcements, 1);
}

fn webhook(subject: &str) -> NewTrigger {
    NewTrigger {
        source: TriggerSource::Webhook,
        agent: "mira".into(),
        channel_id: "c1".into(),
        sender: "ci".into(),
        subject: subject.into(),
        reference: "build-7".into(),
        body: Some("It failed.".into()),
        detail: serde_json::json!({}),
    }
}

#[test]
fn s6_4_a_webhook_item_sent_again_while_outstanding_records_nothing() {
    let (_dir, mut store) = open();
    let WebhookRecorded::Recorded(first) = store
        .record_webhook(&webhook("Build 7"), 5, 1)
        .expect("record")
    else {
        panic!("the first is recorded");
    };
    assert_eq!(
        store
            .record_webhook(&webhook("Build 7"), 5, 2)
            .expect("again"),
        WebhookRecorded::Again(first)
    );
    // Any field different is another item.
    let mut other = webhook("Build 7");
    other.body = Some("It failed again.".into());
    assert!(matches!(
        store.record_webhook(&other, 5, 3).expect("other"),
        WebhookRecorded::Recorded(id) if id != first
    ));
    // Once marked done, the same item is a new arrival.
    store.mark_announced(first, "p1", 4).expect("announced");
    assert!(store.resolve_trigger(first, 5).expect("resolved"));
    assert!(matches!(
        store.record_webhook(&webhook("Build 7"), 5, 6).expect("after"),
        WebhookRecorded::Recorded(id) if id != first
    ));
}

#[test]
fn s6_4_an_agent_holds_at_most_its_outstanding_webhook_triggers() {
    let (_dir, mut store) = open();
    let mut ids = Vec::new();
    for n in 0..2 {
        match store
            .record_webhook(&webhook(&format!("item {n}")), 2, n)
            .expect("record")
        {
            WebhookRecorded::Recorded(id) => ids.push(id),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        store
            .record_webhook(&webhook("item 2"), 2, 3)
            .expect("full"),
        WebhookRecorded::Full(2)
    );
    // Other sources and other agents count apart.
    store.record_trigger(&mail("m@x"), 4).expect("mail");
    let mut theo = webhook("item 2");
    theo.agent = "theo".into();
    assert!(matches!(
        store.record_webhook(&theo, 2, 5).expect("theo"),
        WebhookRecorded::Recorded(_)
    ));
    store.mark_announced(ids[0], "p1", 6).expect("announced");
    assert!(store.resolve_trigger(ids[0], 7).expect("resolved"));
    assert!(matches!(
        store
            .record_webhook(&webhook("item 2"), 2, 8)
            .expect("room again"),
        WebhookRecorded::Recorded(_)
    ));
}
