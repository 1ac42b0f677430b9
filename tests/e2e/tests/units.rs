//! Work units (§3.15): an assignment is a post addressing its assignee and
//! then a record; the assignee reports, the creator reads and closes; the
//! authority is read off the record, and every refusal is a result the
//! model reads naming what to do instead.

use e2e::people::now_ms;
use e2e::scenario::{
    calls, ended_turn, framework_message, reply, store, tool_results, turn_requests, with_tasks,
};
use serde_json::json;

/// The last tool result a request carried: the call its completion answers.
fn last_result(request: &serde_json::Value) -> String {
    tool_results(request).pop().unwrap_or_default()
}

fn assign_to(assignee: &str) -> serde_json::Value {
    json!({
        "assignee": assignee,
        "outcome": "A one-paragraph summary of the March invoice",
        "criteria": "Names the amount and the due date",
        "context": "The invoice is in the shared drive."
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_an_assignment_starts_its_assignee_whose_report_its_creator_reads_and_closes() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            // Mira's turn, started by Ana.
            calls(&[("tasks__assign", assign_to("theo"))]),
            reply("I handed the summary to Theo."),
            // Theo's turn, started by the assignment post once Mira's ended.
            calls(&[("tasks__close", json!({"unit": "U-1", "state": "done", "verdict": "I did it."}))]),
            calls(&[("tasks__report", json!({"unit": "U-1", "state": "review", "report": "Amount 1,200 EUR, due 31 March."}))]),
            reply("Reported."),
            // Mira's turn, started by the report.
            calls(&[("tasks__read", json!({"unit": "U-1"}))]),
            calls(&[("tasks__close", json!({"unit": "U-1", "state": "done", "verdict": "Delivered: amount and due date named."}))]),
            reply("The summary is in: 1,200 EUR due 31 March."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "The summary is in", since)
        .await;

    let posts = h.posts(&square).await;
    let assignment = posts
        .iter()
        .find(|p| p.message.starts_with("**Work unit U-1** for @theo"))
        .expect("the assignment is a post under Mira's account");
    assert!(
        assignment
            .message
            .contains("**Criteria:** Names the amount"),
        "{}",
        assignment.message
    );
    let report = posts
        .iter()
        .find(|p| {
            p.message
                .starts_with("**Work unit U-1** reported for review to @mira")
        })
        .expect("the report addresses its creator");
    let close = posts
        .iter()
        .find(|p| p.message.starts_with("**Work unit U-1** closed as done"))
        .expect("the close is a post");
    assert!(
        !close.message.contains('@'),
        "a close addresses nobody: {}",
        close.message
    );

    let requests = turn_requests(&h);
    // Mira's assign result says the post is up and Theo's turn waits.
    let assigned = last_result(&requests[1]);
    assert!(
        assigned.starts_with("U-1 is assigned to Theo the Operator: its post is published")
            && assigned.contains("turn waits for this one to end"),
        "{assigned}"
    );
    // Theo sees the unit under Open work, and cannot close it.
    let theo_first = framework_message(&requests[2]);
    assert!(
        theo_first.contains("- U-1 (Mira assigned it to you at")
            && theo_first.contains("awaiting your move"),
        "{theo_first}"
    );
    let refused = last_result(&requests[3]);
    assert!(refused.contains("the assignee cannot close"), "{refused}");
    let reported = last_result(&requests[4]);
    assert!(
        reported.starts_with("U-1 is reported for review: its post is published"),
        "{reported}"
    );
    // Mira reads the unit whole, the report verbatim, then closes.
    let read = last_result(&requests[6]);
    assert!(
        read.contains("Outcome: A one-paragraph summary")
            && read.contains(&format!("post {}", report.id))
            && read.contains("Amount 1,200 EUR, due 31 March."),
        "{read}"
    );
    let closed = last_result(&requests[7]);
    assert!(
        closed.starts_with("U-1 is closed as done")
            && closed.contains("Nothing starts another turn of yours here"),
        "{closed}"
    );
    ended_turn(&h, "mira", &square).await;
    let unit = store(&h).unit(1).expect("query").expect("the unit");
    assert_eq!(unit.state.as_str(), "done");
    assert_eq!(unit.assignment_post_id, assignment.id);
    assert_eq!(unit.close_post_id.as_deref(), Some(close.id.as_str()));
    assert_eq!(unit.closed_from_state.map(|s| s.as_str()), Some("review"));
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_report_refused_because_its_unit_closed_names_who_closed_it_when_and_how() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign_to("theo"))]),
            // Still assigned, and no turn of Theo's has opened since: it may close.
            calls(&[(
                "tasks__close",
                json!({"unit": "U-1", "state": "cancelled", "verdict": "Ana no longer needs it."}),
            )]),
            reply("Cancelled the summary."),
            calls(&[(
                "tasks__report",
                json!({"unit": "U-1", "state": "review", "report": "Here it is."}),
            )]),
            reply("Noted."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "theo", "Noted.", since).await;
    let requests = turn_requests(&h);
    let refused = last_result(&requests[4]);
    assert!(
        refused.contains("U-1 is closed as cancelled: Mira closed it at")
            && refused.contains("with the verdict “Ana no longer needs it.”")
            && refused.contains("goes to its creator, Mira, in a post that mentions @mira"),
        "{refused}"
    );
    assert!(
        !h.posts(&square)
            .await
            .iter()
            .any(|p| p.message.contains("reported for review")),
        "a refused report posts nothing"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_an_assignment_to_an_undeclared_colleague_is_refused_before_its_post() {
    let (h, _daemon, square) =
        with_tasks("debounce_window_ms = 0", Some("colleagues = [\"theo\"]")).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign_to("ana"))]),
            reply("I could not hand it over."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira have Ana do it").await;
    h.wait_post(&square, "mira", "I could not hand it over.", since)
        .await;
    let refused = last_result(&turn_requests(&h).pop().expect("completions"));
    assert!(
        refused.contains("you assign units only to your declared colleagues, and `ana` is not one")
            && refused.contains("Theo the Operator (assignee `theo`)"),
        "{refused}"
    );
    assert!(
        !h.posts(&square)
            .await
            .iter()
            .any(|p| p.message.contains("**Work unit")),
        "nothing is posted"
    );
    assert!(store(&h).unit(1).expect("query").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_close_on_a_report_the_turn_never_read_is_refused_until_tasks_read_shows_it() {
    // A window too small to hold Theo's long reply holds nothing older,
    // so the report is not read by Mira's turn until tasks::read shows it.
    let (h, _daemon, square) =
        with_tasks("debounce_window_ms = 0\ncontext_budget_tokens = 1000", None).await;
    let long = "The invoice details follow. ".repeat(250);
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign_to("theo"))]),
            reply("Handed over."),
            calls(&[(
                "tasks__report",
                json!({"unit": "U-1", "state": "review", "report": "Summary ready."}),
            )]),
            reply(&long),
            calls(&[(
                "tasks__close",
                json!({"unit": "U-1", "state": "done", "verdict": "Good."}),
            )]),
            calls(&[("tasks__read", json!({"unit": "U-1"}))]),
            calls(&[(
                "tasks__close",
                json!({"unit": "U-1", "state": "done", "verdict": "Good."}),
            )]),
            reply("Closed."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "Closed.", since).await;
    let lasts: Vec<String> = turn_requests(&h).iter().map(last_result).collect();
    let refused_at = lasts
        .iter()
        .position(|r| {
            r.contains("this turn has not read its latest report") && r.contains("tasks::read")
        })
        .unwrap_or_else(|| panic!("the close is refused: {lasts:?}"));
    let read_at = lasts
        .iter()
        .position(|r| r.contains("Summary ready."))
        .expect("tasks::read showed the report");
    assert!(read_at > refused_at, "read after the refusal: {lasts:?}");
    assert!(
        lasts[read_at..]
            .iter()
            .any(|r| r.starts_with("U-1 is closed as done")),
        "{lasts:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_continuation_is_one_post_closing_the_unit_it_follows_and_assigning_the_next() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    let mut second = assign_to("theo");
    second["follows"] = json!("U-1");
    second["outcome"] = json!("The April invoice too");
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign_to("theo"))]),
            reply("Handed over."),
            calls(&[(
                "tasks__report",
                json!({"unit": "U-1", "state": "review", "report": "March done."}),
            )]),
            reply("Reported."),
            // The report is in Mira's window: read, so it may be continued.
            calls(&[("tasks__assign", second)]),
            reply("Next pass handed over."),
            calls(&[(
                "tasks__report",
                json!({"unit": "U-2", "state": "review", "report": "April done."}),
            )]),
            reply("Reported again."),
            // U-2's report awaits Mira's verdict and this reply reaches
            // nobody: sent back once (§3.15), then posted as it stands.
            reply("Both are in."),
            reply("Both are in."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the invoices summarised")
        .await;
    h.wait_post(&square, "mira", "Both are in.", since).await;
    let posts = h.posts(&square).await;
    let continuing = posts
        .iter()
        .find(|p| p.message.starts_with("**Work unit U-2** for @theo"))
        .expect("the continuation is one post");
    assert!(
        continuing
            .message
            .contains("It continues U-1, which closes as done, continued by U-2."),
        "{}",
        continuing.message
    );
    let store = store(&h);
    let first = store.unit(1).expect("query").expect("U-1");
    assert_eq!(first.state.as_str(), "done");
    assert_eq!(first.closed_by.map(|c| c.as_str()), Some("continuation"));
    assert_eq!(first.followed_by, Some(2));
    assert_eq!(first.linked_from_state.as_deref(), Some("review"));
    assert_eq!(first.verdict.as_deref(), Some("Continued by U-2."));
    assert_eq!(first.close_post_id.as_deref(), Some(continuing.id.as_str()));
    let next = store.unit(2).expect("query").expect("U-2");
    assert_eq!(next.follows, Some(1));
    assert_eq!(
        next.state.as_str(),
        "review",
        "the next pass took its own report"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_silent_reply_on_a_unit_still_assigned_is_sent_back_once_then_posts() {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign_to("theo"))]),
            reply("Handed over."),
            reply("On it, will look later."),
            reply("On it, will look later."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "theo", "On it, will look later.", since)
        .await;
    let requests = turn_requests(&h);
    let fed_back =
        e2e::scenario::after_framework(requests.last().expect("theo's second completion"));
    assert!(
        fed_back
            .iter()
            .any(|m| m.contains("you still hold U-1 from Mira in assigned")
                && m.contains("tasks::report")
                && m.contains("mentions @mira")),
        "{fed_back:?}"
    );
    let posted = h
        .posts(&square)
        .await
        .iter()
        .filter(|p| p.message == "On it, will look later.")
        .count();
    assert_eq!(posted, 1, "sent back once, then posted");
    ended_turn(&h, "theo", &square).await;
    let unit = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(unit.state.as_str(), "assigned", "the unit stays assigned");
    // The turn completed with the unit still assigned, its reminder spent:
    // its status post names the unit (§3.15).
    assert!(
        h.posts(&square).await.iter().any(|p| p
            .message
            .contains("⚑ U-1 from Mira is still assigned to Theo the Operator, with no report")),
        "the status post names the open unit"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_creators_silent_reply_on_a_report_awaiting_its_verdict_is_sent_back_once_then_posts()
 {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            // Mira hands the unit to Theo.
            calls(&[("tasks__assign", assign_to("theo"))]),
            reply("Handed over."),
            // Theo reports it for review.
            calls(&[("tasks__report", json!({"unit": "U-1", "state": "review", "report": "Amount 1,200 EUR, due 31 March."}))]),
            reply("Reported."),
            // Mira's turn, started by the report, replies to nobody twice.
            reply("Noted, thanks."),
            reply("Noted, thanks."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "Noted, thanks.", since).await;
    let requests = turn_requests(&h);
    let fed_back =
        e2e::scenario::after_framework(requests.last().expect("mira's second completion"));
    assert!(
        fed_back.iter().any(|m| m
            .contains("Theo the Operator's report on U-1 awaits your verdict")
            && m.contains("tasks::close")
            && m.contains("tasks::assign following U-1")
            && m.contains("mentions @theo")),
        "{fed_back:?}"
    );
    let posted = h
        .posts(&square)
        .await
        .iter()
        .filter(|p| p.message == "Noted, thanks.")
        .count();
    assert_eq!(posted, 1, "sent back once, then posted");
    ended_turn(&h, "mira", &square).await;
    let unit = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(unit.state.as_str(), "review", "the unit stays in review");
}
