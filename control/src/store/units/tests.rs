use super::*;

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("s.db")).expect("open");
    (dir, store)
}

fn assign(
    store: &mut Store,
    creator: &str,
    assignee: &str,
    follows: Option<i64>,
    at: Millis,
) -> i64 {
    let id = store
        .reserve_unit_number("c1", creator, at)
        .expect("reserve");
    let unit = NewUnit {
        id,
        channel_id: "c1".into(),
        creator: creator.into(),
        assignee: assignee.into(),
        outcome: "A summary".into(),
        criteria: "Cites sources".into(),
        context: "See the pinned brief".into(),
        assignment_post_id: format!("post-{id}"),
        assigning_turn_id: "t1".into(),
        follows,
        at,
    };
    store.record_assignment(&unit).expect("record");
    id
}

fn report(store: &mut Store, unit_id: i64, state: UnitState, at: Millis) -> i64 {
    store
        .record_report(&NewReport {
            unit_id,
            post_id: format!("report-{unit_id}-{at}"),
            state,
            body: "Done, see the file".into(),
            by_framework: false,
            turn_id: Some("t2".into()),
            at,
        })
        .expect("report")
}

fn close(unit_id: i64, state: UnitState, at: Millis) -> NewClose {
    NewClose {
        unit_id,
        post_id: format!("close-{unit_id}"),
        state,
        closed_by: ClosedBy::Creator,
        closer: "sam".into(),
        verdict: "Delivered.".into(),
        at,
    }
}

#[test]
fn s3_15_a_unit_is_named_u_and_its_number() {
    assert_eq!(unit_label(12), "U-12");
    assert_eq!(parse_unit_label("U-12"), Some(12));
    assert_eq!(parse_unit_label(" 7 "), Some(7));
    assert_eq!(parse_unit_label("U-0"), None);
    assert_eq!(parse_unit_label("the summary unit"), None);
}

#[test]
fn s3_15_a_report_moves_the_unit_and_becomes_its_latest() {
    let (_dir, mut store) = open();
    let id = assign(&mut store, "sam", "naomi", None, 100);
    let unit = store.unit(id).expect("read").expect("unit");
    assert_eq!(unit.state, UnitState::Assigned);
    assert_eq!(unit.assignment_post_id, format!("post-{id}"));
    let first = report(&mut store, id, UnitState::Blocked, 200);
    let second = report(&mut store, id, UnitState::Review, 300);
    let unit = store.unit(id).expect("read").expect("unit");
    assert_eq!(unit.state, UnitState::Review);
    assert_eq!(unit.changed_at, 300);
    assert_eq!(unit.latest_report_id, Some(second));
    assert_ne!(first, second);
    let latest = store.unit_report(second).expect("read").expect("report");
    assert_eq!(latest.state, UnitState::Review);
}

#[test]
fn s3_15_every_close_records_the_state_it_closed_from_and_what_closed_it() {
    let (_dir, mut store) = open();
    let id = assign(&mut store, "sam", "naomi", None, 100);
    report(&mut store, id, UnitState::Blocked, 200);
    store
        .record_close(&close(id, UnitState::Cancelled, 300))
        .expect("close");
    let unit = store.unit(id).expect("read").expect("unit");
    assert_eq!(unit.state, UnitState::Cancelled);
    assert_eq!(unit.closed_from_state, Some(UnitState::Blocked));
    assert_eq!(unit.closed_by, Some(ClosedBy::Creator));
    assert_eq!(unit.closer.as_deref(), Some("sam"));
    assert_eq!(unit.closed_at, Some(300));
    // Nothing reopens: a second close changes nothing.
    store
        .record_close(&close(id, UnitState::Done, 400))
        .expect("close");
    let unit = store.unit(id).expect("read").expect("unit");
    assert_eq!(unit.state, UnitState::Cancelled);
}

#[test]
fn s3_15_a_continuation_closes_the_unit_it_follows_as_done_and_links_both() {
    let (_dir, mut store) = open();
    let first = assign(&mut store, "sam", "naomi", None, 100);
    report(&mut store, first, UnitState::Review, 200);
    let next = store
        .reserve_unit_number("c1", "sam", 300)
        .expect("reserve");
    let unit = NewUnit {
        id: next,
        channel_id: "c1".into(),
        creator: "sam".into(),
        assignee: "naomi".into(),
        outcome: "Second pass".into(),
        criteria: "c".into(),
        context: "x".into(),
        assignment_post_id: "post-next".into(),
        assigning_turn_id: "t3".into(),
        follows: Some(first),
        at: 300,
    };
    let mut closing = close(first, UnitState::Done, 300);
    closing.closed_by = ClosedBy::Continuation;
    closing.verdict = format!("Continued by {}.", unit_label(next));
    closing.post_id = "post-next".into();
    store
        .record_continuation(&unit, Some(&closing), "unused")
        .expect("continue");
    let followed = store.unit(first).expect("read").expect("unit");
    assert_eq!(followed.state, UnitState::Done);
    assert_eq!(followed.closed_by, Some(ClosedBy::Continuation));
    assert_eq!(followed.followed_by, Some(next));
    assert_eq!(followed.linked_from_state.as_deref(), Some("review"));
    assert_eq!(followed.verdict.as_deref(), Some(closing.verdict.as_str()));
    let continuing = store.unit(next).expect("read").expect("unit");
    assert_eq!(continuing.follows, Some(first));
    // A unit is followed once.
    let again = NewUnit {
        id: store
            .reserve_unit_number("c1", "sam", 400)
            .expect("reserve"),
        follows: Some(first),
        assignment_post_id: "post-again".into(),
        ..unit
    };
    assert!(store.record_continuation(&again, None, "x").is_err());
}

#[test]
fn s3_15_a_link_to_a_unit_already_done_keeps_its_verdict_and_names_its_successor() {
    let (_dir, mut store) = open();
    let first = assign(&mut store, "sam", "naomi", None, 100);
    store
        .record_close(&close(first, UnitState::Done, 150))
        .expect("close");
    let linking = store
        .reserve_unit_number("c1", "sam", 200)
        .expect("reserve");
    let unit = NewUnit {
        id: linking,
        channel_id: "c1".into(),
        creator: "sam".into(),
        assignee: "naomi".into(),
        outcome: "o".into(),
        criteria: "c".into(),
        context: "x".into(),
        assignment_post_id: "post-link".into(),
        assigning_turn_id: "t3".into(),
        follows: Some(first),
        at: 200,
    };
    store
        .record_continuation(&unit, None, "Continued by U-2.")
        .expect("link");
    let linked = store.unit(first).expect("read").expect("unit");
    assert_eq!(
        linked.verdict.as_deref(),
        Some("Delivered. Continued by U-2.")
    );
    assert_eq!(linked.closed_by, Some(ClosedBy::Creator));
    assert_eq!(linked.linked_from_state, None);
    assert_eq!(linked.followed_by, Some(linking));
}

#[test]
fn s3_15_open_work_lists_the_agents_unclosed_units_here_oldest_first() {
    let (_dir, mut store) = open();
    let a = assign(&mut store, "sam", "naomi", None, 100);
    let b = assign(&mut store, "omar", "sam", None, 200);
    let c = assign(&mut store, "omar", "naomi", None, 300);
    let d = assign(&mut store, "sam", "naomi", None, 400);
    store
        .record_close(&close(d, UnitState::Done, 500))
        .expect("close");
    let open: Vec<i64> = store
        .open_units_of("sam", "c1")
        .expect("open")
        .iter()
        .map(|u| u.id)
        .collect();
    assert_eq!(open, vec![a, b]);
    assert!(!open.contains(&c));
    assert!(store.open_units_of("sam", "c2").expect("open").is_empty());
}

#[test]
fn s3_15_a_report_counts_as_read_only_for_the_turn_that_read_it() {
    let (_dir, mut store) = open();
    let id = assign(&mut store, "sam", "naomi", None, 100);
    let r = report(&mut store, id, UnitState::Review, 200);
    assert!(!store.has_read_report("t9", r).expect("read"));
    store
        .mark_reports_in_window("t9", &[format!("report-{id}-200"), "other".into()])
        .expect("mark");
    assert!(store.has_read_report("t9", r).expect("read"));
    assert!(!store.has_read_report("t10", r).expect("read"));
    store.mark_report_read("t10", r).expect("mark");
    assert!(store.has_read_report("t10", r).expect("read"));
}

#[test]
fn s3_15_the_units_a_turn_reported_on_name_the_creators_its_reports_addressed() {
    let (_dir, mut store) = open();
    let first = assign(&mut store, "sam", "naomi", None, 100);
    let second = assign(&mut store, "mira", "naomi", None, 110);
    assign(&mut store, "theo", "naomi", None, 120);
    report(&mut store, first, UnitState::Blocked, 200);
    report(&mut store, first, UnitState::Review, 210);
    report(&mut store, second, UnitState::Review, 220);
    let reported = store.units_reported_by("t2").expect("read");
    let creators: Vec<&str> = reported.iter().map(|u| u.creator.as_str()).collect();
    assert_eq!(creators, vec!["sam", "mira"]);
    assert!(store.units_reported_by("t9").expect("read").is_empty());
}
