//! The `Mailbox` service against a real Dovecot (§3.13, §4.2): the first
//! poll reads to the head and returns nothing; arrivals come oldest first,
//! at most `max`; a renumbered INBOX is read again from the cursor's date;
//! marking read sets `\Seen`; the boot check tells refused credentials from
//! an unreachable server; and the password is in nothing the worker logs.

mod support;

use collegium_proto::mail::v1::{
    CheckOutcome, CheckRequest, Cursor, MarkSeenRequest, PollRequest, PollResponse,
};
use support::{AGENT, Options, PASSWORD, Rig, plain};

async fn poll(rig: &Rig, cursor: Option<Cursor>, max: u32) -> PollResponse {
    rig.mailbox
        .clone()
        .poll(PollRequest {
            agent: AGENT.into(),
            cursor,
            max,
        })
        .await
        .expect("poll")
        .into_inner()
}

fn message(n: u32) -> Vec<u8> {
    plain(
        "Ana <ana@outside.test>",
        &format!("Note {n}"),
        &format!("note-{n}@outside.test"),
        &format!("Body of note {n}."),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_the_first_poll_reads_to_the_head_and_arrivals_follow_in_order() {
    let rig = Rig::start(Options::default()).await;
    for n in 0..5 {
        rig.seed(&message(n));
    }
    let first = poll(&rig, None, 10).await;
    assert!(first.arrivals.is_empty(), "old mail is not news");
    let head = first.cursor.expect("a cursor");
    assert_eq!(head.last_uid, 5);
    assert!(head.last_internal_date > 0);

    for n in 5..8 {
        rig.seed(&message(n));
    }
    let three = poll(&rig, Some(head), 10).await;
    let subjects: Vec<&str> = three.arrivals.iter().map(|a| a.subject.as_str()).collect();
    assert_eq!(subjects, ["Note 5", "Note 6", "Note 7"]);
    assert!(!three.more && !three.renumbered);
    let arrival = &three.arrivals[0];
    assert_eq!(arrival.message_id, "note-5@outside.test");
    assert_eq!(arrival.from, "Ana <ana@outside.test>");
    assert!(arrival.text.contains("Body of note 5."));
    let after = three.cursor.expect("a cursor");
    assert_eq!(after.last_uid, 8);
    assert!(poll(&rig, Some(after), 10).await.arrivals.is_empty());

    // `max` bounds a poll; the rest wait for the next.
    for n in 8..12 {
        rig.seed(&message(n));
    }
    let bounded = poll(&rig, Some(after), 3).await;
    assert_eq!(bounded.arrivals.len(), 3);
    assert!(bounded.more);
    let rest = poll(&rig, bounded.cursor, 3).await;
    assert_eq!(rest.arrivals.len(), 1);
    assert_eq!(rest.arrivals[0].subject, "Note 11");
    assert!(!rest.more);
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_renumbered_inbox_is_read_again_from_the_cursors_date() {
    let rig = Rig::start(Options::default()).await;
    rig.seed(&message(0));
    let head = poll(&rig, None, 10).await.cursor.expect("cursor");
    rig.seed(&message(1));
    let next = poll(&rig, Some(head), 10).await;
    assert_eq!(next.arrivals.len(), 1);
    let cursor = next.cursor.expect("cursor");
    rig.dovecot
        .set_uidvalidity(support::ADDRESS, "INBOX", cursor.uidvalidity + 1000)
        .unwrap_or_else(|e| panic!("{e}"));
    rig.seed(&message(2));
    let again = poll(&rig, Some(cursor), 10).await;
    assert!(again.renumbered);
    let ids: Vec<&str> = again
        .arrivals
        .iter()
        .map(|a| a.message_id.as_str())
        .collect();
    // Nothing skipped; what was recorded already the daemon drops by
    // Message-ID.
    assert!(ids.contains(&"note-2@outside.test"), "{ids:?}");
    assert!(
        !ids.contains(&"note-0@outside.test")
            || cursor.last_internal_date <= again.arrivals[0].internal_date
    );
    let moved = again.cursor.expect("cursor");
    assert_eq!(moved.uidvalidity, cursor.uidvalidity + 1000);
    assert!(poll(&rig, Some(moved), 10).await.arrivals.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_mark_seen_sets_the_seen_flag() {
    let rig = Rig::start(Options::default()).await;
    let head = poll(&rig, None, 10).await.cursor.expect("cursor");
    rig.seed(&message(1));
    let arrival = poll(&rig, Some(head), 10).await.arrivals.remove(0);
    let unread = rig.invoke("list", serde_json::json!({})).await;
    assert!(support::text(&unread).contains("(unread)"));
    rig.mailbox
        .clone()
        .mark_seen(MarkSeenRequest {
            agent: AGENT.into(),
            uidvalidity: arrival.uidvalidity,
            uid: arrival.uid,
            message_id: arrival.message_id.clone(),
        })
        .await
        .expect("marked");
    let read = rig.invoke("list", serde_json::json!({})).await;
    assert!(
        !support::text(&read).contains("(unread)"),
        "{}",
        support::text(&read)
    );
    // A message gone is said, not pretended marked.
    let gone = rig
        .mailbox
        .clone()
        .mark_seen(MarkSeenRequest {
            agent: AGENT.into(),
            uidvalidity: arrival.uidvalidity,
            uid: 999,
            message_id: "never@outside.test".into(),
        })
        .await
        .expect_err("no such message");
    assert_eq!(gone.code(), tonic::Code::NotFound);
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_malformed_arrival_carries_its_problems_and_never_fails_the_poll() {
    let rig = Rig::start(Options::default()).await;
    let head = poll(&rig, None, 10).await.cursor.expect("cursor");
    rig.seed(
        b"From: Di <di@outside.test>\r\nSubject: Charset\r\nMessage-ID: <charset-1@outside.test>\r\n\
          Content-Type: multipart/mixed; boundary=\"zz\"\r\n\r\n--zz\r\nContent-Type: text/plain; charset=x-klingon\r\n\r\nqapla\r\n",
    );
    rig.seed(&message(9));
    let polled = poll(&rig, Some(head), 10).await;
    assert_eq!(polled.arrivals.len(), 2);
    let broken = &polled.arrivals[0];
    assert!(broken.text.contains("qapla"));
    assert!(
        broken.problems.iter().any(|p| p.contains("x-klingon")),
        "{:?}",
        broken.problems
    );
    assert!(
        broken
            .problems
            .iter()
            .any(|p| p.contains("closing part boundary")),
        "{:?}",
        broken.problems
    );
    assert!(polled.arrivals[1].problems.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_the_check_tells_refused_from_unreachable_and_logs_no_password() {
    let mut rig = Rig::start(Options::default()).await;
    let check = |rig: &Rig| {
        let mut client = rig.mailbox.clone();
        async move {
            client
                .check(CheckRequest {
                    agent: AGENT.into(),
                })
                .await
                .expect("check")
                .into_inner()
        }
    };
    let ok = check(&rig).await;
    assert_eq!(ok.outcome, CheckOutcome::Ok as i32, "{}", ok.detail);
    rig.dovecot.stop();
    let down = check(&rig).await;
    assert_eq!(
        down.outcome,
        CheckOutcome::Unreachable as i32,
        "{}",
        down.detail
    );
    assert!(
        down.detail.contains("mailbox mira@mail.test"),
        "{}",
        down.detail
    );
    let unknown = rig
        .mailbox
        .clone()
        .check(CheckRequest {
            agent: "nobody".into(),
        })
        .await
        .expect_err("no mailbox");
    assert_eq!(unknown.code(), tonic::Code::NotFound);
    assert!(!rig.stderr().contains(PASSWORD), "{}", rig.stderr());

    let wrong = Rig::start(Options {
        wrong_password: true,
        ..Options::default()
    })
    .await;
    let refused = check(&wrong).await;
    assert_eq!(
        refused.outcome,
        CheckOutcome::Refused as i32,
        "{}",
        refused.detail
    );
    assert!(
        refused
            .detail
            .contains("refused the login of mira@mail.test"),
        "{}",
        refused.detail
    );
    assert!(
        refused
            .detail
            .contains(&format!("localhost:{}", wrong.dovecot.imaps.port()))
    );
    assert!(!refused.detail.contains("not-the-password"));
    assert!(
        !wrong.stderr().contains("not-the-password"),
        "{}",
        wrong.stderr()
    );
}
