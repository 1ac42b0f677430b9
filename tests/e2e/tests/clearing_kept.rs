//! `/collegium clear` (§8.5), what a clear keeps and whom it answers:
//! pending triggers post into the cleared channel, memories stay unless
//! `--memories` names them (and then only this channel's), `usage` and the
//! §7.4 hourly count read as before, and a person no longer in the channel
//! changes nothing by submitting the confirmation.

use std::time::Duration;

use collegium_control::store::TriggerStatus;
use e2e::Harness;
use e2e::clearing::{confirm, eventually, open, seen};
use e2e::people::now_ms;
use e2e::scenario::{
    calls, ended_turn, framework_message, reply, running, square_with, store, turn_requests,
};
use e2e::triggers::item;
use serde_json::{Value, json};

const SECRET: &str = "trigger-secret-for-the-clear-tests";

/// A deployment with the trigger route open, @mira holding memory, and the
/// daemon listening.
async fn deployment() -> (Harness, e2e::Daemon) {
    let h = Harness::with_trigger_route(SECRET, "debounce_window_ms = 0").await;
    h.grant_mira(&["memory"]);
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    (h, daemon)
}

/// Mira's memories' descriptions, as the store holds them.
fn descriptions(h: &Harness) -> Vec<String> {
    let mut found: Vec<String> = store(h)
        .memories_of("mira")
        .expect("memories")
        .into_iter()
        .map(|m| m.description)
        .collect();
    found.sort();
    found
}

/// A public channel `owner` makes, with `members` added; its id.
async fn public_channel(h: &Harness, owner: &str, name: &str, members: &[&str]) -> String {
    let session = h.session(owner).await;
    let team = h.team().await;
    let channel: mattermost_wire::model::Channel = session
        .post(
            "channels",
            &json!({"team_id": team.id, "name": name, "display_name": "Minutes", "type": "O"}),
        )
        .await
        .expect("a public channel");
    for member in members {
        let user = h.user(member).await;
        let _: Value = session
            .post(
                &format!("channels/{}/members", channel.id),
                &json!({"user_id": user.id}),
            )
            .await
            .expect("a member added");
    }
    channel.id
}

/// `/collegium usage` as `username` reads it, without its first line (which
/// names the window's start, a moment that moves on between two asks).
async fn usage(h: &Harness, username: &str, channel: &str) -> String {
    let answer = h.command(username, channel, "/collegium usage").await;
    let text = answer["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Usage over turns"), "{answer}");
    text.lines().skip(1).collect::<Vec<_>>().join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_5_a_trigger_pending_during_the_clear_survives_it_and_posts_into_the_cleared_channel() {
    let (h, _daemon) = deployment().await;
    let square = square_with(&h, &["ana", "bo"]).await;
    h.model.sim.script(
        "demo-model",
        vec![reply("Hello back."), reply("Seen the deploy.")],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira hello").await;
    h.wait_post(&square, "mira", "Hello back.", since).await;
    ended_turn(&h, "mira", &square).await;

    open(&h, "ana", &square, "/collegium clear").await;
    // The notice is held back by Mattermost while the clear holds every lane
    // here, so the webhook's item arrives in the middle of the clear and is
    // still pending when the store is cut.
    h.fault_delay("POST", "/api/v4/posts", 2_000, 1).await;
    let (answer, ()) = tokio::join!(h.submit_dialog("ana", &square, json!({})), async {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let (status, said) = h
            .webhook(
                Some(&format!("Bearer {SECRET}")),
                item(
                    "mira",
                    "town-square",
                    "Deploy finished",
                    "deploy-9",
                    "The deploy finished.",
                ),
            )
            .await;
        assert_eq!(status, 202, "{said}");
        let trigger = store(&h).trigger(1).expect("read").expect("recorded");
        assert_eq!(
            trigger.status,
            TriggerStatus::Pending,
            "outstanding, not yet announced"
        );
    });
    assert!(answer.get("error").is_none(), "{answer}");
    let notice = h
        .wait_post(&square, "collegium", "This channel was cleared", since)
        .await;
    let announced = h.wait_announcement(&square, "Deploy finished").await;
    assert!(
        announced.create_at > notice.create_at,
        "the trigger posts after the notice, into the cleared channel"
    );
    let handled = h
        .wait_post(&square, "mira", "Seen the deploy.", since)
        .await;
    let expected = vec![
        notice.message.clone(),
        announced.message.clone(),
        handled.message.clone(),
    ];
    for person in ["ana", "bo"] {
        eventually(
            "the channel holds the notice and the trigger's work",
            async || seen(&h, person, &square).await == expected,
        )
        .await;
    }
    let trigger = store(&h).trigger(1).expect("read").expect("kept");
    assert_eq!(trigger.status, TriggerStatus::Announced);
    assert_eq!(trigger.announcements, 1, "announced once, after the clear");
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_5_memories_stay_through_a_clear_and_go_with_memories_only_where_written_here() {
    let (h, _daemon) = deployment().await;
    let square = square_with(&h, &["ana", "bo"]).await;
    let dm = h.dm("ana", "mira").await;
    let since = now_ms() - 1;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "memory__write",
                json!({"description": "Square fact", "body": "the square meets at nine"}),
            )]),
            reply("Kept here."),
        ],
    );
    h.say("ana", &square, "@mira remember the square's hour")
        .await;
    h.wait_post(&square, "mira", "Kept here.", since).await;
    ended_turn(&h, "mira", &square).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "memory__write",
                json!({"description": "DM fact", "body": "ana prefers PDFs"}),
            )]),
            reply("Kept there."),
        ],
    );
    h.say("ana", &dm, "remember that I prefer PDFs").await;
    h.wait_post(&dm, "mira", "Kept there.", since).await;
    ended_turn(&h, "mira", &dm).await;
    assert_eq!(descriptions(&h), vec!["DM fact", "Square fact"]);

    confirm(&h, "ana", &square, "/collegium clear").await;
    let plain = h
        .wait_post(&square, "collegium", "@ana's command", since)
        .await;
    assert!(
        plain.message.contains("Memories are kept"),
        "{}",
        plain.message
    );
    eventually("the store is cut", async || {
        store(&h).cleared_before(&square).expect("read") == Some(plain.create_at)
    })
    .await;
    assert_eq!(
        descriptions(&h),
        vec!["DM fact", "Square fact"],
        "a plain clear keeps every memory"
    );

    let again = now_ms() - 1;
    confirm(&h, "bo", &square, "/collegium clear --memories").await;
    let with_memories = h
        .wait_post(&square, "collegium", "@bo's command", again)
        .await;
    assert!(
        with_memories
            .message
            .contains("Memories their turns here wrote are deleted too"),
        "{}",
        with_memories.message
    );
    for person in ["ana", "bo"] {
        eventually("each member sees only the second notice", async || {
            seen(&h, person, &square).await == vec![with_memories.message.clone()]
        })
        .await;
    }
    assert_eq!(
        descriptions(&h),
        vec!["DM fact"],
        "only the memory written from this channel goes"
    );

    // The agent's next turn here lists what it still knows.
    h.model
        .sim
        .script("demo-model", vec![reply("Fresh start.")]);
    let asked = now_ms() - 1;
    h.say("bo", &square, "@mira what do you remember?").await;
    h.wait_post(&square, "mira", "Fresh start.", asked).await;
    let requests = turn_requests(&h);
    let listing = framework_message(requests.last().expect("a request"));
    assert!(
        listing.contains("DM fact") && !listing.contains("Square fact"),
        "{listing}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_5_usage_and_the_hourly_count_read_exactly_as_before_the_clear() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana", "bo"]).await;
    h.model
        .sim
        .script("demo-model", vec![reply("One."), reply("Two.")]);
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira one").await;
    h.wait_post(&square, "mira", "One.", since).await;
    ended_turn(&h, "mira", &square).await;
    h.say("bo", &square, "@mira two").await;
    h.wait_post(&square, "mira", "Two.", since).await;
    ended_turn(&h, "mira", &square).await;

    let hour = now_ms() - 3_600_000;
    let before = usage(&h, "ana", &square).await;
    assert!(before.contains("Mira on `"), "{before}");
    let hourly_before = store(&h).turns_started_since(hour).expect("count");
    assert!(hourly_before >= 2, "{hourly_before}");

    confirm(&h, "ana", &square, "/collegium clear").await;
    let notice = h
        .wait_post(&square, "collegium", "This channel was cleared", since)
        .await;
    eventually("the channel is emptied", async || {
        seen(&h, "bo", &square).await == vec![notice.message.clone()]
    })
    .await;
    assert_eq!(
        store(&h).turns_started_since(hour).expect("count"),
        hourly_before,
        "the §7.4 hourly count reads as before"
    );
    for person in ["ana", "bo"] {
        assert_eq!(
            usage(&h, person, &square).await,
            before,
            "usage reads as before, for {person}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_5_a_person_not_in_the_channel_submitting_the_confirmation_changes_nothing() {
    let (h, mut daemon) = running("debounce_window_ms = 0").await;
    square_with(&h, &["ana", "bo"]).await;
    // Town square cannot be left; a public channel of ana's can.
    let square = public_channel(&h, "ana", "minutes", &["mira", "bo"]).await;
    let minutes = h.say("ana", &square, "the minutes of Monday").await;
    let (ana, bo) = (h.user("ana").await, h.user("bo").await);
    eventually(
        "the daemon knows the channel's people and post",
        async || {
            let s = store(&h);
            s.member(&square, &ana.id).expect("read").is_some()
                && s.member(&square, &bo.id).expect("read").is_some()
                && s.post(&minutes.id).expect("read").is_some()
        },
    )
    .await;
    let dialog = open(&h, "bo", &square, "/collegium clear").await;

    // Someone on the team, never in the channel, sends bo's dialog through Mattermost's
    // own submission route: Mattermost names the submitter, the state does
    // not verify for them, and the daemon refuses it.
    h.person("zed", &[]).await;
    let zed = h.session("zed").await;
    let forged: Result<Value, _> = zed
        .post(
            "actions/dialogs/submit",
            &json!({
                "url": dialog["url"], "callback_id": "collegium-clear",
                "state": dialog["dialog"]["state"], "channel_id": square,
                "submission": {}
            }),
        )
        .await;
    assert!(forged.is_err(), "the daemon refuses it: {forged:?}");
    daemon.wait_for("a clear confirmation whose state does not check out");

    // Bo is removed, then submits the dialog bo opened while a member.
    let _: Value = h
        .admin
        .delete(&format!("channels/{square}/members/{}", bo.id))
        .await
        .expect("bo removed");
    eventually("the daemon sees bo leave", async || {
        store(&h).member(&square, &bo.id).expect("read").is_none()
    })
    .await;
    let answer = h.submit_dialog("bo", &square, json!({})).await;
    assert!(
        answer["error"]
            .as_str()
            .unwrap_or_default()
            .contains("Only a person in this channel may clear it; nothing changed"),
        "{answer}"
    );

    tokio::time::sleep(Duration::from_millis(500)).await;
    let ana_sees = seen(&h, "ana", &square).await;
    assert!(
        ana_sees.iter().any(|m| m == "the minutes of Monday"),
        "{ana_sees:?}"
    );
    assert!(
        !ana_sees.iter().any(|m| m.contains("was cleared")),
        "{ana_sees:?}"
    );
    assert_eq!(store(&h).cleared_before(&square).expect("read"), None);
    assert!(
        store(&h).post(&minutes.id).expect("read").is_some(),
        "the agents still have the post"
    );
}
