//! A crash between a unit post and its record (§3.15): the post is up, the
//! record never written, so the change did not happen; the next report
//! finds the post and says so. The `test-hooks` build kills itself with
//! SIGKILL right after the post, as a crash would.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use e2e::people::now_ms;
use e2e::scenario::{calls, reply, store, with_tasks_from};
use model_sim::script::Scripted;
use serde_json::json;

const MIRA: &str = "You research.";
const THEO: &str = "You run operations.";
/// The phrase only Theo's report carries: the hook kills the daemon right
/// after the post holding it.
const REPORTED: &str = "Amount 1,200 EUR, due 31 March.";

fn report(end_turn: bool) -> Scripted {
    calls(&[(
        "tasks__report",
        json!({"unit": "U-1", "state": "review", "report": REPORTED, "endTurn": end_turn}),
    )])
}

/// Matched to its agent's prompt, so the boot's model check takes none.
fn by(prompt: &str, answer: Scripted) -> Scripted {
    Scripted {
        matches: Some(prompt.into()),
        ..answer
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_report_posted_without_its_record_is_named_by_the_next_report() {
    let mut launcher = Command::new(e2e::binary("collegium"));
    launcher.env("COLLEGIUM_TEST_KILL_AFTER_UNIT_POST", "1,200 EUR");
    let (h, mut daemon, square) = with_tasks_from("debounce_window_ms = 0", None, launcher).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "tasks__assign",
                json!({
                    "assignee": "theo",
                    "outcome": "A one-paragraph summary of the March invoice",
                    "criteria": "Names the amount and the due date",
                }),
            )]),
            reply("I handed the summary to Theo."),
            // Theo reports; the daemon dies between the post and its record.
            report(false),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    daemon.wait_for("test hook: SIGKILL between a unit post and its record");
    let status = daemon.child.wait().expect("the daemon's exit");
    assert_eq!(status.signal(), Some(9), "killed by SIGKILL: {status:?}");

    // The channel saw the report; the store has no record of it.
    let orphan = h.wait_post(&square, "theo", REPORTED, since).await;
    let unit = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(unit.state.as_str(), "assigned", "the report did not happen");

    // Restarted without the hook. The abandoned turn's report addressed
    // Mira, so her turn answers it (§7.3); she asks Theo to report again,
    // and his report names the post without its record.
    h.model.sim.script(
        "demo-model",
        vec![
            by(
                MIRA,
                reply("@theo your report on U-1 is not on its record; please report it again."),
            ),
            by(THEO, report(true)),
            by(MIRA, reply("@theo thanks, I will judge it shortly.")),
        ],
    );
    let mut again = h.daemon();
    again.wait_for("agents are listening");
    h.wait_post(&square, "mira", "I will judge it shortly", since)
        .await;

    // The report ended its turn (endTurn), so its result is in the trace.
    let mut theo = store(&h).turns_of("theo", &square).expect("turns");
    theo.sort_by_key(|t| t.started_at);
    assert_eq!(theo.len(), 2, "{theo:?}");
    assert_eq!(theo[0].exit_kind.as_deref(), Some("abandoned"));
    let named = store(&h)
        .turn_events(&theo[1].id)
        .expect("query")
        .into_iter()
        .filter(|e| e.kind.as_str() == "result")
        .filter_map(|e| e.content)
        .find(|r| r.contains("U-1 is reported for review"))
        .expect("the second report's result");
    assert!(
        named.contains(&format!("post {} (announcing U-1)", orphan.id))
            && named.contains("never recorded")
            && named.contains("so it did not happen"),
        "{named}"
    );
    let unit = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(
        unit.state.as_str(),
        "review",
        "the second report is recorded"
    );
    let recorded = store(&h)
        .unit_report(unit.latest_report_id.expect("a report"))
        .expect("query")
        .expect("the report");
    assert_ne!(
        recorded.post_id, orphan.id,
        "the record points at the new post"
    );
    // Noted as named, so no later report names it again.
    assert!(
        store(&h)
            .unrecorded_unit_posts(&square, "theo")
            .expect("query")
            .is_empty()
    );
}
