//! Inbound mail end to end (§3.13, §4.2): the daemon's poll through the
//! real mail worker against a real Dovecot, each arrival recorded once and
//! announced by the system bot in the mailbox's channel, and resolving it
//! marking the message read. The mailbox is read every second.

use std::time::Duration;

use collegium_control::store::{Trigger, TriggerStatus};
use e2e::Harness;
use e2e::mail_worker::{ADDRESS, MailServers, PASSWORD};
use e2e::people::now_ms;
use e2e::scenario::{calls, reply, store, tool_results, turn_requests};
use model_sim::script::Scripted;
use serde_json::json;

/// A deployment whose @mira reads the mailbox, the worker serving it; the
/// servers, the worker and ~research's id.
async fn reading(h: &Harness) -> (MailServers, e2e::mail_worker::MailWorker) {
    let servers = e2e::mail_worker::deployment(h, PASSWORD).await;
    let worker = e2e::mail_worker::start(&h.config, &servers.ca()).expect("the mail worker");
    (servers, worker)
}

/// Waits until the daemon has read the mailbox to its head once.
async fn cursor_set(h: &Harness) {
    for _ in 0..400 {
        if store(h).mail_cursor("mira").expect("read").is_some() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the mailbox was never read");
}

/// Waits until @mira has `n` mail triggers recorded.
async fn recorded(h: &Harness, n: usize) -> Vec<Trigger> {
    for _ in 0..2400 {
        let found = store(h).triggers_of("mira").expect("read");
        if found.len() >= n {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "{n} arrivals were never recorded; {} were",
        store(h).triggers_of("mira").expect("read").len()
    );
}

fn subjects(triggers: &[Trigger]) -> Vec<String> {
    triggers.iter().map(|t| t.subject.clone()).collect()
}

/// A scripted completion for @mira's turns alone: the boot probe and
/// other agents' turns do not take it.
fn mira(scripted: Scripted) -> Scripted {
    Scripted {
        matches: Some("You research.".into()),
        ..scripted
    }
}

/// Every turn of @mira's answers "Noted.", however many arrivals start one.
fn noting(h: &Harness) {
    h.model.sim.script(
        "demo-model",
        vec![mira(Scripted {
            text: Some("Noted.".into()),
            standing: true,
            ..Default::default()
        })],
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_old_mail_is_not_news_and_each_arrival_is_announced_once() {
    let h = Harness::start().await;
    let (servers, _worker) = reading(&h).await;
    for n in 0..40 {
        servers.seed_from_ana(&format!("old-{n}"), "Already read by a person.");
    }
    let mut script = Vec::new();
    for n in 1..=3 {
        script.push(mira(calls(&[("triggers__resolve", json!({}))])));
        script.push(mira(reply(&format!("Read new-{n}."))));
    }
    h.model.sim.script("demo-model", script);
    let mut daemon = h.daemon();
    daemon.wait_for("mail poll running");
    cursor_set(&h).await;
    let research = h.channel("research").await.id;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        store(&h).triggers_of("mira").expect("read").is_empty(),
        "forty messages there before the first connection announce nothing"
    );
    for n in 1..=3 {
        servers.seed_from_ana(
            &format!("new-{n}"),
            &format!("Arrival number {n}.\n\n@channel @theo look"),
        );
    }
    let announced = h.wait_announcements(&research, 3).await;
    for (n, post) in announced.iter().enumerate() {
        let n = n + 1;
        assert!(
            post.message.starts_with(&format!(
                "@mira New mail from Ana <ana@outside.test> — “new-{n}” [T-{n}]"
            )),
            "{}",
            post.message
        );
        assert!(
            post.message.contains(&format!("> Arrival number {n}.")),
            "{}",
            post.message
        );
        assert!(
            post.message.contains("＠channel ＠theo look"),
            "{}",
            post.message
        );
        assert!(post.message.contains("No attachments."), "{}", post.message);
    }
    for n in 1..=3 {
        h.wait_post(&research, "mira", &format!("Read new-{n}."), 0)
            .await;
    }
    let triggers = recorded(&h, 3).await;
    assert_eq!(subjects(&triggers), ["new-1", "new-2", "new-3"]);
    assert!(triggers.iter().all(|t| t.status == TriggerStatus::Resolved));
    // Resolving marked each read; the forty old ones are as they were.
    let seen = servers.dovecot.seen(ADDRESS, "INBOX").expect("flags");
    assert_eq!(seen, [41, 42, 43], "exactly the three handled");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(h.announcements(&research).await.len(), 3, "each once");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_backlog_while_down_is_recorded_once_in_order_and_in_batches() {
    let h = Harness::start().await;
    let (servers, _worker) = reading(&h).await;
    noting(&h);
    {
        let mut daemon = h.daemon();
        daemon.wait_for("mail poll running");
        cursor_set(&h).await;
    }
    for n in 0..200 {
        servers.seed_from_ana(
            &format!("while-down-{n:03}"),
            "Sent while the daemon was down.",
        );
    }
    // Killed mid-drain: what a poll read and did not commit is read again.
    {
        let mut daemon = h.daemon();
        daemon.wait_for("mail poll running");
        recorded(&h, 25).await;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(daemon.child.id()).expect("pid")),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("SIGKILL");
        let _ = daemon.child.wait();
    }
    let mut daemon = h.daemon();
    daemon.wait_for("mail poll running");
    let triggers = recorded(&h, 200).await;
    let expected: Vec<String> = (0..200).map(|n| format!("while-down-{n:03}")).collect();
    assert_eq!(subjects(&triggers), expected, "all, once, in order");
    let mut per_poll = std::collections::BTreeMap::<i64, usize>::new();
    for trigger in &triggers {
        *per_poll.entry(trigger.recorded_at).or_default() += 1;
    }
    assert!(
        per_poll
            .values()
            .all(|n| *n <= collegium_control::triggers::mail_poll::BATCH as usize),
        "a backlog drains a batch at a time: {per_poll:?}"
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        store(&h).triggers_of("mira").expect("read").len(),
        200,
        "nothing more"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_renumbered_mailbox_repeats_nothing() {
    let h = Harness::start().await;
    let (servers, _worker) = reading(&h).await;
    noting(&h);
    let mut daemon = h.daemon();
    daemon.wait_for("mail poll running");
    cursor_set(&h).await;
    servers.seed_from_ana("before-1", "b");
    servers.seed_from_ana("before-2", "b");
    recorded(&h, 2).await;
    let before = store(&h)
        .mail_cursor("mira")
        .expect("read")
        .expect("cursor");
    servers
        .dovecot
        .set_uidvalidity(ADDRESS, "INBOX", before.uidvalidity + 1000)
        .expect("renumbered");
    servers.seed_from_ana("after-1", "a");
    let triggers = recorded(&h, 3).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let triggers_now = store(&h).triggers_of("mira").expect("read");
    assert_eq!(
        subjects(&triggers_now),
        ["before-1", "before-2", "after-1"],
        "{triggers:?}"
    );
    let after = store(&h)
        .mail_cursor("mira")
        .expect("read")
        .expect("cursor");
    assert_eq!(after.uidvalidity, before.uidvalidity + 1000);
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_an_unreachable_mailbox_is_said_and_said_again_when_it_answers() {
    let h = Harness::start().await;
    let (mut servers, _worker) = reading(&h).await;
    let mut daemon = h.daemon();
    daemon.wait_for("mail poll running");
    cursor_set(&h).await;
    let research = h.channel("research").await.id;
    let since = now_ms() - 1;
    servers.dovecot.stop();
    let down = h
        .wait_post(
            &research,
            e2e::triggers::SYSTEM_BOT,
            "cannot be reached",
            since,
        )
        .await;
    assert!(down.message.contains(ADDRESS), "{}", down.message);
    assert!(
        !down.message.contains("@mira"),
        "named, not addressed: {}",
        down.message
    );
    servers.dovecot.restart().expect("Dovecot again");
    h.wait_post(&research, e2e::triggers::SYSTEM_BOT, "answers again", since)
        .await;
    servers.seed_from_ana("after-the-outage", "b");
    h.model.sim.script("demo-model", vec![mira(reply("Seen."))]);
    recorded(&h, 1).await;
    let notices: Vec<_> = h
        .posts(&research)
        .await
        .into_iter()
        .filter(|p| p.message.contains("cannot be reached"))
        .collect();
    assert_eq!(notices.len(), 1, "said once while it stays down");
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_2_resolving_mail_marks_it_read_and_a_failure_leaves_it_outstanding() {
    let h = Harness::start().await;
    let (mut servers, _worker) = reading(&h).await;
    let mut daemon = h.daemon();
    daemon.wait_for("mail poll running");
    cursor_set(&h).await;
    let research = h.channel("research").await.id;
    h.person("ana", &["research"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            mira(Scripted {
                hold: Some("resolve".into()),
                ..calls(&[("triggers__resolve", json!({}))])
            }),
            mira(reply("I could not mark it done.")),
            mira(calls(&[("triggers__resolve", json!({"trigger": "T-1"}))])),
            mira(reply("Marked done.")),
        ],
    );
    servers.seed_from_ana("invoice", "Please pay.");
    h.wait_announcements(&research, 1).await;
    e2e::scenario::completions_reach(&h, 1).await;
    servers.dovecot.stop();
    h.model.sim.release("resolve");
    h.wait_post(&research, "mira", "I could not mark it done.", 0)
        .await;
    let failed = tool_results(&turn_requests(&h).pop().expect("a request"));
    assert!(failed[0].contains("T-1 stays outstanding"), "{}", failed[0]);
    assert_eq!(
        store(&h).trigger(1).expect("read").expect("row").status,
        TriggerStatus::Announced,
        "a failed completion claims nothing"
    );
    servers.dovecot.restart().expect("Dovecot again");
    let since = now_ms() - 1;
    h.say("ana", &research, "@mira please mark T-1 done now")
        .await;
    h.wait_post(&research, "mira", "Marked done.", since).await;
    let done = tool_results(&turn_requests(&h).pop().expect("a request"));
    let done = done.last().expect("the call's result");
    assert!(
        done.contains("T-1 is marked done, and the message is marked read."),
        "{done}"
    );
    assert_eq!(servers.dovecot.seen(ADDRESS, "INBOX").expect("flags"), [1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_the_password_is_in_no_log_store_row_or_environment_of_the_daemon() {
    let h = Harness::start().await;
    let (servers, _worker) = reading(&h).await;
    noting(&h);
    let mut daemon = h.daemon();
    let mut logged = daemon.wait_for("mail poll running");
    cursor_set(&h).await;
    servers.seed_from_ana("hello", "b");
    recorded(&h, 1).await;
    let environ = std::fs::read(format!("/proc/{}/environ", daemon.child.id())).expect("environ");
    assert!(
        !String::from_utf8_lossy(&environ).contains(PASSWORD),
        "the daemon's environment"
    );
    daemon.terminate();
    let _ = daemon.child.wait();
    logged.extend(daemon.logged());
    let text = serde_json::to_string(&logged).expect("lines");
    assert!(!text.contains(PASSWORD), "the daemon's log");
    for entry in std::fs::read_dir(h.state_dir()).expect("state") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            assert!(
                !String::from_utf8_lossy(&bytes).contains(PASSWORD),
                "{}",
                path.display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_an_announcement_channel_without_the_agent_refuses_boot() {
    let h = Harness::start().await;
    let (_servers, _worker) = reading(&h).await;
    // Provisioned to announce in ~research; now it names ~ops, which
    // @mira is not in.
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text.replacen(
        "announce_channel = \"research\"",
        "announce_channel = \"ops\"",
        1,
    );
    std::fs::write(&h.config, text).expect("config");
    let (code, logged) = h.daemon_refusal();
    assert_ne!(code, Some(0));
    assert!(
        logged.contains(
            "agents.mira.settings.mail.mailbox.announce_channel: @mira is not a member of ~ops"
        ),
        "{logged}"
    );
}
