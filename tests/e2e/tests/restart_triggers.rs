//! Restart and triggers (§7.3, §4.2): an announcement the stopped process
//! posted but never saw arrive started no turn, so its trigger is announced
//! again; and where the crash fell before the store recorded the
//! announcement, the post read back at boot counts as the first of the two
//! §4.2 allows, never as nothing.

use collegium_control::store::TriggerStatus;
use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{ended_turn, reply, square_with, store};
use e2e::triggers::{SYSTEM_BOT, item};

const SECRET: &str = "trigger-secret-for-the-restart-tests";

/// Where the crash falls relative to the store recording the announcement.
#[derive(PartialEq)]
enum Crash {
    AfterRecording,
    BeforeRecording,
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_an_announcement_no_turn_saw_is_announced_again_after_a_crash() {
    announced_then_crash(Crash::AfterRecording).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_an_announcement_a_crash_left_unrecorded_counts_as_the_first() {
    announced_then_crash(Crash::BeforeRecording).await;
}

async fn announced_then_crash(when: Crash) {
    let h = Harness::with_trigger_route(SECRET, "debounce_window_ms = 0").await;
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;

    // Every bot's socket holds what comes next, so the process dies before
    // the announcement reaches it and starts nothing.
    for bot in ["mira", "theo", SYSTEM_BOT] {
        h.hold_events(bot, 120_000, 100).await;
    }
    let since = now_ms() - 1;
    let (status, answer) = h
        .webhook(
            Some(&format!("Bearer {SECRET}")),
            item(
                "mira",
                "town-square",
                "Build 7 failed",
                "build-7",
                "It failed.",
            ),
        )
        .await;
    assert_eq!(status, 202, "{answer}");
    let first = h.wait_announcements(&square, 1).await.remove(0);
    // The store records the announcement right after Mattermost answers.
    let mut recorded = None;
    for _ in 0..200 {
        recorded = store(&h)
            .trigger(1)
            .expect("read")
            .expect("row")
            .announcement_post_id;
        if recorded.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(recorded.as_deref(), Some(first.id.as_str()));
    daemon.child.kill().expect("SIGKILL");
    let _ = daemon.child.wait();
    assert!(
        store(&h)
            .last_turn("mira", &square)
            .expect("query")
            .is_none(),
        "the announcement started no turn before the crash"
    );
    if when == Crash::BeforeRecording {
        forget_the_announcement(&h);
    }

    h.model
        .sim
        .script("demo-model", vec![reply("Looking at build 7.")]);
    let mut again = h.daemon();
    again.wait_for("agents are listening");
    let notice = h
        .wait_post(&square, SYSTEM_BOT, "Collegium restarted", since)
        .await;
    assert!(
        notice
            .message
            .contains("1 trigger will be announced again."),
        "{}",
        notice.message
    );
    let announced = h.wait_announcements(&square, 2).await;
    assert_eq!(announced[0].id, first.id);
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(turn.cause, "trigger");
    assert_eq!(
        turn.answers_post_id.as_deref(),
        Some(announced[1].id.as_str())
    );
    let trigger = store(&h).trigger(1).expect("read").expect("row");
    // Outstanding, not pending: no third post is coming (§4.2).
    assert_eq!(trigger.status, TriggerStatus::Announced);
    assert_eq!(
        trigger.announcements, 2,
        "the post the crash left unrecorded is the first of the two"
    );
    assert_eq!(
        trigger.announcement_post_id.as_deref(),
        Some(announced[1].id.as_str())
    );
}

/// The store as a crash between Mattermost creating the announcement and
/// the store recording it leaves it: the trigger still pending, never
/// announced.
fn forget_the_announcement(h: &Harness) {
    let conn = rusqlite::Connection::open(h.state_dir().join("collegium.db")).expect("store");
    let changed = conn
        .execute(
            "UPDATE triggers SET status = 'pending', announcement_post_id = NULL,
                 announcements = 0, announced_at = NULL WHERE id = 1",
            [],
        )
        .expect("forget");
    assert_eq!(changed, 1);
}
