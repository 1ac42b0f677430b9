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
    parked_on_an_approval_then_crash(Crash::AfterRecording).await;
}

/// A crash can fall between Mattermost creating a post and the store
/// recording its id. The next boot reads the post back from the channel and
/// still closes the status post and invalidates the prompt, whose buttons
/// would otherwise stay live.
#[tokio::test(flavor = "multi_thread")]
async fn s7_3_a_prompt_and_status_post_a_crash_left_unrecorded_are_still_closed() {
    parked_on_an_approval_then_crash(Crash::BeforeRecording).await;
}

/// Where the crash falls relative to the store recording the posts' ids.
#[derive(PartialEq)]
enum Crash {
    AfterRecording,
    BeforeRecording,
}

/// The store as a crash between creating the posts and recording their ids
/// leaves it: the decision and the turn name no post.
fn forget_post_ids(h: &e2e::Harness) {
    let conn = rusqlite::Connection::open(h.state_dir().join("collegium.db")).expect("store");
    conn.execute_batch(
        "UPDATE decisions SET prompt_post_id = NULL; UPDATE turns SET status_post_id = NULL;",
    )
    .expect("forget");
    let recorded: i64 = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM decisions WHERE prompt_post_id IS NOT NULL)
                  + (SELECT COUNT(*) FROM turns WHERE status_post_id IS NOT NULL)",
            [],
            |row| row.get(0),
        )
        .expect("count");
    assert_eq!(recorded, 0);
}

async fn parked_on_an_approval_then_crash(when: Crash) {
    let (h, mut daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let (prompt, since) = e2e::scenario::parked_on_a_write(&h, &square).await;
    let status = e2e::scenario::status_post(&h, &square).await;
    crash(&mut daemon);
    if when == Crash::BeforeRecording {
        forget_post_ids(&h);
    }

    let _again = reboot(&h, vec![]);
    let notice = boot_notice(&h, &square, since).await;
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
    assert_eq!(
        store.status_post_id(&turn.id).expect("query").as_deref(),
        Some(status.id.as_str())
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

    let _again = reboot(
        &h,
        vec![(MIRA, reply("Here is the week, answered afresh."))],
    );
    let notice = boot_notice(&h, &square, since).await;
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

/// Boots the daemon again after a stop, the model scripted with `answers`
/// matched to their agents' prompts (so the boot's model check takes none).
fn reboot(h: &e2e::Harness, answers: Vec<(&str, Scripted)>) -> e2e::Daemon {
    let scripted = answers
        .into_iter()
        .map(|(prompt, answer)| Scripted {
            matches: Some(prompt.into()),
            ..answer
        })
        .collect();
    h.model.sim.script("demo-model", scripted);
    let mut again = h.daemon();
    again.wait_for("agents are listening");
    again
}

/// The boot notice posted since `since` in the main channel (§7.3).
async fn boot_notice(h: &e2e::Harness, channel: &str, since: i64) -> mattermost_wire::model::Post {
    h.wait_post(channel, "collegium", "Collegium restarted", since)
        .await
}

const MIRA: &str = "You research.";
const THEO: &str = "You run operations.";

fn held(name: &str) -> Scripted {
    Scripted {
        text: Some("Never finished.".into()),
        hold: Some(name.into()),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_a_crash_before_any_tool_queues_the_post_again_and_answers_it_afresh() {
    let (h, mut daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script("demo-model", vec![held("never")]);
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira summarise the week").await;
    completions_reach(&h, 1).await;
    crash(&mut daemon);

    let _again = reboot(
        &h,
        vec![(MIRA, reply("The week, answered after the crash."))],
    );
    let notice = boot_notice(&h, &square, since).await;
    assert!(
        notice.message.contains("after an unclean stop")
            && notice.message.contains("1 post was queued again"),
        "a turn that never completed a model call is queued again: {}",
        notice.message
    );
    h.wait_post(&square, "mira", "answered after the crash", since)
        .await;
    h.model.sim.release("never");
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_after_unclean_stops_a_post_is_returned_at_most_once() {
    let (h, mut daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let read = || calls(&[("fixture__read", json!({"key": "week"}))]);
    h.model
        .sim
        .script("demo-model", vec![read(), held("first")]);
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira summarise the week").await;
    completions_reach(&h, 2).await;
    crash(&mut daemon);

    // It made a completion and changed nothing: returned, once.
    let mut again = reboot(&h, vec![(MIRA, read()), (MIRA, held("second"))]);
    let notice = boot_notice(&h, &square, since).await;
    assert!(
        notice.message.contains("1 post was queued again"),
        "{}",
        notice.message
    );
    completions_reach(&h, 4).await;
    crash(&mut again);

    let between = now_ms();
    let _third = reboot(&h, vec![]);
    let notice = boot_notice(&h, &square, between).await;
    assert!(
        notice
            .message
            .contains("because an unclean stop had already returned them once"),
        "{}",
        notice.message
    );
    assert!(notice.message.contains(&asked.id), "{}", notice.message);
    assert!(
        store(&h).queued("mira", &square).expect("queue").is_empty(),
        "not queued a second time"
    );
    assert_eq!(
        store(&h).turns_of("mira", &square).expect("turns").len(),
        2,
        "no third turn"
    );
    assert_eq!(
        fixture_toolset::asked(&record).len(),
        2,
        "one read per turn"
    );
    h.model.sim.release("first");
    h.model.sim.release("second");
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_a_crash_after_a_tool_with_effects_never_runs_it_twice() {
    let (h, mut daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__slow", json!({"ms": 0}))]),
            held("after-effect"),
        ],
    );
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira do the thing").await;
    completions_reach(&h, 2).await;
    assert_eq!(fixture_toolset::asked(&record).len(), 1);
    crash(&mut daemon);

    let _again = reboot(&h, vec![]);
    let notice = boot_notice(&h, &square, since).await;
    assert!(
        notice
            .message
            .contains("Not queued again, because the work may have had effects"),
        "{}",
        notice.message
    );
    assert!(notice.message.contains(&asked.id), "{}", notice.message);
    assert!(store(&h).queued("mira", &square).expect("queue").is_empty());
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        fixture_toolset::asked(&record).len(),
        1,
        "the call with effects never runs twice"
    );
    h.model.sim.release("after-effect");
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_a_hand_off_a_crash_cut_off_reaches_its_colleague() {
    let (h, mut daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__read", json!({"key": "numbers"}))]),
            Scripted {
                text: Some("@theo please check the numbers.".into()),
                hold: Some("hand-off".into()),
                ..Default::default()
            },
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the numbers checked").await;
    completions_reach(&h, 2).await;
    // The turn posts its hand-off, then stalls closing its status post: the
    // colleague's turn waits for the writer to stop acting (§5.2).
    h.fault_delay("PUT", "/api/v4/posts/", 30_000, 1).await;
    h.model.sim.release("hand-off");
    let hand_off = h
        .wait_post(&square, "mira", "please check the numbers", since)
        .await;
    // The sweep finds a hand-off among the posts the store recorded: the
    // crash comes once the daemon has recorded it, as in a real one.
    for _ in 0..400 {
        if store(&h).post(&hand_off.id).expect("read").is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    crash(&mut daemon);
    assert!(
        store(&h)
            .turns_of("theo", &square)
            .expect("turns")
            .is_empty(),
        "theo had not started"
    );

    let _again = reboot(&h, vec![(THEO, reply("Theo checked the numbers."))]);
    let notice = boot_notice(&h, &square, since).await;
    assert!(
        notice
            .message
            .contains("1 hand-off to a colleague was queued too"),
        "{}",
        notice.message
    );
    h.wait_post(&square, "theo", "Theo checked the numbers.", since)
        .await;
    let theo = store(&h).turns_of("theo", &square).expect("turns");
    assert_eq!(
        theo[0].answers_post_id.as_deref(),
        Some(hand_off.id.as_str())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_boot_drains_a_queue_a_failure_left_standing() {
    let (h, mut daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![Scripted {
            fail: Some(model_sim::script::Failure {
                status: Some(401),
                ..Default::default()
            }),
            ..Default::default()
        }],
    );
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira summarise the week").await;
    h.wait_post(&square, "mira", "refused the credential", since)
        .await;
    e2e::scenario::ended_turn(&h, "mira", &square).await;
    assert_eq!(
        store(&h).queued("mira", &square).expect("queue"),
        std::slice::from_ref(&asked.id),
        "the failure left the queue standing (§7.1)"
    );
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
    let _ = daemon.child.wait();

    // No turn was in flight, so the sweep queued nothing again; the boot
    // still drains what stood (§7.3).
    let _again = reboot(&h, vec![(MIRA, reply("The week, at last."))]);
    h.wait_post(&square, "mira", "The week, at last.", since)
        .await;
    let turns = store(&h).turns_of("mira", &square).expect("turns");
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(turns[1].answers_post_id.as_deref(), Some(asked.id.as_str()));
}
