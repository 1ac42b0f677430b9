//! Chat as the store keeps it (§8.2, §8.3, §3.8): backfill at boot with each
//! agent's own token, never starting a turn; a reconnect's and a sequence
//! gap's catch-up recovering a mention; pins read and followed; and a turn
//! that reads nothing of Mattermost's posts.

use std::time::Duration;

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::*;
use serde_json::{Value, json};

async fn clock(h: &Harness, freeze: bool) {
    let response = reqwest::Client::new()
        .post(format!("{}/_sim/clock", h.mattermost.url))
        .json(&json!({"freeze": freeze}))
        .send()
        .await
        .expect("clock");
    assert!(response.status().is_success());
}

/// Waits until the store holds a post.
async fn recorded(h: &Harness, post_id: &str) -> collegium_control::store::ObservedPost {
    for _ in 0..200 {
        if let Some(post) = store(h).post(post_id).expect("query") {
            return post;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("post {post_id} was never recorded");
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_2_backfill_records_what_was_posted_while_down_and_never_starts_a_turn() {
    let (h, mut daemon) = running("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    clock(&h, true).await;
    let anchor = h.say("ana", &square, "the last post before the stop").await;
    recorded(&h, &anchor.id).await;
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
    let _ = daemon.child.wait();

    // While the daemon is down, in the anchor's own millisecond.
    let same_ms = h
        .say("ana", &square, "@mira posted in the anchor's millisecond")
        .await;
    assert_eq!(same_ms.create_at, anchor.create_at, "the clock is frozen");
    let gone = h.say("ana", &square, "posted and deleted while down").await;
    let _: Value = h
        .admin
        .delete(&format!("posts/{}", gone.id))
        .await
        .expect("delete");
    clock(&h, false).await;
    let later = h
        .say("ana", &square, "@mira a request made while you were down")
        .await;

    let mut again = h.daemon();
    again.wait_for("agents are listening");
    let backfilled = recorded(&h, &later.id).await;
    assert_eq!(backfilled.observed_via.as_str(), "backfill");
    let same = recorded(&h, &same_ms.id).await;
    assert_eq!(
        same.observed_via.as_str(),
        "backfill",
        "a post in the anchor's millisecond is not lost"
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    let store = store(&h);
    assert!(
        store.post(&gone.id).expect("query").is_none(),
        "a deleted post is not imported"
    );
    assert!(
        turn_requests(&h).is_empty(),
        "backfilled posts never start a turn"
    );
    assert!(store.last_turn("mira", &square).expect("query").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_3_a_mention_made_during_a_socket_blip_is_recovered_and_answered() {
    let (h, mut daemon) = running("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model
        .sim
        .script("demo-model", vec![reply("Recovered after the blip.")]);
    let since = now_ms() - 1;
    h.blip().await;
    let during = h.say("ana", &square, "@mira did you catch this?").await;
    h.wait_post(&square, "mira", "Recovered after the blip.", since)
        .await;
    let post = recorded(&h, &during.id).await;
    assert_eq!(
        post.observed_via.as_str(),
        "reconnect",
        "recovered by the reconnect's catch-up"
    );
    let seen = daemon.logged();
    assert!(
        seen.iter()
            .any(|l| l["message"] == "caught up with Mattermost" && l["via"] == "reconnect"),
        "{seen:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_2_a_sequence_gap_forces_a_resync_that_recovers_the_post() {
    let (h, mut daemon) = running("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model
        .sim
        .script("demo-model", vec![reply("Seen despite the gap.")]);
    let since = now_ms() - 1;
    for bot in ["mira", "theo", "collegium"] {
        h.skip_seq(bot).await;
    }
    let post = h.say("ana", &square, "@mira is the gap noticed?").await;
    h.wait_post(&square, "mira", "Seen despite the gap.", since)
        .await;
    assert_eq!(
        recorded(&h, &post.id).await.observed_via.as_str(),
        "reconnect"
    );
    let seen = daemon.logged();
    assert!(
        seen.iter().any(|l| l["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("sequence gap"))),
        "the gap is named: {seen:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_2_a_turn_reads_no_posts_from_mattermost() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let earlier = h
        .say("ana", &square, "context the agent needs: the budget is 40k")
        .await;
    recorded(&h, &earlier.id).await;
    h.model
        .sim
        .script("demo-model", vec![reply("The budget is 40k.")]);
    h.forget_served().await;
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira what is the budget?").await;
    h.wait_post(&square, "mira", "The budget is 40k.", since)
        .await;
    let served = h.served().await;
    let reads: Vec<&String> = served
        .iter()
        .filter(|r| r.starts_with("GET"))
        .filter(|r| r.contains("/posts") || r.contains("/pinned") || r.contains("/members"))
        .collect();
    assert!(
        reads.is_empty(),
        "the turn path read Mattermost: {reads:#?}"
    );
    let request = turn_requests(&h).pop().expect("a completion");
    let window = request["messages"].to_string();
    assert!(
        window.contains("the budget is 40k"),
        "the window came from the store"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_8_pinned_posts_follow_the_window_and_a_pinned_posts_edit_is_followed() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let rule = h.say("ana", &square, "Rule: cite one source.").await;
    let other = h.say("ana", &square, "an ordinary post").await;
    recorded(&h, &other.id).await;
    h.pin(&rule.id, true).await;
    h.edit("ana", &rule.id, "Rule: cite two sources.").await;
    h.edit("ana", &other.id, "an ordinary post, edited").await;
    for _ in 0..200 {
        if store(&h)
            .post(&rule.id)
            .expect("query")
            .is_some_and(|p| p.message.contains("two"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    h.model
        .sim
        .script("demo-model", vec![reply("Two sources, then.")]);
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira how many sources?").await;
    h.wait_post(&square, "mira", "Two sources", since).await;
    let framework = framework_message(&turn_requests(&h).pop().expect("a completion"));
    let pins = framework
        .split("Pinned posts")
        .nth(1)
        .unwrap_or_else(|| panic!("a pinned section: {framework}"));
    assert!(pins.contains("Rule: cite two sources."), "{framework}");
    assert!(pins.contains(&format!("post {}", rule.id)));
    let store = store(&h);
    assert_eq!(
        store.post(&other.id).expect("query").expect("post").message,
        "an ordinary post",
        "an edit of a post that is not pinned is not followed"
    );
    assert!(store.post(&rule.id).expect("query").expect("post").pinned);
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_3_a_turn_started_by_a_recovered_post_records_the_reconnect_as_its_cause() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model
        .sim
        .script("demo-model", vec![reply("Recovered after the blip.")]);
    let since = now_ms() - 1;
    h.blip().await;
    let during = h.say("ana", &square, "@mira did you catch this?").await;
    h.wait_post(&square, "mira", "Recovered after the blip.", since)
        .await;
    assert_eq!(
        recorded(&h, &during.id).await.observed_via.as_str(),
        "reconnect"
    );
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(
        turn.cause, "reconnect",
        "the turn says the reconnect started it (§8.2)"
    );
    assert_eq!(turn.answers_post_id.as_deref(), Some(during.id.as_str()));
}
