//! Work units (§3.15): a unit in review takes no second report, a
//! cancelled unit is not continued, and a unit closed as done is linked by
//! the unit that follows it without closing it again.

use e2e::people::now_ms;
use e2e::scenario::{calls, reply, store, tool_results, turn_requests, with_tasks};
use serde_json::json;

fn assign(outcome: &str) -> serde_json::Value {
    json!({
        "assignee": "theo",
        "outcome": outcome,
        "criteria": "Names the amount and the due date",
    })
}

fn report(unit: &str, end_turn: bool) -> (&'static str, serde_json::Value) {
    (
        "tasks__report",
        json!({"unit": unit, "state": "review", "report": "Amount 1,200 EUR, due 31 March.", "endTurn": end_turn}),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_second_report_in_review_is_refused_naming_the_creator_and_both_ways_on() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign("A summary of the March invoice"))]),
            reply("Handed to Theo."),
            calls(&[report("U-1", false)]),
            calls(&[report("U-1", false)]),
            reply("@mira one more thing: the invoice was paid late."),
            // Mira's turn, started by Theo's posts.
            calls(&[(
                "tasks__close",
                json!({"unit": "U-1", "state": "done", "verdict": "Delivered."}),
            )]),
            reply("The summary is in."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "The summary is in.", since)
        .await;
    let refused = turn_requests(&h)
        .iter()
        .filter_map(|r| tool_results(r).pop())
        .find(|r| r.contains("takes no second report"))
        .expect("the second report's refusal");
    assert!(
        refused.contains("is with its creator, Mira")
            && refused.contains("hands it back as a fresh unit with corrected criteria")
            && refused.contains("closes it as cancelled with the reason")
            && refused.contains("@mira"),
        "{refused}"
    );
    let reports = h
        .posts(&square)
        .await
        .into_iter()
        .filter(|p| {
            p.message
                .starts_with("**Work unit U-1** reported for review")
        })
        .count();
    assert_eq!(reports, 1, "the refused report posted nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_cancelled_unit_is_not_continued_and_a_done_one_is_linked_without_closing_again() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[
                ("tasks__assign", assign("The March invoice summary")),
                ("tasks__assign", assign("The April invoice summary")),
            ]),
            reply("Both handed to Theo."),
            calls(&[report("U-1", false), report("U-2", true)]),
            // Mira's turn, started by the reports: one cancelled, one done.
            calls(&[
                (
                    "tasks__close",
                    json!({"unit": "U-1", "state": "cancelled", "verdict": "March is no longer needed."}),
                ),
                (
                    "tasks__close",
                    json!({"unit": "U-2", "state": "done", "verdict": "Delivered."}),
                ),
            ]),
            calls(&[(
                "tasks__assign",
                json!({"assignee": "theo", "outcome": "March again", "criteria": "The same", "follows": "U-1"}),
            )]),
            calls(&[(
                "tasks__assign",
                json!({"assignee": "theo", "outcome": "The April totals by client", "criteria": "One line per client", "follows": "U-2", "endTurn": true}),
            )]),
            // Theo's turn on U-3, then Mira's verdict.
            calls(&[report("U-3", true)]),
            calls(&[(
                "tasks__close",
                json!({"unit": "U-3", "state": "done", "verdict": "Delivered."}),
            )]),
            reply("All done."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the invoices summarised")
        .await;
    h.wait_post(&square, "mira", "All done.", since).await;

    let refused = turn_requests(&h)
        .iter()
        .filter_map(|r| tool_results(r).pop())
        .find(|r| r.contains("a cancelled unit is not continued"))
        .expect("the refusal");
    assert!(refused.contains("Nothing was posted"), "{refused}");
    let store = store(&h);
    assert!(store.unit(4).expect("query").is_none(), "no fourth unit");
    let linked = store.unit(2).expect("query").expect("U-2");
    assert_eq!(
        (linked.state.as_str(), linked.followed_by),
        ("done", Some(3))
    );
    let verdict = linked.verdict.as_deref().unwrap_or_default();
    assert!(
        verdict.starts_with("Delivered.") && verdict.contains("U-3"),
        "the creator's own verdict is kept and names the successor: {verdict}"
    );
    let next = store.unit(3).expect("query").expect("U-3");
    assert_eq!(next.follows, Some(2));
    let cancelled = store.unit(1).expect("query").expect("U-1");
    assert_eq!(
        (cancelled.state.as_str(), cancelled.followed_by),
        ("cancelled", None)
    );
    assert!(
        h.posts(&square).await.iter().any(|p| p
            .message
            .contains("It continues U-2, already closed as done")),
        "the link's post"
    );
}
