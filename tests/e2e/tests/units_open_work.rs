//! Open work end to end (§3.15): each line says where the other party
//! stands as the turn begins, computed from the turn records whenever it is
//! shown; and a supervisor's units, handed at depths 0 and 1, are all
//! listed for it.

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{
    calls, completions_reach, ended_turn, framework_message, reply, store, turn_requests,
    with_tasks,
};
use model_sim::script::{Failure, Scripted};
use serde_json::json;

fn assign(assignee: &str, outcome: &str) -> (&'static str, serde_json::Value) {
    (
        "tasks__assign",
        json!({
            "assignee": assignee,
            "outcome": outcome,
            "criteria": "Names the amount and the due date",
        }),
    )
}

/// The framework message of the first request whose message holds `text`.
fn shown(h: &Harness, text: &str) -> String {
    turn_requests(h)
        .iter()
        .map(framework_message)
        .find(|m| m.contains(text))
        .unwrap_or_else(|| panic!("no framework message holds `{text}`"))
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_each_open_work_line_says_where_the_other_party_stands_as_the_turn_begins() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[assign("theo", "A summary of the March invoice")]),
            reply("Handed to Theo."),
            // Theo's turn takes the lane and is still generating.
            Scripted {
                text: Some("@mira which folder is the invoice in?".into()),
                hold: Some("theo-working".into()),
                ..Default::default()
            },
            // Ana asks Mira while Theo works.
            reply("Theo is on it."),
            // Mira's turn started by Theo's question, once his turn ended.
            reply("It is in the invoices folder."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    completions_reach(&h, 3).await;
    h.say("ana", &square, "@mira how is the summary going?")
        .await;
    h.wait_post(&square, "mira", "Theo is on it.", since).await;
    h.model.sim.release("theo-working");
    h.wait_post(&square, "mira", "It is in the invoices folder.", since)
        .await;

    // The assignee's own line: the move is its own.
    let theo = shown(&h, "U-1 (Mira assigned it to you");
    assert!(theo.contains("awaiting your move since"), "{theo}");
    // The creator's, while the assignee's turn runs.
    let working = shown(&h, "Theo the Operator is working here since");
    assert!(working.contains("U-1"), "{working}");
    // The creator's, once that turn ended without a report.
    let ended = shown(
        &h,
        "Theo the Operator's latest turn here since the unit last changed ended at",
    );
    assert!(ended.contains("U-1"), "{ended}");
    // Standing is computed, never stored: the unit itself stays assigned.
    let unit = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(unit.state.as_str(), "assigned");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_supervisors_five_units_handed_at_depths_0_and_1_are_all_in_its_open_work() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            // Mira, at depth 0, hands three units to Theo.
            calls(&[
                assign("theo", "The March invoice summary"),
                assign("theo", "The April invoice summary"),
                assign("theo", "The May invoice summary"),
            ]),
            reply("Three summaries handed to Theo."),
            // Theo, at depth 1, hands two back to Mira, its creator, then
            // reports all three and ends at the last report.
            calls(&[
                assign("mira", "The March exchange rate"),
                assign("mira", "The April exchange rate"),
            ]),
            calls(&[
                ("tasks__report", json!({"unit": "U-1", "state": "review", "report": "March: 1,200 EUR, due 31 March."})),
                ("tasks__report", json!({"unit": "U-2", "state": "review", "report": "April: 900 EUR, due 30 April."})),
                ("tasks__report", json!({"unit": "U-3", "state": "blocked", "report": "May's invoice is not in the drive.", "endTurn": true})),
            ]),
            // Mira's turn, started by Theo's posts.
            reply("@theo thanks, I will judge them shortly."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the invoices summarised")
        .await;
    h.wait_post(&square, "mira", "I will judge them shortly", since)
        .await;
    let store = store(&h);
    for (id, creator, assignee, state) in [
        (1, "mira", "theo", "review"),
        (2, "mira", "theo", "review"),
        (3, "mira", "theo", "blocked"),
        (4, "theo", "mira", "assigned"),
        (5, "theo", "mira", "assigned"),
    ] {
        let unit = store.unit(id).expect("query").expect("the unit");
        assert_eq!(
            (
                unit.creator.as_str(),
                unit.assignee.as_str(),
                unit.state.as_str()
            ),
            (creator, assignee, state),
            "U-{id}"
        );
    }
    let open_work = shown(&h, "U-5 (Theo the Operator assigned it to you");
    for label in ["U-1", "U-2", "U-3", "U-4", "U-5"] {
        assert!(open_work.contains(label), "{label} listed: {open_work}");
    }
    let theo = store.turns_of("theo", &square).expect("turns");
    assert_eq!(theo[0].exit_kind.as_deref(), Some("completed"));
    // The units were handed at depths 0 (Mira's) and 1 (Theo's).
    let depth = |turn: &str| {
        store
            .lineage_of(turn)
            .expect("query")
            .expect("lineage")
            .depth
    };
    let mira = store.turns_of("mira", &square).expect("turns");
    let first = mira
        .iter()
        .min_by_key(|t| t.started_at)
        .expect("mira's first turn");
    assert_eq!(depth(&first.id), 0);
    assert_eq!(depth(&theo[0].id), 1);
    assert_eq!(
        store
            .unit(1)
            .expect("query")
            .expect("U-1")
            .assigning_turn_id,
        first.id
    );
    assert_eq!(
        store
            .unit(4)
            .expect("query")
            .expect("U-4")
            .assigning_turn_id,
        theo[0].id
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_an_open_work_line_says_the_assignee_is_waiting_on_a_person_since_its_question() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[assign("theo", "A summary of the March invoice")]),
            reply("Handed to Theo."),
            // Theo parks on a question to the person the work descends from.
            calls(&[(
                "ask__human",
                json!({"question": "Which folder holds the March invoice?"}),
            )]),
            // Ana asks Mira while Theo waits on her.
            reply("Theo is waiting on your answer about the folder."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    completions_reach(&h, 3).await;
    // The question is up once Theo's turn has parked on it.
    for _ in 0..200 {
        let parked = store(&h)
            .turns_of("theo", &square)
            .expect("turns")
            .first()
            .is_some_and(|t| store(&h).parked_since(&t.id).ok().flatten().is_some());
        if parked {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    h.say("ana", &square, "@mira how is the summary going?")
        .await;
    h.wait_post(&square, "mira", "Theo is waiting on your answer", since)
        .await;
    let waiting = shown(&h, "Theo the Operator is waiting on a person since");
    assert!(waiting.contains("U-1"), "{waiting}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_an_open_work_line_says_the_assignee_has_had_no_turn_here_since_the_unit_last_changed()
 {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            // Theo's turn fails: his queue stands until a person posts to
            // him (§7.1), so a colleague's mention starts no turn of his.
            Scripted {
                fail: Some(Failure {
                    status: Some(401),
                    ..Default::default()
                }),
                ..Default::default()
            },
            calls(&[assign("theo", "A summary of the March invoice")]),
            reply("Handed to Theo."),
            // Ana asks Mira again; Theo has not run since the assignment.
            reply("Theo has not started on it yet."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@theo check the shared drive").await;
    h.wait_post(&square, "theo", "refused the credential", since)
        .await;
    ended_turn(&h, "theo", &square).await;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "Handed to Theo.", since).await;
    // The assignment joins Theo's standing queue, acknowledged; no turn.
    let assignment = store(&h)
        .unit(1)
        .expect("query")
        .expect("U-1")
        .assignment_post_id;
    h.wait_reaction(&assignment, "theo", "eyes").await;
    h.say("ana", &square, "@mira how is the summary going?")
        .await;
    h.wait_post(&square, "mira", "Theo has not started", since)
        .await;

    let line = shown(
        &h,
        "Theo the Operator has had no turn here since the unit last changed",
    );
    assert!(line.contains("U-1"), "{line}");
    assert_eq!(
        store(&h).turns_of("theo", &square).expect("turns").len(),
        1,
        "Theo's only turn is the failed one, before the assignment"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_an_open_work_line_notes_a_turn_of_the_other_party_begun_before_the_unit_last_changed()
 {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[assign("theo", "A summary of the March invoice")]),
            reply("Handed to Theo."),
            // Theo's turn, held, then reporting and ending at the report.
            Scripted {
                hold: Some("theo-report".into()),
                ..calls(&[(
                    "tasks__report",
                    json!({"unit": "U-1", "state": "review", "report": "Amount 1,200 EUR, due 31 March.", "endTurn": true}),
                )])
            },
            // Ana starts Mira again while Theo works: her turn begins before
            // the report changes the unit, and is still running after it.
            Scripted {
                text: Some("Theo is on it.".into()),
                hold: Some("mira-busy".into()),
                ..Default::default()
            },
            // Ana asks Theo once he has reported.
            reply("It is with Mira for review."),
            // Mira's turn started by the report, once her running one ended.
            reply("@theo thanks, I will judge it shortly."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    completions_reach(&h, 3).await;
    h.say("ana", &square, "@mira is Theo on the summary?").await;
    completions_reach(&h, 4).await;
    h.model.sim.release("theo-report");
    ended_turn(&h, "theo", &square).await;
    let unit = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(unit.state.as_str(), "review");
    h.say("ana", &square, "@theo is the summary done?").await;
    h.wait_post(&square, "theo", "It is with Mira for review.", since)
        .await;

    let line = shown(&h, "Mira is working here since");
    assert!(
        line.contains("in a turn begun before the unit last changed") && line.contains("U-1"),
        "{line}"
    );
    h.model.sim.release("mira-busy");
    h.wait_post(&square, "mira", "I will judge it shortly", since)
        .await;
}
