//! `PdfReader` as the worker serves it (§3.4): the body cap checked before
//! anything is read, a fixed number of reads at once (the rest wait within
//! their own deadline), each read in its own child, and one audit line per
//! read.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use collegium_proto::pdf::v1::pdf_reader_server::PdfReader;
use collegium_proto::pdf::v1::{
    DescribeRequest, DescribeResponse, HealthRequest, HealthResponse, PdfTextEvent, PdfTextRequest,
    ProtocolVersion,
};
use collegium_worker_kit::audit::{AuditLog, Outcome, Record, digest};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::Instant;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::outcome::{Event, Failure, Stop};
use crate::read::Reader;

/// The tool name the audit log records a read under.
pub const AUDIT_TOOL: &str = "pdf::text";
/// The worker's name in its audit log.
pub const WORKER: &str = "pdf";

pub struct PdfWorker {
    reader: Arc<Reader>,
    slots: Arc<Semaphore>,
    audit: Arc<Mutex<AuditLog>>,
}

impl PdfWorker {
    pub fn new(reader: Reader, audit: AuditLog) -> Self {
        let slots = Arc::new(Semaphore::new(reader.limits.concurrency as usize));
        Self {
            reader: Arc::new(reader),
            slots,
            audit: Arc::new(Mutex::new(audit)),
        }
    }
}

/// A deadline in Unix milliseconds as an instant of this process's clock.
fn instant_of(deadline_unix_ms: i64) -> Instant {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let left = u64::try_from(deadline_unix_ms.saturating_sub(now_ms)).unwrap_or(0);
    Instant::now() + Duration::from_millis(left)
}

fn audit(
    log: &Mutex<AuditLog>,
    call: &str,
    pdf_sha256: String,
    last: Option<&Event>,
    pages: u32,
    started: Instant,
) {
    let (outcome, detail) = match last {
        Some(Event::End { stopped, total, .. }) => (
            Outcome::Success,
            format!(
                "{pages} pages of {} read; stopped: {}",
                total.map_or("?".to_string(), |t| t.to_string()),
                stopped.name()
            ),
        ),
        Some(Event::Failure(failure)) => (Outcome::Failure, failure.message()),
        Some(Event::Page { .. }) | None => (
            Outcome::Abandoned,
            format!("{pages} pages sent before the caller went away"),
        ),
    };
    let record = Record {
        agent: String::new(),
        turn: String::new(),
        call: call.to_string(),
        tool: AUDIT_TOOL.to_string(),
        arguments_sha256: pdf_sha256,
        decision: String::new(),
        outcome,
        detail,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    };
    // A log that takes no more lines has said why in its error; the read's
    // answer still goes back (the daemon holds the call in its own log).
    let appended = match log.lock() {
        Ok(mut log) => log.append(record),
        Err(poisoned) => poisoned.into_inner().append(record),
    };
    if let Err(error) = appended {
        tracing::error!(%error, "the audit log did not take a read's line");
    }
}

type EventStream = Pin<Box<dyn Stream<Item = Result<PdfTextEvent, Status>> + Send>>;

#[tonic::async_trait]
impl PdfReader for PdfWorker {
    async fn describe(
        &self,
        _request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let mut sandbox = collegium_worker_kit::sandbox::observe(None)
            .map_err(|e| Status::internal(e.to_string()))?;
        let memory_cgroup = self.reader.cgroups.is_some();
        sandbox.bounds = vec![
            if memory_cgroup {
                "memory=cgroup".into()
            } else {
                "memory=polled".into()
            },
            "address_space=rlimit".into(),
            "cpu=rlimit".into(),
        ];
        Ok(Response::new(DescribeResponse {
            protocol_version: ProtocolVersion::ProtocolVersion1 as u32,
            build_version: env!("CARGO_PKG_VERSION").to_string(),
            sandbox: Some(sandbox),
            limits: Some(self.reader.limits.to_wire(memory_cgroup)),
        }))
    }

    type PdfTextStream = EventStream;

    async fn pdf_text(
        &self,
        request: Request<PdfTextRequest>,
    ) -> Result<Response<Self::PdfTextStream>, Status> {
        let started = Instant::now();
        let request = request.into_inner();
        let deadline = instant_of(request.deadline_unix_ms);
        let (events, received) = mpsc::channel::<Event>(8);
        let reader = Arc::clone(&self.reader);
        let slots = Arc::clone(&self.slots);
        let log = Arc::clone(&self.audit);
        tokio::spawn(async move {
            let pdf_sha256 = digest(&request.pdf);
            let limits = reader.limits;
            let size = request.pdf.len() as u64;
            let refusal = if size > limits.body_cap_bytes {
                Some(Failure::TooLarge {
                    bytes: size,
                    cap: limits.body_cap_bytes,
                })
            } else if Instant::now() >= deadline {
                Some(Failure::LimitBeforeText {
                    limit: Stop::Deadline,
                    pages_read: 0,
                    total: None,
                    bound: 0,
                })
            } else {
                None
            };
            if let Some(failure) = refusal {
                let last = Event::Failure(failure);
                let _ = events.send(last.clone()).await;
                audit(&log, &request.call_id, pdf_sha256, Some(&last), 0, started);
                return;
            }
            // Waiting for a slot is bounded by the read's own deadline.
            let permit = match tokio::time::timeout_at(deadline, slots.acquire_owned()).await {
                Ok(Ok(permit)) => permit,
                _ => {
                    let last = Event::Failure(Failure::Busy {
                        slots: limits.concurrency,
                    });
                    let _ = events.send(last.clone()).await;
                    audit(&log, &request.call_id, pdf_sha256, Some(&last), 0, started);
                    return;
                }
            };
            let summary = reader
                .read(request.pdf, deadline, request.text_ceiling_chars, &events)
                .await;
            drop(permit);
            audit(
                &log,
                &request.call_id,
                pdf_sha256,
                summary.last.as_ref(),
                summary.pages_read,
                started,
            );
        });
        let stream =
            tokio_stream::StreamExt::map(
                ReceiverStream::new(received),
                |event| Ok(event.to_wire()),
            );
        Ok(Response::new(Box::pin(stream)))
    }

    async fn health(
        &self,
        _request: Request<HealthRequest>,
    ) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse { ready: true }))
    }
}
