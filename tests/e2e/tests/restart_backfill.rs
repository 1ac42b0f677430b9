//! The boot's order (§7.3): backfill (step 3, §8.2) runs before the queue
//! drains, so the first turn after a restart assembles its window from a
//! store that holds what was posted while the daemon was down.

use e2e::people::now_ms;
use e2e::scenario::{reply, store, turn_requests, with_fixture};
use model_sim::script::{Failure, Scripted};

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_a_post_made_while_the_daemon_was_down_is_in_the_first_turns_window_after_restart() {
    let (h, mut daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    // A failure leaves the queue standing (§7.1), so the boot drains it.
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
    let asked = h.say("ana", &square, "@mira summarise the week").await;
    h.wait_post(&square, "mira", "refused the credential", since)
        .await;
    e2e::scenario::ended_turn(&h, "mira", &square).await;
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
    let _ = daemon.child.wait();

    // Posted while nothing listens: only a backfill records it.
    let down = h
        .say("ana", &square, "The week's figures are in the blue folder.")
        .await;
    let before = turn_requests(&h).len();
    h.model.sim.script(
        "demo-model",
        vec![Scripted {
            matches: Some("You research.".into()),
            ..reply("The week, from the blue folder.")
        }],
    );
    let mut again = h.daemon();
    again.wait_for("agents are listening");
    h.wait_post(&square, "mira", "The week, from the blue folder.", since)
        .await;

    let turns = store(&h).turns_of("mira", &square).expect("turns");
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(
        turns[1].answers_post_id.as_deref(),
        Some(asked.id.as_str()),
        "the boot drained the standing queue"
    );
    let first_after = turn_requests(&h)
        .get(before)
        .cloned()
        .expect("the drained turn's completion");
    assert!(
        first_after.to_string().contains("in the blue folder"),
        "the post made while the daemon was down ({}) is in the window: {first_after}",
        down.id
    );
    assert!(
        store(&h).post(&down.id).expect("read").is_some(),
        "backfilled"
    );
}
