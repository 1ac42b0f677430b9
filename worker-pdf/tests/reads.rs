//! PDFs read by the real worker over its socket (§3.4): pages in order as
//! they are read, each whole; the ceiling, a scan, the body cap, and the
//! audit line each read leaves.

mod support;

use std::time::Duration;

use collegium_proto::pdf::v1::pdf_text_event::Event;
use collegium_proto::pdf::v1::{DescribeRequest, FailureKind, HealthRequest, Stop};
use support::{Worker, pdfs, read_all, request, split};

const LONG: Duration = Duration::from_secs(60);

#[tokio::test]
async fn s3_4_a_three_page_pdf_is_read_page_by_page() {
    let worker = Worker::start(&[]);
    let mut client = worker.client().await;
    let pdf = pdfs::text_pages(&["First page.", "Second (page).\nA second line.", "Third."]);
    let (pages, last) = split(read_all(&mut client, request(pdf, LONG, 100_000)).await);
    assert_eq!(
        pages,
        vec![
            (1, "First page.".to_string()),
            (2, "Second (page).\nA second line.".to_string()),
            (3, "Third.".to_string()),
        ]
    );
    let Event::End(end) = last else {
        panic!("an end was expected, not {last:?}")
    };
    assert_eq!(end.pages_read, 3);
    assert_eq!(end.total_pages, Some(3));
    assert_eq!(end.stopped(), Stop::Complete);

    // One audit line per read, under the tool's name, with its pages.
    let log = std::fs::read_to_string(&worker.audit).expect("audit log");
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert_eq!(lines[0]["tool"], "pdf::text");
    assert_eq!(lines[0]["call"], "call-1");
    assert_eq!(lines[0]["outcome"], "success");
    assert_eq!(lines[0]["detail"], "3 pages of 3 read; stopped: complete");
}

#[tokio::test]
async fn s3_4_compressed_content_streams_read_as_plain_ones() {
    let worker = Worker::start(&[]);
    let mut client = worker.client().await;
    let pdf = pdfs::compressed_text_pages(&["Deflated text."]);
    let (pages, _) = split(read_all(&mut client, request(pdf, LONG, 100_000)).await);
    assert_eq!(pages, vec![(1, "Deflated text.".to_string())]);
}

#[tokio::test]
async fn s3_4_text_only_on_page_400_of_400_is_found() {
    let worker = Worker::start(&[]);
    let mut client = worker.client().await;
    let mut texts = vec![String::new(); 400];
    texts[399] = "The last page speaks.".into();
    let (pages, last) = split(
        read_all(
            &mut client,
            request(pdfs::text_pages(&texts), LONG, 100_000),
        )
        .await,
    );
    assert_eq!(pages.len(), 400);
    assert!(pages[..399].iter().all(|(_, t)| t.is_empty()));
    assert_eq!(pages[399], (400, "The last page speaks.".to_string()));
    let Event::End(end) = last else {
        panic!("an end was expected, not {last:?}")
    };
    assert_eq!(end.stopped(), Stop::Complete);
}

#[tokio::test]
async fn s3_4_ten_thousand_pages_are_read_in_order() {
    let worker = Worker::start(&[]);
    let mut client = worker.client().await;
    let texts: Vec<String> = (1..=10_000).map(|n| format!("Page {n}.")).collect();
    let (pages, last) = split(
        read_all(
            &mut client,
            request(pdfs::text_pages(&texts), LONG, 10_000_000),
        )
        .await,
    );
    assert_eq!(pages.len(), 10_000);
    assert!(
        pages
            .iter()
            .enumerate()
            .all(|(i, (n, t))| *n as usize == i + 1 && *t == format!("Page {n}."))
    );
    let Event::End(end) = last else {
        panic!("an end was expected, not {last:?}")
    };
    assert_eq!((end.pages_read, end.total_pages), (10_000, Some(10_000)));
}

#[tokio::test]
async fn s3_4_a_read_stops_before_the_page_that_would_pass_the_ceiling() {
    let worker = Worker::start(&[]);
    let mut client = worker.client().await;
    let texts = ["a".repeat(40), "b".repeat(40), "c".repeat(40)];
    let (pages, last) =
        split(read_all(&mut client, request(pdfs::text_pages(&texts), LONG, 100)).await);
    assert_eq!(pages.len(), 2, "two pages fit in 100 characters, whole");
    let Event::End(end) = last else {
        panic!("an end was expected, not {last:?}")
    };
    assert_eq!(end.stopped(), Stop::TextCeiling);
    assert_eq!((end.pages_read, end.total_pages), (2, Some(3)));

    // A first page longer than the ceiling cannot be kept whole: a typed
    // failure naming the ceiling, never a scan.
    let (pages, last) =
        split(read_all(&mut client, request(pdfs::text_pages(&texts), LONG, 10)).await);
    assert!(pages.is_empty());
    let Event::Failure(failure) = last else {
        panic!("a failure was expected, not {last:?}")
    };
    assert_eq!(failure.kind(), FailureKind::LimitBeforeText);
    assert_eq!(failure.limit(), Stop::TextCeiling);
    assert!(
        failure.message.contains("ceiling of 10 characters")
            && failure.message.contains("not known to be a scan"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn s3_4_a_scan_is_a_typed_failure_saying_so() {
    let worker = Worker::start(&[]);
    let mut client = worker.client().await;
    let events = read_all(&mut client, request(pdfs::scan(3), LONG, 100_000)).await;
    let [Event::Failure(failure)] = events.as_slice() else {
        panic!("one failure was expected, not {events:?}")
    };
    assert_eq!(failure.kind(), FailureKind::Scan);
    assert_eq!(failure.total_pages, Some(3));
    assert!(
        failure.message.contains("no text layer") && failure.message.contains("scan"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn s3_4_a_pdf_over_the_body_cap_is_not_read() {
    let worker = Worker::start(&["--body-cap-mib", "1"]);
    let mut client = worker.client().await;
    let mut pdf = pdfs::text_pages(&["fits"]);
    pdf.resize(1024 * 1024 + 1, b' ');
    let events = read_all(&mut client, request(pdf, LONG, 100_000)).await;
    let [Event::Failure(failure)] = events.as_slice() else {
        panic!("one failure was expected, not {events:?}")
    };
    assert_eq!(failure.kind(), FailureKind::TooLarge);
    assert!(
        failure.message.contains("1048577 bytes, over the 1 MiB"),
        "{}",
        failure.message
    );
    assert!(worker.children().is_empty(), "no reader was started");
}

#[tokio::test]
async fn s3_4_describe_reports_the_sandbox_and_the_limits() {
    let worker = Worker::start(&["--concurrency", "3", "--memory-cap-mib", "128"]);
    let mut client = worker.client().await;
    let described = client
        .describe(DescribeRequest {
            protocol_version: 1,
        })
        .await
        .expect("describe")
        .into_inner();
    let sandbox = described.sandbox.expect("sandbox");
    assert_eq!(sandbox.effective_uid, support::worker_uid());
    assert!(sandbox.no_new_privileges);
    assert_eq!(sandbox.cap_effective, 0);
    assert!(sandbox.bounds.contains(&"address_space=rlimit".to_string()));
    let limits = described.limits.expect("limits");
    assert_eq!(limits.concurrency, 3);
    assert_eq!(limits.memory_cap_bytes, 128 << 20);
    assert_eq!(limits.body_cap_bytes, 32 << 20);
    let memory = if limits.memory_cgroup {
        "memory=cgroup"
    } else {
        "memory=polled"
    };
    assert!(sandbox.bounds.contains(&memory.to_string()));
    assert!(
        client
            .health(HealthRequest {})
            .await
            .expect("health")
            .into_inner()
            .ready
    );
}

#[test]
fn s3_4_the_worker_refuses_to_run_as_root() {
    // The tests run as root (as CI does): this is the worker started so.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collegium-worker-pdf"))
        .args(["serve", "--socket"])
        .arg(dir.path().join("s"))
        .arg("--audit")
        .arg(dir.path().join("a"))
        .args(["--allow-uid", "0"])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("does not run as root"), "{stderr}");
}
