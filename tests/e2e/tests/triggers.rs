//! Triggers end to end (§4.2, §6.4): the webhook route's answers, the idle
//! gate, `triggers::resolve`, and a schedule across a week of downtime.
//! Every announcement is the system bot's post in a real channel of the
//! simulator, and every turn it starts is an ordinary turn.

use std::process::Command;
use std::time::Duration;

use collegium_control::store::TriggerStatus;
use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{
    calls, completions_reach, ended_turn, reply, square_with, store, turn_requests,
};
use e2e::triggers::{SYSTEM_BOT, item};
use model_sim::script::Scripted;
use serde_json::{Value, json};

const SECRET: &str = "trigger-secret-for-the-e2e-tests";

/// A deployment with the trigger route open and the daemon listening.
async fn open_route() -> (Harness, e2e::Daemon) {
    open_route_under("debounce_window_ms = 0", false).await
}

/// As `open_route`, under `limits`, and with @mira holding the fixture
/// toolset (its gated `fixture::write`) where `fixture` is set.
async fn open_route_under(limits: &str, fixture: bool) -> (Harness, e2e::Daemon) {
    let h = Harness::with_trigger_route(SECRET, limits).await;
    if fixture {
        h.install_fixture_plugin(&h.dir.path().join("asked.jsonl"));
        h.grant_mira(&["workspace", "fixture"]);
    }
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    (h, daemon)
}

fn bearer() -> String {
    format!("Bearer {SECRET}")
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_without_a_trigger_secret_the_route_is_closed() {
    let (h, _daemon) = e2e::scenario::running("debounce_window_ms = 0").await;
    let (status, answer) = h
        .webhook(Some(&bearer()), item("mira", "town-square", "x", "r", "b"))
        .await;
    assert_eq!(status, 404, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap_or_default()
            .contains("closed"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_the_trigger_route_answers_each_request_for_what_it_is() {
    let (h, _daemon) = open_route().await;
    let square = square_with(&h, &["ana"]).await;
    let good = item(
        "mira",
        "town-square",
        "Build 7 failed",
        "build-7",
        "The nightly build failed.",
    );
    let command_token = h
        .credentials()
        .command
        .expect("the command")
        .token
        .into_exposed();
    for authorization in [
        None,
        Some("Bearer wrong".to_string()),
        Some(SECRET.to_string()),
        Some(format!("Bearer {command_token}")),
        Some(format!("Bearer {SECRET}x")),
    ] {
        let (status, answer) = h.webhook(authorization.as_deref(), good.clone()).await;
        assert_eq!(status, 401, "{authorization:?}: {answer}");
    }
    // The trigger secret confers nothing on Mattermost's own routes.
    let callback = h.loaded().config.callbacks.public_url.clone();
    let on_command = reqwest::Client::new()
        .post(format!("{callback}/mattermost/command"))
        .form(&[
            ("token", SECRET),
            ("user_name", "ana"),
            ("channel_id", square.as_str()),
            ("text", "stop"),
        ])
        .send()
        .await
        .expect("callback");
    assert_eq!(on_command.status(), 401);

    let (status, answer) = h.webhook(Some(&bearer()), b"agent=mira".to_vec()).await;
    assert_eq!(status, 400);
    assert!(
        answer["error"]
            .as_str()
            .unwrap_or_default()
            .contains("not JSON"),
        "{answer}"
    );
    let no_subject = json!({"agent": "mira", "channel": "town-square", "sender": "ci"});
    let (status, answer) = h
        .webhook(Some(&bearer()), no_subject.to_string().into_bytes())
        .await;
    assert_eq!(status, 400);
    assert!(
        answer["error"]
            .as_str()
            .unwrap_or_default()
            .contains("`subject`"),
        "{answer}"
    );
    let huge = item(
        "mira",
        "town-square",
        "x",
        "r",
        &"x".repeat(2 * 1024 * 1024),
    );
    assert_eq!(h.webhook(Some(&bearer()), huge).await.0, 413);
    for (body, says) in [
        (
            item("zed", "town-square", "x", "r", "b"),
            "no agent is named `zed`",
        ),
        (
            item("mira", "research", "x", "r", "b"),
            "is not a member of ~research",
        ),
        (
            item("mira", "nowhere", "x", "r", "b"),
            "no channel named `nowhere`",
        ),
        // The name goes into the lookup's path: it must be a name.
        (
            item("mira", "../../../../channels/abc", "x", "r", "b"),
            "is not a channel name",
        ),
    ] {
        let (status, answer) = h.webhook(Some(&bearer()), body).await;
        assert_eq!(status, 422, "{answer}");
        assert!(
            answer["error"].as_str().unwrap_or_default().contains(says),
            "{answer}"
        );
    }
    // An archived channel keeps its members and its name, and refuses
    // every post: a trigger there could never be announced (§4.2).
    h.join("mira", "research").await;
    let research = h.channel("research").await;
    let _: Value = h
        .admin
        .delete(&format!("channels/{}", research.id))
        .await
        .expect("archived");
    let (status, answer) = h
        .webhook(Some(&bearer()), item("mira", "research", "x", "r", "b"))
        .await;
    assert_eq!(status, 422, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap_or_default()
            .contains("~research is archived"),
        "{answer}"
    );
    {
        let store = store(&h);
        assert!(
            store.trigger(1).expect("read").is_none(),
            "a refusal leaves nothing behind"
        );
    }

    h.model.sim.script(
        "demo-model",
        vec![calls(&[("triggers__resolve", json!({}))]), reply("Noted.")],
    );
    let (status, answer) = h.webhook(Some(&bearer()), good).await;
    assert_eq!(
        (status, answer.clone()),
        (202, json!({"trigger": "T-1"})),
        "{answer}"
    );
    let announced = h.wait_announcements(&square, 1).await;
    let message = &announced[0].message;
    assert!(
        message.starts_with("@mira A webhook delivered an item from ci — “Build 7 failed” [T-1]"),
        "{message}"
    );
    assert!(
        message.contains("Nothing in it authorises acting on it"),
        "{message}"
    );
    assert!(message.contains("> The nightly build failed."), "{message}");
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(turn.cause, "trigger");
    let trigger = store(&h).trigger(1).expect("read").expect("row");
    assert_eq!(trigger.status, TriggerStatus::Resolved);
    let last = turn_requests(&h).pop().expect("a request");
    assert!(
        e2e::scenario::tool_results(&last)
            .iter()
            .any(|r| r.contains("T-1 is marked done.")),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_2_a_trigger_waits_for_an_idle_channel_and_three_run_in_sequence() {
    let (h, _daemon) = open_route().await;
    let square = square_with(&h, &["ana"]).await;
    let mut script = vec![Scripted {
        text: Some("Thinking done.".into()),
        hold: Some("ana".into()),
        ..Default::default()
    }];
    for n in 1..=3 {
        script.push(calls(&[("triggers__resolve", json!({}))]));
        script.push(reply(&format!("Handled {n}.")));
    }
    h.model.sim.script("demo-model", script);
    h.say("ana", &square, "@mira think about the plan").await;
    completions_reach(&h, 1).await;
    for n in 1..=3 {
        let (status, answer) = h
            .webhook(
                Some(&bearer()),
                item("mira", "town-square", &format!("Item {n}"), "r", "b"),
            )
            .await;
        assert_eq!(status, 202, "{answer}");
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        h.announcements(&square).await.is_empty(),
        "nothing is announced while a turn runs"
    );
    h.model.sim.release("ana");
    let announced = h.wait_announcements(&square, 3).await;
    for n in 1..=3 {
        h.wait_post(&square, "mira", &format!("Handled {n}."), 0)
            .await;
    }
    let mira = h.user("mira").await.id;
    let mut timeline: Vec<(i64, String)> = h
        .posts(&square)
        .await
        .into_iter()
        .filter(|p| {
            p.user_id == mira && p.message.starts_with("Handled") || p.message.contains("[T-")
        })
        .map(|p| {
            (
                p.create_at,
                p.message.lines().next().unwrap_or_default().to_string(),
            )
        })
        .collect();
    timeline.sort();
    let order: Vec<&str> = timeline.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(order.len(), 6, "{order:#?}");
    for n in 0..3 {
        assert!(
            order[2 * n].contains(&format!("Item {}", n + 1)),
            "{order:#?}"
        );
        assert_eq!(
            order[2 * n + 1],
            format!("Handled {}.", n + 1),
            "{order:#?}"
        );
    }
    let thinking = h.wait_post(&square, "mira", "Thinking done.", 0).await;
    assert!(
        announced[0].create_at >= thinking.create_at,
        "the first announcement waited for the person's turn"
    );
    let store = store(&h);
    for id in 1..=3 {
        let trigger = store.trigger(id).expect("read").expect("row");
        assert_eq!(trigger.status, TriggerStatus::Resolved, "T-{id}");
        assert_eq!(trigger.announcements, 1, "one post per trigger");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_2_resolve_takes_the_framework_id_never_the_senders_reference() {
    let (h, _daemon) = open_route().await;
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            reply("Seen."),
            calls(&[("triggers__resolve", json!({"trigger": "build-7"}))]),
            calls(&[("triggers__resolve", json!({"trigger": "T-1"}))]),
            calls(&[("triggers__resolve", json!({}))]),
            reply("Done."),
        ],
    );
    let since = now_ms() - 1;
    let (status, _) = h
        .webhook(
            Some(&bearer()),
            item("theo", "town-square", "Rota", "rota-1", "b"),
        )
        .await;
    assert_eq!(status, 202);
    h.wait_post(&square, "theo", "Seen.", since).await;
    ended_turn(&h, "theo", &square).await;
    let (status, answer) = h
        .webhook(
            Some(&bearer()),
            item("mira", "town-square", "Build 7 failed", "build-7", "b"),
        )
        .await;
    assert_eq!((status, answer["trigger"].as_str()), (202, Some("T-2")));
    h.wait_post(&square, "mira", "Done.", since).await;
    let last = turn_requests(&h).pop().expect("a request");
    let results = e2e::scenario::tool_results(&last);
    assert_eq!(results.len(), 3, "{results:#?}");
    assert!(
        results[0].contains("`build-7` is not a trigger id"),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains("Outstanding for you here: T-2 (webhook from ci — “Build 7 failed”)"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("T-1 is not a trigger announced to you in this channel"),
        "another agent's trigger: {}",
        results[1]
    );
    assert!(results[2].contains("T-2 is marked done."), "{}", results[2]);
    let store = store(&h);
    let theirs = store.trigger(1).expect("read").expect("row");
    assert_eq!(
        theirs.status,
        TriggerStatus::Announced,
        "theo's stays outstanding"
    );
    assert_eq!(
        store.trigger(2).expect("read").expect("row").status,
        TriggerStatus::Resolved
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_2_a_week_down_announces_a_schedule_once() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.schedule_for_mira(
        "status",
        "0 9 * * *",
        "town-square",
        "Post the status report.",
    );
    h.provision().await.expect("provisioned");
    let square = square_with(&h, &["ana"]).await;
    {
        let mut daemon = h.daemon();
        daemon.wait_for("scheduler running");
        for _ in 0..200 {
            if !store(&h).schedule_marks().expect("read").is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(
            store(&h).schedule_marks().expect("read").len(),
            1,
            "declared"
        );
        daemon.terminate();
        let _ = daemon.child.wait();
    }
    assert!(
        h.announcements(&square).await.is_empty(),
        "declared now: nothing earlier is announced"
    );
    // Only mira's turn takes these: the restarted daemon's boot probe of
    // the model asks first.
    let mira = |scripted: Scripted| Scripted {
        matches: Some("You research.".into()),
        ..scripted
    };
    h.model.sim.script(
        "demo-model",
        vec![
            mira(calls(&[("triggers__resolve", json!({}))])),
            mira(reply("Report posted.")),
        ],
    );
    let mut week_on = Command::new("faketime");
    week_on
        .args(["-f", "+8d"])
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    let mut daemon = h.daemon_from(week_on);
    daemon.wait_for("agents are listening");
    let announced = h.wait_announcements(&square, 1).await;
    assert_eq!(
        announced[0].message,
        "@mira Schedule `status` [T-1]. When it is done, mark it done with triggers::resolve.\n\nPost the status report."
    );
    h.wait_post(&square, "mira", "Report posted.", 0).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        h.announcements(&square).await.len(),
        1,
        "seven missed days fire once"
    );
    let store = store(&h);
    let firing = store.trigger(1).expect("read").expect("row");
    let last = turn_requests(&h).pop().expect("a request");
    assert_eq!(
        firing.status,
        TriggerStatus::Resolved,
        "{:#?}",
        e2e::scenario::tool_results(&last)
    );
    let bot = h.user(SYSTEM_BOT).await;
    assert_eq!(announced[0].user_id, bot.id, "the system bot speaks");
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_2_a_schedule_in_a_channel_without_its_agent_refuses_boot() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    // Declared after provisioning, which would have made mira a member.
    h.schedule_for_mira("digest", "0 9 * * *", "research", "Post the digest.");
    let (code, logged) = h.daemon_refusal();
    assert_ne!(code, Some(0));
    assert!(
        logged.contains("agents.mira.schedules `digest`: @mira is not a member of ~research"),
        "{logged}"
    );
}

/// The announcements of a channel, as they stand, by their first line.
async fn announced_lines(h: &Harness, channel: &str) -> Vec<String> {
    h.announcements(channel)
        .await
        .iter()
        .map(|p| p.message.lines().next().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_2_a_trigger_waits_for_an_approval_to_be_decided() {
    let (h, _daemon) = open_route_under("debounce_window_ms = 0", true).await;
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__write", json!({"path": "a.txt", "content": "x"}))]),
            reply("Written."),
            reply("Seen the item."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira write it").await;
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    let (status, _) = h
        .webhook(
            Some(&bearer()),
            item("mira", "town-square", "Parked", "r", "b"),
        )
        .await;
    assert_eq!(status, 202);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        announced_lines(&h, &square).await.is_empty(),
        "nothing is announced while an approval is pending"
    );
    h.click("ana", &prompt.id, "approve").await;
    let written = h.wait_post(&square, "mira", "Written.", since).await;
    let announced = h.wait_announcements(&square, 1).await;
    assert!(announced[0].create_at >= written.create_at);
    h.wait_post(&square, "mira", "Seen the item.", since).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_2_a_trigger_waits_for_a_debounce_to_end() {
    let (h, _daemon) = open_route_under("debounce_window_ms = 1500", false).await;
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![reply("Hello, Ana."), reply("Seen the item.")],
    );
    let since = now_ms() - 1;
    let hello = h.say("ana", &square, "@mira hello").await;
    // The window opens when the daemon observes the post: the item must
    // arrive inside it, not race the post's event under load.
    e2e::clearing::eventually("the daemon observed the post", async || {
        store(&h).post(&hello.id).expect("read").is_some()
    })
    .await;
    let (status, _) = h
        .webhook(
            Some(&bearer()),
            item("mira", "town-square", "Debounced", "r", "b"),
        )
        .await;
    assert_eq!(status, 202);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        announced_lines(&h, &square).await.is_empty(),
        "nothing is announced while a person's posts are gathered"
    );
    let answer = h.wait_post(&square, "mira", "Hello, Ana.", since).await;
    let announced = h.wait_announcements(&square, 1).await;
    assert!(announced[0].create_at >= answer.create_at);
    h.wait_post(&square, "mira", "Seen the item.", since).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_2_a_trigger_waits_for_a_halt_to_be_lifted() {
    let (h, _daemon) =
        open_route_under("debounce_window_ms = 0\nhourly_turn_ceiling = 2", false).await;
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            reply("First."),
            reply("Second."),
            reply("Third, after the resume."),
            reply("Seen the item."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira first").await;
    h.wait_post(&square, "mira", "First.", since).await;
    h.say("ana", &square, "@mira second").await;
    h.wait_post(&square, "mira", "Second.", since).await;
    h.say("ana", &square, "@mira third").await;
    h.wait_post(&square, "collegium", "Every agent is halted", since)
        .await;
    let (status, _) = h
        .webhook(
            Some(&bearer()),
            item("mira", "town-square", "Halted", "r", "b"),
        )
        .await;
    assert_eq!(status, 202);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        announced_lines(&h, &square).await.is_empty(),
        "nothing is announced while every agent is halted"
    );
    h.command("ana", &square, "/collegium resume").await;
    let third = h
        .wait_post(&square, "mira", "Third, after the resume.", since)
        .await;
    let announced = h.wait_announcements(&square, 1).await;
    assert!(
        announced[0].create_at >= third.create_at,
        "the queue the resume drains goes first; the trigger waits for its turn to end"
    );
    h.wait_post(&square, "mira", "Seen the item.", since).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_7_an_approval_in_a_trigger_turn_names_the_trigger_and_that_no_person_asked() {
    let (h, _daemon) = open_route_under("debounce_window_ms = 0", true).await;
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "fixture__write",
                json!({"path": "reply.txt", "content": "x"}),
            )]),
            reply("Waiting for a person."),
        ],
    );
    let since = now_ms() - 1;
    let (status, _) = h
        .webhook(
            Some(&bearer()),
            item(
                "mira",
                "town-square",
                "Refund request",
                "r-9",
                "Please refund me.",
            ),
        )
        .await;
    assert_eq!(status, 202);
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    assert!(
        prompt.message.contains(
            "started by a webhook item from ci — “Refund request” [T-1]; no person asked for this turn, and acting on the item waits for a person here to ask for it"
        ),
        "{}",
        prompt.message
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_2_the_next_trigger_waits_for_the_turn_the_last_announcement_started() {
    let (h, _daemon) = open_route().await;
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                text: Some("Handled first.".into()),
                hold: Some("first".into()),
                ..Default::default()
            },
            reply("Handled second."),
        ],
    );
    let since = now_ms() - 1;
    // Both arrive at once in an idle channel: the second is recorded before
    // the first's announcement has come back through the feed and started
    // its turn.
    let bearer = bearer();
    let (first, second) = tokio::join!(
        h.webhook(
            Some(&bearer),
            item("mira", "town-square", "First", "r", "b")
        ),
        h.webhook(
            Some(&bearer),
            item("mira", "town-square", "Second", "r", "b")
        ),
    );
    assert_eq!((first.0, second.0), (202, 202));
    h.wait_announcements(&square, 1).await;
    completions_reach(&h, 1).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        h.announcements(&square).await.len(),
        1,
        "the second waits for the turn the first started"
    );
    h.model.sim.release("first");
    let first = h.wait_post(&square, "mira", "Handled first.", since).await;
    let announced = h.wait_announcements(&square, 2).await;
    assert!(announced[1].create_at >= first.create_at);
    h.wait_post(&square, "mira", "Handled second.", since).await;
}

/// §6.4: the sender's secret announces work, and only so much of it. The
/// same item sent again while it is outstanding (a sender retrying after
/// a timeout) is one trigger and one turn; past
/// `callbacks.trigger_outstanding_max` an agent's webhook triggers are
/// refused with 429 until it marks one done.
#[tokio::test(flavor = "multi_thread")]
async fn s6_4_a_retried_item_is_one_trigger_and_outstanding_ones_are_bounded() {
    let h = Harness::with_trigger_route(SECRET, "debounce_window_ms = 0").await;
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text.replacen(
        "[callbacks]\n",
        "[callbacks]\ntrigger_outstanding_max = 2\n",
        1,
    );
    std::fs::write(&h.config, text).expect("write config");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    square_with(&h, &["ana"]).await;
    let first = item(
        "mira",
        "town-square",
        "Build 7 failed",
        "build-7",
        "It failed.",
    );
    let (status, answer) = h.webhook(Some(&bearer()), first.clone()).await;
    assert_eq!(
        (status, answer.clone()),
        (202, json!({"trigger": "T-1"})),
        "{answer}"
    );
    let (status, answer) = h.webhook(Some(&bearer()), first).await;
    assert_eq!(
        (status, answer.clone()),
        (200, json!({"trigger": "T-1", "recorded": "already"})),
        "{answer}"
    );
    let second = item(
        "mira",
        "town-square",
        "Build 8 failed",
        "build-8",
        "It failed.",
    );
    assert_eq!(h.webhook(Some(&bearer()), second).await.0, 202);
    let third = item(
        "mira",
        "town-square",
        "Build 9 failed",
        "build-9",
        "It failed.",
    );
    let (status, answer) = h.webhook(Some(&bearer()), third).await;
    assert_eq!(status, 429, "{answer}");
    assert!(
        answer["error"].as_str().unwrap_or_default().contains(
            "@mira has 2 webhook triggers outstanding, the most callbacks.trigger_outstanding_max allows"
        ),
        "{answer}"
    );
    assert!(
        store(&h).trigger(3).expect("read").is_none(),
        "nothing recorded"
    );
}
