//! A fixed number of PDFs are read at once (§3.4); a read beyond them
//! waits within its own deadline, and one still waiting when it passes is a
//! typed failure saying that asking again may read it.

mod support;

use std::time::Duration;

use collegium_proto::pdf::v1::FailureKind;
use collegium_proto::pdf::v1::pdf_text_event::Event;
use support::{Worker, pdfs, read_all, request, split};

#[tokio::test]
async fn s3_4_a_read_past_the_slots_fails_at_its_deadline_saying_to_ask_again() {
    let worker = Worker::start(&["--concurrency", "2"]);
    // Two reads hold both slots: long PDFs whose callers take one page and
    // then read no more, so each read waits on its caller (within its own
    // deadline) with its slot held.
    let long: Vec<String> = (1..=10_000)
        .map(|n| format!("Page {n}. {}", "words ".repeat(150)))
        .collect();
    let long = pdfs::text_pages(&long);
    let mut holders = Vec::new();
    for _ in 0..2 {
        let mut client = worker.client().await;
        let mut stream = client
            .pdf_text(request(long.clone(), Duration::from_secs(60), u64::MAX / 8))
            .await
            .expect("read")
            .into_inner();
        let first = stream.message().await.expect("event").expect("a page");
        assert!(matches!(first.event, Some(Event::Page(_))), "{first:?}");
        holders.push((client, stream));
    }

    let mut client = worker.client().await;
    let short = pdfs::text_pages(&["waiting"]);
    let events = read_all(
        &mut client,
        request(short.clone(), Duration::from_millis(500), 1000),
    )
    .await;
    let [Event::Failure(failure)] = events.as_slice() else {
        panic!("one failure was expected, not {events:?}")
    };
    assert_eq!(failure.kind(), FailureKind::Busy);
    assert!(
        failure.message.contains("all 2 PDF reading slots")
            && failure.message.contains("Asking again may read it."),
        "{}",
        failure.message
    );

    // The holders' callers go away: their reads end, their children are
    // killed, and the slots serve the next read.
    drop(holders);
    let (pages, _) =
        split(read_all(&mut client, request(short, Duration::from_secs(30), 1000)).await);
    assert_eq!(pages, vec![(1, "waiting".to_string())]);
    let audit = std::fs::read_to_string(&worker.audit).expect("audit");
    assert!(audit.contains("\"outcome\":\"abandoned\""), "{audit}");
}
