//! Work units as the turn runner sees them (§3.15): whether a turn owes a
//! reply, the `endTurn` gate of `tasks::assign` and `tasks::report`, the
//! open-unit note on a status post, and an assignment refused at a loop
//! limit before its post.

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{
    calls, completions_reach, ended_turn, reply, store, tool_results, turn_requests, with_tasks,
};
use model_sim::script::Scripted;
use serde_json::json;

fn assign_to(assignee: &str, end_turn: bool) -> serde_json::Value {
    json!({
        "assignee": assignee,
        "outcome": "A one-paragraph summary of the March invoice",
        "criteria": "Names the amount and the due date",
        "context": "The invoice is in the shared drive.",
        "endTurn": end_turn
    })
}

/// The `note` events of a turn: the runner's record of an `endTurn` ask.
fn end_turn_notes(h: &Harness, turn_id: &str) -> Vec<String> {
    store(h)
        .turn_events(turn_id)
        .expect("query")
        .into_iter()
        .filter(|e| e.kind.as_str() == "note")
        .filter_map(|e| e.detail)
        .filter(|d| d.contains("end_turn"))
        .collect()
}

/// The turns of `agent` here, oldest first.
fn turns(h: &Harness, agent: &str, channel: &str) -> Vec<collegium_control::store::TurnRecord> {
    let mut turns = store(h).turns_of(agent, channel).expect("query");
    turns.sort_by_key(|t| t.started_at);
    turns
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_end_turn_is_refused_while_a_persons_post_is_answered_and_granted_where_nothing_is_owed()
 {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            // Mira's turn answers Ana's post: it owes her a reply.
            calls(&[("tasks__assign", assign_to("theo", true))]),
            reply("I handed the summary to Theo."),
            // Theo's turn answers only the assignment: it owes nothing once
            // the report is made, so the ask ends it at the report.
            calls(&[("tasks__report", json!({"unit": "U-1", "state": "review", "report": "Amount 1,200 EUR, due 31 March.", "endTurn": true}))]),
            // Mira's turn, started by the report.
            calls(&[("tasks__close", json!({"unit": "U-1", "state": "done", "verdict": "Delivered: amount and due date named."}))]),
            reply("The summary is in: 1,200 EUR due 31 March."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "The summary is in", since)
        .await;
    ended_turn(&h, "mira", &square).await;

    // Refused: the model is told why, and the turn goes on to its reply.
    let requests = turn_requests(&h);
    let told = requests
        .iter()
        .flat_map(e2e::scenario::after_framework)
        .find(|m| m.contains("endTurn was refused"))
        .expect("the refusal reaches the model");
    assert!(
        told.contains("this turn owes a reply") && told.contains("it answers a post of"),
        "{told}"
    );
    let mira = turns(&h, "mira", &square);
    assert!(
        end_turn_notes(&h, &mira[0].id)[0].contains("\"refused\""),
        "the trace shows a refused endTurn"
    );
    // The assignment's result carried no no-reply note: Ana is owed one.
    let first_results = tool_results(&requests[1]);
    assert!(
        !first_results.iter().any(|r| r.contains("owes no reply")),
        "{first_results:?}"
    );

    // Granted: Theo's turn ended at its report, with no reply.
    let theo = turns(&h, "theo", &square);
    assert_eq!(theo.len(), 1);
    assert_eq!(theo[0].exit_kind.as_deref(), Some("completed"));
    assert!(end_turn_notes(&h, &theo[0].id)[0].contains("\"granted\""));
    let result = store(&h)
        .turn_events(&theo[0].id)
        .expect("query")
        .into_iter()
        .find(|e| e.kind.as_str() == "result")
        .and_then(|e| e.content)
        .expect("the report's result");
    assert!(
        result.contains("This turn owes no reply and no unit a move"),
        "{result}"
    );
    let unit = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(unit.state.as_str(), "done");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_an_assignment_at_the_chain_limit_is_refused_before_its_post() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0\nchain_limit = 1", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign_to("theo", false))]),
            reply("I could not hand it on; I will do it myself."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "I could not hand it on", since)
        .await;
    let requests = turn_requests(&h);
    let refused = tool_results(requests.last().expect("mira's second completion"))
        .pop()
        .unwrap_or_default();
    assert!(refused.contains("chain limit"), "{refused}");
    assert!(
        store(&h).unit(1).expect("query").is_none(),
        "nothing recorded"
    );
    assert!(
        !h.posts(&square)
            .await
            .iter()
            .any(|p| p.message.contains("Work unit U-1")),
        "nothing posted"
    );
}

/// The assignee's turn, held mid-completion, calling `tasks::report` once
/// released.
fn held_report(name: &str) -> Scripted {
    Scripted {
        hold: Some(name.into()),
        ..calls(&[(
            "tasks__report",
            json!({"unit": "U-1", "state": "review", "report": "Amount 1,200 EUR, due 31 March."}),
        )])
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_close_racing_the_assignees_running_turn_is_refused_and_its_report_lands() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign_to("theo", false))]),
            reply("I handed the summary to Theo."),
            // Theo's turn takes the lane and is still generating.
            held_report("theo-working"),
            // A person starts Mira again, and she tries to close U-1.
            calls(&[(
                "tasks__close",
                json!({"unit": "U-1", "state": "cancelled", "verdict": "No longer needed."}),
            )]),
            reply("Theo is still on it; I will let him finish."),
            // Theo, released, reports; the report lands.
            reply("Reported."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    completions_reach(&h, 3).await;
    h.say("ana", &square, "@mira actually, drop the summary")
        .await;
    h.wait_post(&square, "mira", "Theo is still on it", since)
        .await;
    let requests = turn_requests(&h);
    let refused = tool_results(requests.last().expect("mira's reply completion"))
        .pop()
        .unwrap_or_default();
    assert!(
        refused.contains("is still running and may be writing the report"),
        "{refused}"
    );
    h.model.sim.release("theo-working");
    h.wait_post(&square, "theo", "Reported.", since).await;
    let unit = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(
        unit.state.as_str(),
        "review",
        "the report was not pre-empted"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_after_a_sigkill_the_boot_notice_names_the_unit_the_abandoned_turn_was_working() {
    let (h, mut daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign_to("theo", false))]),
            reply("I handed the summary to Theo."),
            // Theo asks Mira, the unit's creator, for a piece of it (a unit
            // post: the turn has effects), then never finishes.
            calls(&[("tasks__assign", assign_to("mira", false))]),
            Scripted {
                text: Some("Never finished.".into()),
                hold: Some("theo-crash".into()),
                ..Default::default()
            },
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    completions_reach(&h, 4).await;
    assert!(store(&h).unit(2).expect("query").is_some(), "U-2 recorded");
    daemon.child.kill().expect("SIGKILL");
    let _ = daemon.child.wait();

    h.model.sim.script("demo-model", vec![]);
    let mut again = h.daemon();
    again.wait_for("agents are listening");
    let notice = h
        .wait_post(&square, "collegium", "Collegium restarted", since)
        .await;
    assert!(
        notice
            .message
            .contains("U-1 from Mira stays assigned to Theo the Operator"),
        "{}",
        notice.message
    );
    assert!(!notice.message.contains("@mira") && !notice.message.contains("@theo"));
    h.model.sim.release("theo-crash");
}
