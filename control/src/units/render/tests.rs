use std::collections::BTreeMap;

use super::*;
use crate::store::{NewReport, NewTurn, NewUnit, TurnCause, TurnEnd, UnitState};

const NOW: i64 = 1_764_504_000_000; // 2025-11-30 13:00 in Berlin
const MIN: i64 = 60_000;

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("s.db")).expect("open");
    (dir, store)
}

fn names() -> BTreeMap<String, String> {
    [("sam", "Sam Rivers"), ("naomi", "Naomi Nagata")]
        .into_iter()
        .map(|(u, d)| (u.to_string(), d.to_string()))
        .collect()
}

fn view<'a>(reader: &'a str, names: &'a BTreeMap<String, String>) -> Viewpoint<'a> {
    Viewpoint {
        reader,
        channel_id: "c1",
        boot_id: "boot",
        now: NOW,
        timezone: chrono_tz::Europe::Berlin,
        display_names: names,
    }
}

fn assign(store: &mut Store, outcome: &str, at: i64) -> i64 {
    let id = store.reserve_unit_number("c1", "sam", at).expect("reserve");
    store
        .record_assignment(&NewUnit {
            id,
            channel_id: "c1".into(),
            creator: "sam".into(),
            assignee: "naomi".into(),
            outcome: outcome.into(),
            criteria: "c".into(),
            context: String::new(),
            assignment_post_id: format!("p{id}"),
            assigning_turn_id: "t0".into(),
            follows: None,
            at,
        })
        .expect("assign");
    id
}

fn turn(store: &Store, id: &str, agent: &str, started: i64, ended: Option<i64>) {
    store
        .open_turn(&NewTurn {
            id: id.into(),
            agent: agent.into(),
            channel_id: "c1".into(),
            boot_id: "boot".into(),
            started_at: started,
            cause: TurnCause::Post,
            answers_post_id: None,
            depth: 0,
            chain_root: id.into(),
            chain_length: 1,
            model: "m".into(),
        })
        .expect("turn");
    if let Some(ended) = ended {
        store
            .end_turn(
                id,
                &TurnEnd {
                    exit_kind: "completed".into(),
                    ended_at: ended,
                    ended_by: None,
                    context_reach_post_id: None,
                },
            )
            .expect("end");
    }
}

#[test]
fn s3_15_open_work_states_every_turn_that_nothing_wakes_the_agent() {
    let (_dir, store) = open();
    let names = names();
    let text = open_work(&store, view("sam", &names), 20).expect("render");
    assert!(text.contains("Open work: none"), "{text}");
    assert!(text.ends_with(NOTHING_WAKES), "{text}");
}

#[test]
fn s3_15_each_line_says_where_the_other_party_stands() {
    let (_dir, mut store) = open();
    let names = names();
    let working = assign(&mut store, "Working one", NOW - 60 * MIN);
    let idle = assign(&mut store, "Idle one", NOW - 50 * MIN);
    let reviewed = assign(&mut store, "Reviewed one", NOW - 40 * MIN);
    store
        .record_report(&NewReport {
            unit_id: reviewed,
            post_id: "r1".into(),
            state: UnitState::Review,
            body: "done".into(),
            by_framework: false,
            turn_id: None,
            at: NOW - 30 * MIN,
        })
        .expect("report");
    // Naomi ended a turn after the idle unit was assigned; none running.
    turn(&store, "t1", "naomi", NOW - 45 * MIN, Some(NOW - 35 * MIN));
    let text = open_work(&store, view("sam", &names), 20).expect("render");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].starts_with(&format!("- U-{working} ")), "{text}");
    assert!(
        lines[1].contains("you assigned it to Naomi Nagata at 12:00"),
        "{text}"
    );
    assert!(
        lines[1]
            .contains("Naomi Nagata's latest turn here since the unit last changed ended at 12:25"),
        "{text}"
    );
    assert!(lines[2].contains(&format!("U-{idle}")), "{text}");
    assert!(
        lines[3].contains("review; awaiting your move since 12:30"),
        "{text}"
    );
    // Naomi's turn running now shows as working, begun after the change.
    turn(&store, "t2", "naomi", NOW - 5 * MIN, None);
    let text = open_work(&store, view("sam", &names), 20).expect("render");
    assert!(
        text.contains("Naomi Nagata is working here since 12:55."),
        "{text}"
    );
    // From the assignee's side the assigned unit awaits its own move.
    let text = open_work(&store, view("naomi", &names), 20).expect("render");
    assert!(text.contains("Sam Rivers assigned it to you"), "{text}");
    assert!(
        text.contains("assigned; awaiting your move since 12:00"),
        "{text}"
    );
}

#[test]
fn s3_15_the_list_is_capped_and_the_remainder_counted_never_a_unit_cut() {
    let (_dir, mut store) = open();
    let names = names();
    let long = "word ".repeat(400);
    for n in 0..5 {
        assign(&mut store, &long, NOW - (10 - n) * MIN);
    }
    let text = open_work(&store, view("sam", &names), 3).expect("render");
    assert_eq!(text.matches("- U-").count(), 3, "{text}");
    assert!(text.contains(long.trim()), "a unit is never truncated");
    assert!(text.contains("…and 2 more open units"), "{text}");
}

#[test]
fn s3_15_tasks_read_says_a_forgotten_report_was_forgotten_and_does_not_show_it() {
    use crate::store::{AuthorKind, ObservedChannel, ObservedPost, ObservedVia, PostRole};
    let (_dir, mut store) = open();
    store
        .record_channel(&ObservedChannel {
            id: "c1".into(),
            name: "c".into(),
            display_name: "C".into(),
            kind: crate::store::ChannelKind::Open,
        })
        .expect("channel");
    let id = assign(&mut store, "the summary", NOW - 30 * MIN);
    store
        .record_post(&ObservedPost {
            id: "r1".into(),
            channel_id: "c1".into(),
            author_id: "u-naomi".into(),
            author_name: "naomi".into(),
            author_kind: AuthorKind::Agent,
            created_at: NOW - 20 * MIN,
            message: "Secret figures.".into(),
            props: None,
            role: PostRole::Post,
            turn_id: None,
            pinned: false,
            observed_at: NOW - 20 * MIN,
            observed_via: ObservedVia::Live,
            files: Vec::new(),
        })
        .expect("post");
    store
        .record_report(&NewReport {
            unit_id: id,
            post_id: "r1".into(),
            state: UnitState::Review,
            body: "Secret figures.".into(),
            by_framework: false,
            turn_id: None,
            at: NOW - 20 * MIN,
        })
        .expect("report");
    let unit = store.unit(id).expect("query").expect("unit");
    let names = names();
    let before = crate::units::read::render(&store, &unit, view("sam", &names)).expect("read");
    assert!(before.contains("Secret figures."), "{before}");

    store.forget_post("r1", NOW - 10 * MIN).expect("forget");
    let after = crate::units::read::render(&store, &unit, view("sam", &names)).expect("read");
    assert!(!after.contains("Secret figures."), "{after}");
    assert!(
        after.contains("The latest report, post r1, was forgotten (12:50)")
            && after.contains("so it is not shown"),
        "{after}"
    );
}
