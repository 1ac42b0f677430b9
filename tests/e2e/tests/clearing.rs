//! `/collegium clear` (§8.5) through the real command route and dialog:
//! what the invoker and another member each see, and what the store keeps.

use std::time::Duration;

use e2e::clearing::{confirm, eventually, seen};
use e2e::people::now_ms;
use e2e::scenario::{calls, ended_turn, reply, square_with, store, with_fixture};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn s8_5_a_cancelled_clear_changes_nothing_and_a_confirmed_one_empties_the_channel_for_everyone()
 {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana", "bo"]).await;
    h.model.sim.script("demo-model", vec![reply("Noted.")]);
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira the code word is zebra").await;
    h.wait_post(&square, "mira", "Noted.", since).await;
    ended_turn(&h, "mira", &square).await;
    let turns_before = store(&h).turns_of("mira", &square).expect("turns");
    let hourly_before = store(&h).turns_started_since(0).expect("count");

    let answered = h.command("ana", &square, "/collegium clear").await;
    assert!(
        !answered.to_string().contains("nothing changed"),
        "{answered}"
    );
    let dialog = h.wait_dialog("ana").await;
    assert!(
        dialog.to_string().contains("deleted from Mattermost")
            && dialog.to_string().contains("What stays"),
        "the dialog says what goes and what stays: {dialog}"
    );
    h.cancel_dialog("ana", &square).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        seen(&h, "bo", &square)
            .await
            .iter()
            .any(|m| m.contains("zebra")),
        "a cancelled clear changes nothing"
    );

    let (_, answer) = confirm(&h, "ana", &square, "/collegium clear").await;
    assert!(answer.get("error").is_none(), "{answer}");
    let notice = h
        .wait_post(&square, "collegium", "This channel was cleared", since)
        .await;
    assert!(
        notice.message.contains("@ana's command"),
        "{}",
        notice.message
    );
    for person in ["ana", "bo"] {
        eventually("every post before the notice is gone", async || {
            seen(&h, person, &square).await == vec![notice.message.clone()]
        })
        .await;
    }
    let s = store(&h);
    assert_eq!(
        s.cleared_before(&square).expect("read"),
        Some(notice.create_at)
    );
    let turns_after = s.turns_of("mira", &square).expect("turns");
    assert_eq!(turns_after.len(), turns_before.len(), "turn records stay");
    assert_eq!(
        turns_after.iter().map(|t| t.prompt_tokens).sum::<i64>(),
        turns_before.iter().map(|t| t.prompt_tokens).sum::<i64>(),
        "what they cost stays"
    );
    assert_eq!(
        s.turns_started_since(0).expect("count"),
        hourly_before,
        "the hourly count reads as before"
    );

    // The same submission again, straight to the route (§6.4): a replay.
    let route = format!(
        "{}/mattermost/clear",
        h.loaded().config.callbacks.public_url
    );
    let state = dialog["dialog"]["state"].as_str().unwrap_or_default();
    let ana = h.session("ana").await;
    let me: Value = ana.get("users/me").await.expect("me");
    let replay = |user: String, channel: String| {
        reqwest::Client::new().post(&route).json(&json!({
            "url": route, "callback_id": "collegium-clear", "state": state,
            "user_id": user, "channel_id": channel, "submission": {}, "cancelled": false
        }))
    };
    let stranger = h.stranger("zed").await;
    let forged = replay(stranger, square.clone())
        .send()
        .await
        .expect("route");
    assert_eq!(forged.status().as_u16(), 403, "another person's submission");
    let elsewhere = replay(
        me["id"].as_str().unwrap_or_default().into(),
        "elsewhere".into(),
    )
    .send()
    .await
    .expect("route");
    assert_eq!(
        elsewhere.status().as_u16(),
        403,
        "another channel's submission"
    );
    h.command("ana", &square, "/collegium clear").await;
    h.wait_dialog("ana").await;
    h.cancel_dialog("ana", &square).await;
    let replayed: Value = replay(me["id"].as_str().unwrap_or_default().into(), square.clone())
        .send()
        .await
        .expect("route")
        .json()
        .await
        .expect("json");
    assert!(
        replayed["error"]
            .as_str()
            .unwrap_or_default()
            .contains("already used"),
        "{replayed}"
    );
    assert_eq!(
        seen(&h, "bo", &square).await,
        vec![notice.message.clone()],
        "nothing changed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_5_a_clear_is_refused_while_a_turn_is_parked_at_the_command_and_at_confirmation() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana", "bo"]).await;
    h.model.sim.script(
        "demo-model",
        vec![calls(&[(
            "fixture__write",
            json!({"path": "a.txt", "content": "x"}),
        )])],
    );
    let since = now_ms() - 1;
    // The confirmation is opened while the channel is idle.
    h.command("bo", &square, "/collegium clear").await;
    h.wait_dialog("bo").await;
    h.say("ana", &square, "@mira write it").await;
    h.wait_post(&square, "mira", "Approval needed", since).await;

    h.command("ana", &square, "/collegium clear").await;
    h.wait_ephemeral("ana", "A turn is running here").await;
    let answer = h.submit_dialog("bo", &square, json!({})).await;
    assert!(
        answer["error"]
            .as_str()
            .unwrap_or_default()
            .contains("nothing changed"),
        "refused again at confirmation: {answer}"
    );
    let posts = seen(&h, "ana", &square).await;
    assert!(posts.iter().any(|m| m.contains("write it")), "{posts:?}");
    assert!(
        !posts.iter().any(|m| m.contains("was cleared")),
        "{posts:?}"
    );
    assert_eq!(store(&h).cleared_before(&square).expect("read"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_5_deletions_failing_half_way_are_counted_on_the_notice_and_a_second_clear_repairs() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana", "bo"]).await;
    let since = now_ms() - 1;
    let mut written = Vec::new();
    for n in 0..4 {
        written.push(h.say("ana", &square, &format!("note {n}")).await);
    }
    for post in &written[..2] {
        h.fault("DELETE", &format!("/api/v4/posts/{}", post.id), 500, 1)
            .await;
    }
    confirm(&h, "ana", &square, "/collegium clear").await;
    let notice = h
        .wait_post(&square, "collegium", "This channel was cleared", since)
        .await;
    let amended = h.wait_edit(&notice.id, "could not be deleted").await;
    assert!(
        amended.message.contains("2 posts before this notice"),
        "{}",
        amended.message
    );
    let bo_sees = seen(&h, "bo", &square).await;
    assert!(bo_sees.iter().any(|m| m == "note 0") && !bo_sees.iter().any(|m| m == "note 3"));
    assert!(
        store(&h).post(&written[0].id).expect("read").is_none(),
        "what remains is already forgotten"
    );

    let again_since = now_ms() - 1;
    confirm(&h, "bo", &square, "/collegium clear").await;
    let second = h
        .wait_post(&square, "collegium", "@bo's command", again_since)
        .await;
    for person in ["ana", "bo"] {
        eventually("the second clear removes what remained", async || {
            seen(&h, person, &square).await == vec![second.message.clone()]
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_5_a_sigkill_after_the_cut_leaves_agents_forgetting_and_a_second_clear_finishes() {
    let (h, mut daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana", "bo"]).await;
    let since = now_ms() - 1;
    let mut written = Vec::new();
    for n in 0..4 {
        written.push(h.say("ana", &square, &format!("note {n}")).await);
    }
    h.fault_delay("DELETE", "/api/v4/posts/", 3_000, 10).await;
    confirm(&h, "ana", &square, "/collegium clear").await;
    h.wait_post(&square, "collegium", "This channel was cleared", since)
        .await;
    eventually("the store is cut", async || {
        store(&h).cleared_before(&square).expect("read").is_some()
    })
    .await;
    daemon.child.kill().expect("SIGKILL");
    let _ = daemon.child.wait();
    assert!(
        seen(&h, "bo", &square).await.iter().any(|m| m == "note 3"),
        "Mattermost still shows what the store forgot"
    );

    h.model.sim.script("demo-model", Vec::new());
    let mut again = h.daemon();
    again.wait_for("agents are listening");
    for post in &written {
        assert!(
            store(&h).post(&post.id).expect("read").is_none(),
            "a restart's backfill never records a post older than the clear"
        );
    }
    let again_since = now_ms() - 1;
    confirm(&h, "bo", &square, "/collegium clear").await;
    let second = h
        .wait_post(&square, "collegium", "@bo's command", again_since)
        .await;
    eventually("the second clear finishes the job", async || {
        let now = seen(&h, "ana", &square).await;
        // A boot notice posted after the second clear's notice is newer
        // than it, and stays.
        now.first() == Some(&second.message)
            && !now
                .iter()
                .any(|m| m.starts_with("note ") || m.contains("@ana's command"))
    })
    .await;
}
