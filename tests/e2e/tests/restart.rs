//! Restart (§7.3): nothing resumes. A turn a crash cut off is abandoned: its
//! status post and its pending prompt say so, the boot notice states the
//! downtime against the process, and a turn that changed nothing is queued
//! again and answered by a fresh turn.

use e2e::people::now_ms;
use e2e::scenario::{calls, completions_reach, reply, store, with_fixture};
use model_sim::script::Scripted;
use serde_json::json;

fn crash(daemon: &mut e2e::Daemon) {
    daemon.child.kill().expect("SIGKILL");
    let _ = daemon.child.wait();
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_a_turn_parked_on_an_approval_is_abandoned_and_its_prompt_invalidated() {
    let (h, mut daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![calls(&[(
            "fixture__write",
            json!({"path": "a.txt", "content": "x"}),
        )])],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira write it").await;
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    let status = e2e::scenario::status_post(&h, &square).await;
    crash(&mut daemon);

    let mut again = h.daemon();
    again.wait_for("agents are listening");
    let notice = h
        .wait_post(&square, "collegium", "Collegium restarted", since)
        .await;
    assert!(
        notice.message.contains("after an unclean stop"),
        "{}",
        notice.message
    );
    assert!(
        notice.message.contains("last known alive at"),
        "{}",
        notice.message
    );
    assert!(
        notice.message.contains("1 turn in flight was abandoned"),
        "{}",
        notice.message
    );
    h.wait_edit(&prompt.id, "Invalidated").await;
    h.wait_edit(&status.id, "Abandoned").await;
    let store = store(&h);
    let turn = store.turns_of("mira", &square).expect("turns").remove(0);
    assert_eq!(turn.exit_kind.as_deref(), Some("abandoned"));
    let approval = store
        .decision_for_prompt(&prompt.id)
        .expect("query")
        .expect("approval");
    assert_eq!(
        store
            .decision(&approval)
            .expect("query")
            .expect("row")
            .outcome
            .as_deref(),
        Some("invalidated")
    );
    assert!(
        fixture_toolset::asked(&record).is_empty(),
        "nothing resumes"
    );
    assert!(
        store.queued("mira", &square).expect("queue").is_empty(),
        "a turn that parked on a person had effects: not queued again"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_a_turn_that_changed_nothing_is_queued_again_after_a_clean_stop_and_answered_afresh() {
    let (h, mut daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![Scripted {
            text: Some("Never finished.".into()),
            hold: Some("forever".into()),
            ..Default::default()
        }],
    );
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira summarise the week").await;
    completions_reach(&h, 1).await;
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
    let _ = daemon.child.wait();

    // Matched to the agent's prompt, so the next boot's model check does
    // not take it.
    h.model.sim.script(
        "demo-model",
        vec![Scripted {
            matches: Some("You research.".into()),
            ..reply("Here is the week, answered afresh.")
        }],
    );
    let mut again = h.daemon();
    again.wait_for("agents are listening");
    let notice = h
        .wait_post(&square, "collegium", "Collegium restarted", since)
        .await;
    assert!(
        notice.message.contains("(a clean stop)"),
        "{}",
        notice.message
    );
    assert!(
        notice.message.contains("1 post was queued again"),
        "{}",
        notice.message
    );
    h.wait_post(&square, "mira", "answered afresh", since).await;
    let turns = store(&h).turns_of("mira", &square).expect("turns");
    assert_eq!(turns[0].exit_kind.as_deref(), Some("abandoned"));
    assert_eq!(
        turns[1].answers_post_id.as_deref(),
        Some(asked.id.as_str()),
        "the fresh turn answers the same post"
    );
    h.model.sim.release("forever");
}
