//! Memory (§3.6) through the real daemon: ungated writes whose results
//! disclose what was kept and evicted, the listing in the framework's
//! message under its count, and the seen-revision rule for a delete. The
//! references are random, so each turn is scripted once the previous one has
//! ended and its references can be read from the store.

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{
    calls, framework_index, framework_message, reply, square_with, store, turn_requests,
};
use serde_json::{Value, json};

/// The results of the turn's own calls in a request: those after the
/// framework's message, not the earlier turns' replayed in the window.
fn tool_results(request: &Value) -> Vec<String> {
    request["messages"].as_array().expect("messages")[framework_index(request) + 1..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A deployment whose @mira holds memory, capped at two entries and
/// 40-character bodies.
async fn deployment() -> (Harness, e2e::Daemon, String) {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    h.grant_mira(&["memory"]);
    h.mira_settings("memory", "max_entries = 2\nmax_body_chars = 40");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    (h, daemon, square)
}

/// The reference of mira's memory described as `description`.
fn reference(h: &Harness, description: &str) -> String {
    store(h)
        .memories_of("mira")
        .expect("memories")
        .into_iter()
        .find(|m| m.description == description)
        .map(|m| m.reference())
        .unwrap_or_else(|| panic!("no memory “{description}”"))
}

fn descriptions(h: &Harness) -> Vec<String> {
    store(h)
        .memories_of("mira")
        .expect("memories")
        .into_iter()
        .map(|m| m.description)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_6_a_write_at_the_cap_evicts_the_least_recently_read_and_the_listing_counts_against_the_cap()
 {
    let (h, _daemon, square) = deployment().await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[
                (
                    "memory__write",
                    json!({"description": "Ana's invoices", "body": "PDF, never paper"}),
                ),
                (
                    "memory__write",
                    json!({"description": "Build steps", "body": "make, then make test"}),
                ),
                (
                    "memory__write",
                    json!({"description": "Too long", "body": "x".repeat(41)}),
                ),
            ]),
            reply("Noted."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira remember these").await;
    h.wait_post(&square, "mira", "Noted.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert!(
        results[0].contains("Body: 16 of 40 characters."),
        "{}",
        results[0]
    );
    assert!(
        results[2].contains("the body is 41 characters, over the cap of 40")
            && results[2].contains("Nothing was cut"),
        "{}",
        results[2]
    );
    assert_eq!(descriptions(&h), ["Ana's invoices", "Build steps"]);
    let (invoices, build) = (
        reference(&h, "Ana's invoices"),
        reference(&h, "Build steps"),
    );

    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("memory__read", json!({"memory": invoices}))]),
            calls(&[(
                "memory__write",
                json!({"description": "Deploy day", "body": "Fridays"}),
            )]),
            reply("Kept."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira deploys are on Fridays").await;
    h.wait_post(&square, "mira", "Kept.", since).await;
    let requests = turn_requests(&h);
    let last = requests.last().expect("completions");
    let listing = framework_message(&requests[requests.len() - 3]);
    assert!(
        listing.contains(&format!(
            "Your memories: 2 of at most 2.\n- {invoices}: Ana's invoices\n- {build}: Build steps"
        )),
        "{listing}"
    );
    let results = tool_results(last);
    let written = results.last().expect("the write's result");
    assert!(
        written.contains(&format!("this write evicted {build} — Build steps")),
        "the least recently read is evicted and named: {written}"
    );
    assert_eq!(descriptions(&h), ["Ana's invoices", "Deploy day"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_6_deleting_an_unseen_entry_is_refused_until_the_turn_reads_it() {
    let (h, _daemon, square) = deployment().await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "memory__write",
                json!({"description": "Old fact", "body": "The office is on floor 2"}),
            )]),
            reply("Noted."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira remember the office").await;
    h.wait_post(&square, "mira", "Noted.", since).await;
    let fact = reference(&h, "Old fact");

    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("memory__delete", json!({"memory": fact}))]),
            calls(&[("memory__read", json!({"memory": fact}))]),
            calls(&[("memory__delete", json!({"memory": fact}))]),
            reply("Forgotten."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira we moved; forget the office")
        .await;
    h.wait_post(&square, "mira", "Forgotten.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert!(
        results[0].contains(&format!("This turn has not read memory {fact}"))
            && results[0].contains(&format!("memory::read {fact} first")),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("The office is on floor 2"),
        "{}",
        results[1]
    );
    assert!(
        results[2].starts_with(&format!("Deleted memory {fact}")),
        "{}",
        results[2]
    );
    assert!(descriptions(&h).is_empty());
}
