//! The subcommands that take something out of an agent's reach (§8.4):
//! `forget {post}`, `reset {agent}` and `queue {agent} clear`, each through
//! the real command route, asserting what the channel and the model see.

use e2e::people::now_ms;
use e2e::scenario::{
    calls, completions_reach, ended_turn, reply, square_with, store, turn_requests, with_fixture,
};
use serde_json::json;

/// Every message a completion request carried, as one text.
fn messages(request: &serde_json::Value) -> String {
    request["messages"].to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_a_forgotten_post_leaves_the_window_and_a_second_forget_says_it_already_was() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana"]).await;
    h.model
        .sim
        .script("demo-model", vec![reply("Noted."), reply("I do not know.")]);
    let since = now_ms() - 1;
    let secret = h.say("ana", &square, "@mira the code word is zebra").await;
    h.wait_post(&square, "mira", "Noted.", since).await;
    ended_turn(&h, "mira", &square).await;

    h.command("ana", &square, &format!("/collegium forget {}", secret.id))
        .await;
    let notice = h
        .wait_post(&square, "collegium", "agents forgot post", since)
        .await;
    assert!(
        notice.message.contains(&secret.id) && notice.message.contains("@ana's command"),
        "{}",
        notice.message
    );
    assert!(
        !notice.message.contains("zebra"),
        "the notice quotes nothing"
    );

    h.say("ana", &square, "@mira what was the code word?").await;
    h.wait_post(&square, "mira", "I do not know.", since).await;
    let last = turn_requests(&h).pop().expect("a completion");
    assert!(
        !messages(&last).contains("zebra"),
        "the forgotten post is out of the window: {}",
        messages(&last)
    );

    h.command("ana", &square, &format!("/collegium forget {}", secret.id))
        .await;
    h.wait_ephemeral("ana", "was already forgotten").await;
    h.command(
        "ana",
        &square,
        &format!(
            "/collegium forget http://elsewhere.example:1/team/pl/{}",
            secret.id
        ),
    )
    .await;
    h.wait_ephemeral("ana", "a permalink on another server (elsewhere.example)")
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_a_post_in_a_channel_the_invoker_cannot_read_is_answered_as_one_that_does_not_exist() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana", "bo"]).await;
    let secret = e2e::scenario::private_channel_with_mira(&h, "ana", "secret").await;
    h.model.sim.script("demo-model", vec![reply("Noted.")]);
    let since = now_ms() - 1;
    let private = h.say("ana", &secret, "@mira keep this").await;
    h.wait_post(&secret, "mira", "Noted.", since).await;

    h.command("bo", &square, &format!("/collegium forget {}", private.id))
        .await;
    h.wait_ephemeral(
        "bo",
        &format!("There is no post `{}` you can see.", private.id),
    )
    .await;
    let absent = "zzzzzzzzzzzzzzzzzzzzzzzzzz";
    h.command("bo", &square, &format!("/collegium forget {absent}"))
        .await;
    h.wait_ephemeral("bo", &format!("There is no post `{absent}` you can see."))
        .await;
    assert!(
        store(&h)
            .forgotten_at(&private.id)
            .expect("query")
            .is_none(),
        "nothing changed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_reset_hides_earlier_posts_and_the_agents_own_calls_but_pins_stand() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("builtins__now", json!({}))]),
            reply("Noted: Lisbon."),
            reply("Which venue?"),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira the venue is Lisbon").await;
    h.wait_post(&square, "mira", "Noted: Lisbon.", since).await;
    ended_turn(&h, "mira", &square).await;

    h.command("ana", &square, "/collegium reset @mira").await;
    let notice = h
        .wait_post(&square, "collegium", "starts a new episode here", since)
        .await;
    assert!(!notice.message.contains("@mira"), "{}", notice.message);

    h.say("ana", &square, "@mira where is the venue?").await;
    h.wait_post(&square, "mira", "Which venue?", since).await;
    completions_reach(&h, 3).await;
    let last = turn_requests(&h).pop().expect("a completion");
    let seen = messages(&last);
    assert!(!seen.contains("Lisbon"), "earlier posts are out: {seen}");
    assert!(
        !seen.contains("\"role\":\"tool\""),
        "the agent's own earlier call is out: {seen}"
    );
    assert!(seen.contains("where is the venue"), "{seen}");

    h.command("ana", &square, "/collegium reset nobody").await;
    h.wait_ephemeral(
        "ana",
        "nobody is not an agent in this channel. Agents here: mira",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_queue_clear_discards_the_rows_and_the_running_turn_keeps_what_it_took() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana"]).await;
    let (_, since) = e2e::scenario::parked_on_a_write(&h, &square).await;
    h.say("ana", &square, "@mira and then this").await;
    h.say("ana", &square, "@mira and that").await;
    for _ in 0..200 {
        if store(&h).queued_rows("mira", &square).expect("query").len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(
        store(&h).queued_rows("mira", &square).expect("query").len(),
        2
    );

    h.command("ana", &square, "/collegium queue mira clear")
        .await;
    h.wait_post(
        &square,
        "collegium",
        "Mira's queue here was cleared: it will not answer 2 queued posts",
        since,
    )
    .await;
    assert!(
        store(&h)
            .queued_rows("mira", &square)
            .expect("query")
            .is_empty()
    );
    let running = store(&h)
        .last_turn("mira", &square)
        .expect("query")
        .expect("a turn");
    assert!(running.ended_at.is_none(), "the running turn goes on");

    h.command("ana", &square, "/collegium queue mira clear")
        .await;
    h.wait_ephemeral("ana", "Mira has nothing queued here; nothing changed.")
        .await;
}
