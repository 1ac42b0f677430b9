//! The daemon's client (`collegium_control::workers::pdf`) against the real
//! worker: it checks who serves the socket and how the worker is confined,
//! then reads a PDF page by page.

mod support;

use std::time::{Duration, SystemTime};

use collegium_control::workers::pdf::{PdfEvent, PdfWorker, PdfWorkerError};
use collegium_proto::pdf::v1::{FailureKind, Stop};
use support::{Worker, pdfs, worker_uid};

#[tokio::test]
async fn s3_4_the_daemon_reads_a_pdf_through_a_checked_worker() {
    let worker = Worker::start(&[]);
    let pdf_worker = PdfWorker::connect(&worker.socket, worker_uid())
        .await
        .expect("connects and the sandbox holds");
    assert_eq!(pdf_worker.sandbox().effective_uid, worker_uid());
    assert_eq!(pdf_worker.limits().concurrency, 2);

    let deadline = SystemTime::now() + Duration::from_secs(30);
    let pdf = pdfs::text_pages(&["One.", "Two."]);
    let events = pdf_worker
        .read(pdf, deadline, 10_000, "call-7")
        .await
        .expect("read starts")
        .collect()
        .await
        .expect("read ends");
    assert_eq!(
        events,
        vec![
            PdfEvent::Page {
                number: 1,
                text: "One.".into()
            },
            PdfEvent::Page {
                number: 2,
                text: "Two.".into()
            },
            PdfEvent::End {
                pages_read: 2,
                total_pages: Some(2),
                stopped: Stop::Complete
            },
        ]
    );

    let events = pdf_worker
        .read(pdfs::scan(1), deadline, 10_000, "call-8")
        .await
        .expect("read starts")
        .collect()
        .await
        .expect("read ends");
    assert!(
        matches!(
            events.as_slice(),
            [PdfEvent::Failure {
                kind: FailureKind::Scan,
                limit: None,
                ..
            }]
        ),
        "{events:?}"
    );

    // Over the body cap the daemon does not send the bytes at all.
    let too_large = vec![b' '; 32 * 1024 * 1024 + 1];
    let refused = pdf_worker
        .read(too_large, deadline, 10_000, "call-9")
        .await
        .err()
        .expect("refused");
    assert!(matches!(refused, PdfWorkerError::TooLarge { .. }));
    assert!(
        refused.to_string().contains("over the 32 MiB a PDF may be"),
        "{refused}"
    );
}

#[tokio::test]
async fn s3_4_a_socket_served_by_another_user_is_not_spoken_to() {
    let worker = Worker::start(&[]);
    let error = PdfWorker::connect(&worker.socket, worker_uid() + 1)
        .await
        .expect_err("refused");
    assert!(matches!(error, PdfWorkerError::Connect { .. }), "{error}");
}
