//! The PDF bombs of §3.4, each read by the real worker: each ends in a
//! typed result, the worker's own memory stays flat (the child held the
//! bomb, not the worker), no reader outlives its read, and the next
//! ordinary PDF reads fine.

mod support;

use std::time::Duration;

use collegium_proto::pdf::v1::pdf_text_event::Event;
use collegium_proto::pdf::v1::{Failure, FailureKind, Stop};
use support::{Worker, pdfs, read_all, request, split};

const MIB: u64 = 1024 * 1024;

/// What the worker may grow by while it holds a bomb's bytes on their way
/// to the child (up to 8 MB each); the bombs inflate to gigabytes.
const FLAT: u64 = 48 * MIB;

const DEADLINE: Duration = Duration::from_secs(30);

/// Reads `pdf` as a bomb: its events, after checking the worker survived
/// it whole.
async fn detonate(worker: &Worker, pdf: Vec<u8>) -> Vec<Event> {
    let mut client = worker.client().await;
    // One ordinary read first, so the worker's own buffers are warm.
    let warm = pdfs::text_pages(&["warm"]);
    read_all(&mut client, request(warm, DEADLINE, 1000)).await;
    let before = worker.rss();
    let events = read_all(&mut client, request(pdf, DEADLINE, 100_000)).await;
    let after = worker.rss();
    assert!(
        after <= before + FLAT,
        "the worker grew from {before} to {after} bytes reading a bomb"
    );
    assert!(
        worker.children().is_empty(),
        "a reader outlived its read: {:?}",
        worker.children()
    );
    let next = pdfs::text_pages(&["after the bomb"]);
    let (pages, _) = split(read_all(&mut client, request(next, DEADLINE, 1000)).await);
    assert_eq!(pages, vec![(1, "after the bomb".to_string())]);
    events
}

fn failure(events: &[Event]) -> &Failure {
    match events {
        [Event::Failure(failure)] => failure,
        other => panic!("one typed failure was expected, not {other:?}"),
    }
}

/// The bomb stopped at the memory cap before any text: a failure naming
/// the cap, never a scan.
fn stopped_at_the_cap(events: &[Event]) {
    let failure = failure(events);
    assert_eq!(failure.kind(), FailureKind::LimitBeforeText, "{failure:?}");
    assert_eq!(failure.limit(), Stop::MemoryCap, "{failure:?}");
    assert!(
        failure.message.contains("memory cap of 256 MiB")
            && failure.message.contains("not known to be a scan"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn s3_4_a_flate_stream_of_4_gib_of_zeros_stops_at_the_memory_cap() {
    let worker = Worker::start(&[]);
    let pdf = pdfs::flate_zeros();
    assert!(pdf.len() < 5 * MIB as usize, "{} bytes", pdf.len());
    stopped_at_the_cap(&detonate(&worker, pdf).await);
}

#[tokio::test]
async fn s3_4_chained_filters_stop_at_the_memory_cap() {
    let worker = Worker::start(&[]);
    let pdf = pdfs::chained_filters();
    assert!(pdf.len() < MIB as usize, "{} bytes", pdf.len());
    stopped_at_the_cap(&detonate(&worker, pdf).await);
}

#[tokio::test]
async fn s3_4_ten_to_the_eighth_text_operators_stop_at_the_memory_cap() {
    let worker = Worker::start(&[]);
    stopped_at_the_cap(&detonate(&worker, pdfs::text_operators()).await);
}

#[tokio::test]
async fn s3_4_arrays_nested_a_million_deep_are_unparseable() {
    let worker = Worker::start(&[]);
    let events = detonate(&worker, pdfs::nested_arrays()).await;
    let failure = failure(&events);
    assert_eq!(failure.kind(), FailureKind::Unparseable, "{failure:?}");
    assert!(
        failure.message.starts_with("The PDF could not be parsed"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn s3_4_a_page_tree_cycle_ends_the_walk_as_unparseable() {
    // lopdf stops walking a page tree at a node it has seen; the page
    // listed after the cycle is not reached, and a tree that yields no page
    // is the parser's failure, not a scan.
    let worker = Worker::start(&[]);
    let events = detonate(&worker, pdfs::page_tree_cycle()).await;
    let failure = failure(&events);
    assert_eq!(failure.kind(), FailureKind::Unparseable, "{failure:?}");
    assert!(failure.message.contains("no pages"), "{}", failure.message);
}

#[tokio::test]
async fn s3_4_a_self_referencing_object_stream_does_not_stop_the_page_beside_it() {
    let worker = Worker::start(&[]);
    let events = detonate(&worker, pdfs::self_referencing_object_stream()).await;
    let (pages, _) = split(events);
    assert_eq!(pages, vec![(1, "beside the loop".to_string())]);
}

#[tokio::test]
async fn s3_4_an_xref_claiming_2_31_objects_reads_the_objects_there_are() {
    let worker = Worker::start(&[]);
    let events = detonate(&worker, pdfs::huge_xref()).await;
    let (pages, last) = split(events);
    assert_eq!(pages, vec![(1, "small".to_string())]);
    let Event::End(end) = last else {
        panic!("an end was expected, not {last:?}")
    };
    assert_eq!(end.stopped(), Stop::Complete);
}

#[tokio::test]
async fn s3_4_a_bomb_is_stopped_at_its_deadline_when_that_comes_first() {
    // A cap far above what the deadline lets the bomb reach: the deadline
    // stops it, and says so.
    let worker = Worker::start(&["--memory-cap-mib", "3000", "--address-space-mib", "4000"]);
    let mut client = worker.client().await;
    let events = read_all(
        &mut client,
        request(pdfs::text_operators(), Duration::from_millis(700), 100_000),
    )
    .await;
    let failure = failure(&events);
    assert_eq!(failure.kind(), FailureKind::LimitBeforeText, "{failure:?}");
    assert_eq!(failure.limit(), Stop::Deadline, "{failure:?}");
    assert!(worker.children().is_empty());
}

/// A child that aborts mid-read, as the parser's panic hook makes it, is a
/// typed failure, and the worker reads the next PDF (§3.4). The abort is
/// sent from outside, the way the hook's `abort()` ends the child: lopdf
/// 0.47 has no known panic to craft a PDF for.
#[tokio::test]
async fn s3_4_a_child_that_aborts_mid_read_is_a_typed_failure_and_the_worker_reads_on() {
    let worker = Worker::start(&["--memory-cap-mib", "3000", "--address-space-mib", "4000"]);
    let mut client = worker.client().await;
    let mut reading = client.clone();
    let read = tokio::spawn(async move {
        read_all(
            &mut reading,
            request(pdfs::text_operators(), Duration::from_secs(60), 100_000),
        )
        .await
    });
    let mut children = worker.children();
    for _ in 0..200 {
        if !children.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        children = worker.children();
    }
    let child = *children.first().expect("a child reads the PDF");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child).expect("a pid")),
        nix::sys::signal::Signal::SIGABRT,
    )
    .expect("abort the child");
    let events = read.await.expect("the read ends");
    let failure = failure(&events);
    assert_eq!(failure.kind(), FailureKind::Unparseable, "{failure:?}");
    assert!(
        failure.message.contains("ended by signal 6"),
        "{}",
        failure.message
    );
    let next = pdfs::text_pages(&["after the abort"]);
    let (pages, _) = split(read_all(&mut client, request(next, DEADLINE, 1000)).await);
    assert_eq!(pages, vec![(1, "after the abort".to_string())]);
}
