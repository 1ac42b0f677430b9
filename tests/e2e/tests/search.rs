//! conversations::search and conversations::read (§3.8) through the real
//! daemon: an agent finds and reads posts, its own replies among them; its
//! reasoning, its status post and the post its turn answers are never hits;
//! and a search from a public channel never quotes a direct message.

use e2e::people::now_ms;
use e2e::scenario::{
    calls, reply, square_with, status_post, tool_results, turn_requests, with_fixture_granting,
};
use model_sim::script::Scripted;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn s3_8_an_agent_searches_and_reads_but_never_finds_reasoning_or_a_status_post() {
    let (h, _daemon, _) = with_fixture_granting("debounce_window_ms = 0", &["conversations"]).await;
    let square = square_with(&h, &["ana"]).await;
    // Turn one: reasoning and a call (so a status post) both name the word.
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                reasoning: Some("the marmalade reasoning stays private".into()),
                ..calls(&[("conversations__search", json!({"phrase": "marmalade jam"}))])
            },
            reply("Noted: the code word is marmalade."),
        ],
    );
    let since = now_ms() - 1;
    let told = h
        .say("ana", &square, "@mira remember the code word marmalade")
        .await;
    let noted = h
        .wait_post(&square, "mira", "Noted: the code word is marmalade.", since)
        .await;
    let status = status_post(&h, &square).await;
    assert!(
        status.message.contains("marmalade"),
        "the status post names the word, so its absence below means something: {}",
        status.message
    );
    // Turn two: search, then read the person's post and one never written.
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[
                ("conversations__search", json!({"phrase": "MARMALADE"})),
                ("conversations__read", json!({"post": told.id})),
                ("conversations__read", json!({"post": "no-such-post-id"})),
                (
                    "conversations__search",
                    json!({"phrase": "x".repeat(10_000)}),
                ),
            ]),
            reply("Found it."),
        ],
    );
    let since = now_ms() - 1;
    let asks = h
        .say("ana", &square, "@mira what was the marmalade thing?")
        .await;
    h.wait_post(&square, "mira", "Found it.", since).await;
    let all = tool_results(&turn_requests(&h).pop().expect("completions"));
    // The window replays turn one's call first; this turn's four follow.
    assert_eq!(all[0], "[searched posts for \"marmalade jam\": 0 hits]");
    let results = &all[all.len() - 4..];
    let found = &results[0];
    assert!(found.starts_with("2 posts match \"MARMALADE\""), "{found}");
    assert!(
        found.contains(&format!("post {} · this channel · ana (person)", told.id))
            && found.contains(&format!("post {} · this channel · Mira (agent)", noted.id)),
        "the person's post and the agent's own reply: {found}"
    );
    assert!(
        !found.contains(&asks.id),
        "the post the turn answers is never a hit: {found}"
    );
    assert!(
        !found.contains(&status.id),
        "a status post is never a hit: {found}"
    );
    assert!(!found.contains("reasoning stays private"), "{found}");
    assert!(
        results[1].contains("<<<\n@mira remember the code word marmalade\n>>>")
            || results[1].contains("<<<\nMira remember the code word marmalade\n>>>"),
        "the post whole, delimited: {}",
        results[1]
    );
    assert_eq!(
        results[2],
        "There is no post no-such-post-id to read. A post id is the one shown after \"post\" in a window line or a search hit; conversations::search finds posts by their words."
    );
    assert!(
        results[3].contains("10000 characters") && results[3].contains("at most 500"),
        "{}",
        results[3]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_8_a_search_from_a_public_channel_never_quotes_a_direct_message() {
    let (h, _daemon, _) = with_fixture_granting("debounce_window_ms = 0", &["conversations"]).await;
    let square = square_with(&h, &["ana"]).await;
    let dm = h.dm("ana", "mira").await;
    h.model
        .sim
        .script("demo-model", vec![reply("Kept between us.")]);
    let since = now_ms() - 1;
    let secret = h.say("ana", &dm, "the vault code is pumpkin-4711").await;
    h.wait_post(&dm, "mira", "Kept between us.", since).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[
                ("conversations__search", json!({"phrase": "pumpkin"})),
                ("conversations__read", json!({"post": secret.id})),
            ]),
            reply("Nothing here."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira what is the vault code?").await;
    h.wait_post(&square, "mira", "Nothing here.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert!(
        results[0].starts_with("No post matches \"pumpkin\".")
            && results[0].contains("from a public channel, public channels only"),
        "{}",
        results[0]
    );
    assert_eq!(
        results[1],
        format!(
            "There is no post {} to read. A post id is the one shown after \"post\" in a window line or a search hit; conversations::search finds posts by their words.",
            secret.id
        ),
        "a post out of reach reads as one never written"
    );
}
