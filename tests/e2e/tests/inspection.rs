//! The inspection subcommands (§8.4) through the real command route:
//! `memory {agent}` with its operator prune, and `triggers {agent}`,
//! asserting what the invoker is answered and what the store then holds.

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{calls, ended_turn, reply, square_with, store, tool_results, turn_requests};
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
async fn s8_4_units_list_open_work_as_the_prompt_does_and_cancel_says_it_is_not_built() {
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
    h.wait_ephemeral("ana", "is not available in this build yet")
        .await;
    h.command("ana", &square, "/collegium units").await;
    h.wait_ephemeral("ana", "/collegium units {agent}").await;
}
