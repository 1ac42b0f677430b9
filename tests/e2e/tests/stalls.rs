//! Stalls are announced (§7.6): a long turn and a standing queue are each
//! named once per episode by the system bot, which never acts on them.

use std::time::Duration;

use e2e::people::now_ms;
use e2e::scenario::{completions_reach, reply, running};
use model_sim::script::{Failure, Scripted};

#[tokio::test(flavor = "multi_thread")]
async fn s7_6_a_long_turn_is_announced_once_and_again_when_work_queues_behind_it() {
    let (h, _daemon) = running("debounce_window_ms = 0\nstall_turn_secs = 1").await;
    let square = e2e::scenario::square_with(&h, &["ana", "bo"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                text: Some("Finally done.".into()),
                hold: Some("long".into()),
                ..Default::default()
            },
            reply("Bo's answer."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira a long job").await;
    completions_reach(&h, 1).await;
    let first = h
        .wait_post(&square, "collegium", "Mira's turn here has run for", since)
        .await;
    assert!(
        first.message.contains("without calling a tool yet"),
        "{}",
        first.message
    );
    assert!(
        first.message.contains("`/collegium kill`"),
        "{}",
        first.message
    );
    assert!(!first.message.contains("@mira"), "named without @");
    // The notice points at a status post, so one is opened first (§7.6).
    let status = e2e::scenario::status_post(&h, &square).await;
    assert!(
        status.message.contains("no tool called yet"),
        "{}",
        status.message
    );
    assert!(
        status.create_at <= first.create_at,
        "opened before the notice"
    );
    h.say("bo", &square, "@mira a quick one").await;
    h.wait_post(&square, "collegium", "now waits behind it", since)
        .await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let notices = h
        .posts(&square)
        .await
        .into_iter()
        .filter(|p| p.message.contains("Mira's"))
        .count();
    assert_eq!(notices, 2, "once per episode, re-armed once by queued work");
    h.model.sim.release("long");
    h.wait_post(&square, "mira", "Finally done.", since).await;
    h.wait_edit(&status.id, "Done in").await;
    h.wait_post(&square, "mira", "Bo's answer.", since).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_6_a_standing_queue_is_announced_once_with_what_clears_it() {
    let (h, _daemon) = running("debounce_window_ms = 0\nstall_queue_secs = 1").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![Scripted {
            fail: Some(Failure {
                status: Some(401),
                ..Default::default()
            }),
            ..Default::default()
        }],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira hello").await;
    h.wait_post(&square, "mira", "This turn ended", since).await;
    let notice = h
        .wait_post(&square, "collegium", "waiting here for", since)
        .await;
    assert!(
        notice.message.contains("Mira has had 1 post waiting"),
        "{}",
        notice.message
    );
    assert!(
        notice.message.contains("`/collegium queue mira`"),
        "{}",
        notice.message
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let count = h
        .posts(&square)
        .await
        .iter()
        .filter(|p| p.message.contains("waiting here for"))
        .count();
    assert_eq!(count, 1, "said once, not every minute it stands");
}

/// §7.6: a turn whose tool is still running has called a tool, and its
/// long-turn notice says so.
#[tokio::test(flavor = "multi_thread")]
async fn s7_6_the_long_turn_notice_counts_a_call_still_running() {
    let (h, _daemon, _) =
        e2e::scenario::with_fixture("debounce_window_ms = 0\nstall_turn_secs = 1").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            e2e::scenario::calls(&[("fixture__slow", serde_json::json!({"ms": 6000}))]),
            reply("Slowly done."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira a slow job").await;
    let notice = h
        .wait_post(&square, "collegium", "Mira's turn here has run for", since)
        .await;
    assert!(
        !notice.message.contains("without calling a tool yet"),
        "{}",
        notice.message
    );
    h.wait_post(&square, "mira", "Slowly done.", since).await;
}
