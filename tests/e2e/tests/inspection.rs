//! The inspection subcommands (§8.4) through the real command route:
//! `memory {agent}` with its operator prune, and `triggers {agent}`,
//! asserting what the invoker is answered and what the store then holds.

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{
    calls, ended_turn, reply, square_with, store, tool_results, turn_requests, with_tasks,
};
use serde_json::json;

/// A deployment whose @mira holds memory.
async fn deployment() -> (Harness, e2e::Daemon, String) {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    h.grant_mira(&["memory"]);
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    (h, daemon, square)
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_memory_lists_each_entry_and_an_operator_prune_deletes_it_without_the_seen_check() {
    let (h, _daemon, square) = deployment().await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "memory__write",
                json!({"description": "Office floor", "body": "The office is on floor 2"}),
            )]),
            reply("Noted."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira remember the office").await;
    h.wait_post(&square, "mira", "Noted.", since).await;
    let reference = store(&h).memories_of("mira").expect("memories")[0].reference();

    h.command("ana", &square, "/collegium memory").await;
    h.wait_ephemeral("ana", "/collegium memory {agent} prune {reference}")
        .await;
    h.command("ana", &square, "/collegium memory @mira").await;
    let listing = h
        .wait_ephemeral("ana", &format!("{reference} — Office floor"))
        .await;
    let text = listing.to_string();
    assert!(
        text.contains("24 characters") && text.contains("never revised"),
        "{text}"
    );

    // No turn of mira's read the entry: a model's delete would be refused
    // (§3.6); a person's prune is not (§8.4).
    h.command(
        "ana",
        &square,
        &format!("/collegium memory mira prune {reference}"),
    )
    .await;
    let notice = h
        .wait_post(&square, "collegium", "was deleted", since)
        .await;
    assert!(
        notice.message.contains("@ana's command") && notice.message.contains(&reference),
        "{}",
        notice.message
    );
    assert!(store(&h).memories_of("mira").expect("memories").is_empty());

    h.command(
        "ana",
        &square,
        &format!("/collegium memory mira prune {reference}"),
    )
    .await;
    h.wait_ephemeral("ana", "Nothing was deleted from").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_triggers_of_an_agent_with_none_outstanding_say_so_and_an_unknown_agent_names_those_here()
 {
    let (h, _daemon, square) = deployment().await;
    h.command("ana", &square, "/collegium triggers mira").await;
    h.wait_ephemeral("ana", "has no outstanding triggers").await;
    h.command("ana", &square, "/collegium triggers nobody")
        .await;
    h.wait_ephemeral(
        "ana",
        "nobody is not an agent in this channel. Agents here: mira",
    )
    .await;
    h.command("ana", &square, "/collegium triggers").await;
    h.wait_ephemeral("ana", "/collegium triggers {agent}").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_units_list_open_work_as_the_prompt_does() {
    let (h, _daemon, square) = deployment().await;
    h.command("ana", &square, "/collegium units mira").await;
    h.wait_ephemeral(
        "ana",
        "Open work: none. You have no open unit in this channel.",
    )
    .await;
    h.wait_ephemeral(
        "ana",
        "No party to these units has a turn here waiting on a person",
    )
    .await;
    h.command("ana", &square, "/collegium units mira cancel u-1")
        .await;
    h.wait_ephemeral("ana", "U-1 is not a unit of mira in this channel")
        .await;
    h.command("ana", &square, "/collegium units").await;
    h.wait_ephemeral("ana", "/collegium units {agent}").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_a_person_cancels_a_unit_post_first_and_the_assignees_later_report_is_refused_naming_them()
 {
    let (h, _daemon, square) = with_tasks("debounce_window_ms = 0", None).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "tasks__assign",
                json!({"assignee": "theo", "outcome": "Summarise the invoice",
                       "criteria": "Names the amount", "context": "In the drive."}),
            )]),
            reply("Handed to Theo."),
            reply("On it, @ana."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the invoice summarised")
        .await;
    h.wait_post(&square, "theo", "On it, @ana.", since).await;
    ended_turn(&h, "theo", &square).await;

    h.command("ana", &square, "/collegium units mira cancel U-1")
        .await;
    let close = h
        .wait_post(&square, "collegium", "closed as cancelled", since)
        .await;
    assert!(
        close.message.contains("@ana's command, from assigned"),
        "{}",
        close.message
    );
    let unit = store(&h).unit(1).expect("store").expect("unit");
    assert_eq!(unit.state.as_str(), "cancelled");
    assert_eq!(unit.closer.as_deref(), Some("ana"));

    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "tasks__report",
                json!({"unit": "U-1", "state": "review", "report": "1,200 EUR."}),
            )]),
            reply("Understood."),
        ],
    );
    h.say("ana", &square, "@theo report on the invoice").await;
    h.wait_post(&square, "theo", "Understood.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completion"));
    assert!(
        results
            .iter()
            .any(|r| r.contains("ana (a person) cancelled it")),
        "{results:?}"
    );
}
