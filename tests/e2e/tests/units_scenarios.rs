//! The last of §3.15's sentences, each through the real daemon: a close
//! after only a search hit is refused (a search hit is not a read) until
//! `tasks::read` shows the report; `tasks::read` of a report since
//! forgotten (§8.4) says so and shows nothing of it; and the three
//! selections by which a context-exhausted assignee's unit is reported
//! blocked with fixed text.

use e2e::people::now_ms;
use e2e::scenario::{calls, ended_turn, reply, square_with, store, tool_results, turn_requests};
use e2e::{Daemon, Harness};
use model_sim::script::Scripted;
use serde_json::json;

/// The fixed text of the framework's out-of-context report (§3.15).
const OUT_OF_CONTEXT: &str = "The assignee's turn ran out of context before it could report.";

/// As `with_tasks`, Mira holding `conversations` too, so her turns can
/// search (§3.8): the toolset is daemon-served but granted, not core.
async fn with_tasks_and_search(limits: &str) -> (Harness, Daemon, String) {
    let h = Harness::start().await;
    h.limits(limits);
    h.grant_mira(&["workspace", "tasks", "conversations"]);
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text.replacen("grants = [\"ask\"]", "grants = [\"ask\", \"tasks\"]", 1);
    std::fs::write(&h.config, text).expect("write config");
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon_from(std::process::Command::new(e2e::binary("collegium")));
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    (h, daemon, square)
}

/// The last tool result a request carried: the call its completion answers.
fn last_result(request: &serde_json::Value) -> String {
    tool_results(request).pop().unwrap_or_default()
}

fn assign(outcome: &str) -> serde_json::Value {
    json!({
        "assignee": "theo",
        "outcome": outcome,
        "criteria": "Names the amount and the due date",
        "context": "The invoices are in the shared drive."
    })
}

/// A completion whose text alone outgrows an 8000-token ceiling, so the
/// turn's next request exhausts its context (§7.1).
fn exhausting() -> Scripted {
    let mut big = calls(&[("tasks__read", json!({"unit": "U-1"}))]);
    big.text = Some("a thought that goes on ".repeat(4_000));
    big
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_a_close_after_only_a_search_hit_is_refused_until_tasks_read_shows_the_report() {
    // A window too small to hold Theo's long reply holds nothing older,
    // so Mira's second turn sees the report only through the search.
    let (h, _daemon, square) =
        with_tasks_and_search("debounce_window_ms = 0\ncontext_budget_tokens = 1000").await;
    let long = "The invoice details follow. ".repeat(250);
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign("The March invoice summarised"))]),
            reply("Handed over."),
            calls(&[(
                "tasks__report",
                json!({"unit": "U-1", "state": "review", "report": "Summary ready: 1,200 EUR marmalade."}),
            )]),
            reply(&long),
            // Mira's turn started by the report: it answers that post (so
            // a search there would never return it), and replies to nobody.
            reply("Noted."),
            reply("Noted."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "Noted.", since).await;
    ended_turn(&h, "mira", &square).await;

    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("conversations__search", json!({"phrase": "marmalade"}))]),
            calls(&[(
                "tasks__close",
                json!({"unit": "U-1", "state": "done", "verdict": "Good."}),
            )]),
            calls(&[("tasks__read", json!({"unit": "U-1"}))]),
            calls(&[(
                "tasks__close",
                json!({"unit": "U-1", "state": "done", "verdict": "Good."}),
            )]),
            reply("Closed it."),
        ],
    );
    let report = h
        .posts(&square)
        .await
        .into_iter()
        .find(|p| p.message.contains("Summary ready: 1,200 EUR marmalade."))
        .expect("the report post");
    let asked = now_ms() - 1;
    h.say("ana", &square, "@mira close U-1 once Theo's summary is in")
        .await;
    h.wait_post(&square, "mira", "Closed it.", asked).await;

    let requests = turn_requests(&h);
    let n = requests.len();
    let (found, refused, read, closed) = (
        last_result(&requests[n - 4]),
        last_result(&requests[n - 3]),
        last_result(&requests[n - 2]),
        last_result(&requests[n - 1]),
    );
    assert!(
        found.contains(&report.id) && found.contains("marmalade"),
        "the report post is a search hit: {found}"
    );
    assert!(
        refused.contains("this turn has not read its latest report")
            && refused.contains("tasks::read")
            && refused.contains("a search hit does not count as read"),
        "{refused}"
    );
    assert!(
        read.contains("Summary ready: 1,200 EUR marmalade."),
        "{read}"
    );
    assert!(closed.starts_with("U-1 is closed as done"), "{closed}");
    let unit = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(unit.state.as_str(), "done");
    assert_eq!(unit.closed_from_state.map(|s| s.as_str()), Some("review"));
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_tasks_read_of_a_forgotten_report_says_it_was_forgotten_and_does_not_show_it() {
    let (h, _daemon, square) = with_tasks_and_search("debounce_window_ms = 0").await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign("The March invoice summarised"))]),
            reply("Handed over."),
            calls(&[(
                "tasks__report",
                json!({"unit": "U-1", "state": "review", "report": "The code word is zebra."}),
            )]),
            reply("Reported."),
            reply("Noted."),
            reply("Noted."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "Noted.", since).await;
    ended_turn(&h, "mira", &square).await;
    let report = h
        .posts(&square)
        .await
        .into_iter()
        .find(|p| p.message.contains("The code word is zebra."))
        .expect("the report post");

    h.command("ana", &square, &format!("/collegium forget {}", report.id))
        .await;
    h.wait_post(&square, "collegium", "agents forgot post", since)
        .await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__read", json!({"unit": "U-1"}))]),
            reply("Theo's report was forgotten."),
        ],
    );
    let asked = now_ms() - 1;
    h.say("ana", &square, "@mira what did Theo report on U-1?")
        .await;
    h.wait_post(&square, "mira", "Theo's report was forgotten.", asked)
        .await;
    let read = last_result(&turn_requests(&h).pop().expect("a completion"));
    assert!(
        read.contains(&format!(
            "The latest report, post {}, was forgotten (",
            report.id
        )) && read.contains("so it is not shown"),
        "{read}"
    );
    assert!(
        read.starts_with("U-1 — review") && read.contains("Outcome: The March invoice summarised"),
        "the unit itself is still shown: {read}"
    );
    assert!(
        !read.contains("zebra"),
        "the report's text is not shown: {read}"
    );
}

/// Mira hands Theo U-1 (at `since`); Theo's turn replies without a move,
/// twice, so the reply posts and the unit stays assigned to him.
async fn theo_holds(h: &Harness, square: &str, outcome: &str, ask: &str, said: &str) {
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign(outcome))]),
            reply("Handed over."),
            reply(said),
            reply(said),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", square, ask).await;
    h.wait_post(square, "theo", said, since).await;
    ended_turn(h, "theo", square).await;
}

/// The blocked reports posted under Theo's account, and their units.
async fn blocked_posts(h: &Harness, square: &str) -> Vec<String> {
    h.posts(square)
        .await
        .into_iter()
        .filter(|p| p.message.contains(" reported blocked to @mira"))
        .map(|p| p.message)
        .collect()
}

/// The framework's blocked report on unit `n`: a fixed text, not the model's.
fn assert_reported_blocked(h: &Harness, n: i64) {
    let store = store(h);
    let unit = store.unit(n).expect("query").expect("the unit");
    assert_eq!(unit.state.as_str(), "blocked");
    let report = store
        .unit_report(unit.latest_report_id.expect("a report"))
        .expect("query")
        .expect("the report");
    assert!(report.by_framework, "the framework reported it");
    assert!(report.body.starts_with(OUT_OF_CONTEXT), "{}", report.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_out_of_context_reports_blocked_the_unit_whose_assignment_the_turn_answers() {
    let (h, _daemon, square) =
        with_tasks_and_search("debounce_window_ms = 0\nturn_ceiling_tokens = 8000").await;
    theo_holds(
        &h,
        &square,
        "The March invoice summarised",
        "@mira have Theo summarise the March invoice",
        "On it.",
    )
    .await;
    // U-2's assignment starts Theo's next turn, which runs out of context:
    // U-2 is the unit it answers; U-1, held from before, is not reported.
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("tasks__assign", assign("The April invoice summarised"))]),
            reply("Handed over again."),
            exhausting(),
            reply("Noted."),
            reply("Noted."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira have Theo do April too").await;
    let posted = h
        .wait_post(&square, "theo", "**Work unit U-2** reported blocked", since)
        .await;
    assert!(
        posted.message.contains(OUT_OF_CONTEXT) && posted.message.contains("@mira"),
        "{}",
        posted.message
    );
    h.wait_post(&square, "mira", "Noted.", since).await;
    assert_reported_blocked(&h, 2);
    let kept = store(&h).unit(1).expect("query").expect("U-1");
    assert_eq!(kept.state.as_str(), "assigned", "U-1 is not guessed at");
    assert_eq!(blocked_posts(&h, &square).await.len(), 1, "U-2 alone");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_out_of_context_falls_back_to_the_only_unit_the_assignee_holds() {
    let (h, _daemon, square) =
        with_tasks_and_search("debounce_window_ms = 0\nturn_ceiling_tokens = 8000").await;
    theo_holds(
        &h,
        &square,
        "The March invoice summarised",
        "@mira have Theo summarise the March invoice",
        "On it.",
    )
    .await;
    // Ana's question starts Theo's turn: no assignment among the posts it
    // answers, and U-1 the only unit he holds, so U-1 is reported blocked.
    h.model.sim.script(
        "demo-model",
        vec![exhausting(), reply("Noted."), reply("Noted.")],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@theo how is the invoice going?")
        .await;
    let posted = h
        .wait_post(&square, "theo", "**Work unit U-1** reported blocked", since)
        .await;
    assert!(
        posted.message.contains(OUT_OF_CONTEXT),
        "{}",
        posted.message
    );
    h.wait_post(&square, "mira", "Noted.", since).await;
    assert_reported_blocked(&h, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_15_out_of_context_reports_nothing_where_several_units_are_held_and_none_answered() {
    let (h, _daemon, square) =
        with_tasks_and_search("debounce_window_ms = 0\nturn_ceiling_tokens = 8000").await;
    theo_holds(
        &h,
        &square,
        "The March invoice summarised",
        "@mira have Theo summarise the March invoice",
        "On it.",
    )
    .await;
    theo_holds(
        &h,
        &square,
        "The April invoice summarised",
        "@mira have Theo do April too",
        "On April too.",
    )
    .await;
    // Theo holds two units and Ana's question names neither: the framework
    // does not guess which work the turn was doing, and reports none.
    h.model.sim.script("demo-model", vec![exhausting()]);
    let since = now_ms() - 1;
    h.say("ana", &square, "@theo how are the invoices going?")
        .await;
    h.wait_post(&square, "theo", "against a ceiling of 8000", since)
        .await;
    let turn = ended_turn(&h, "theo", &square).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("context_ceiling"));
    assert!(
        blocked_posts(&h, &square).await.is_empty(),
        "nothing is reported blocked"
    );
    let store = store(&h);
    for n in [1, 2] {
        let unit = store.unit(n).expect("query").expect("the unit");
        assert_eq!(unit.state.as_str(), "assigned", "U-{n} stays assigned");
        assert!(unit.latest_report_id.is_none(), "U-{n} has no report");
    }
}
