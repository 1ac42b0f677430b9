//! The daemon's client of the PDF worker (§3.4): it hands the worker the
//! bytes a fetch read (workers never call each other) and takes back pages
//! as they are read, then how far the read got and why, or a typed failure.
//! Before any read it checks whom it speaks to: the socket's server must be
//! the worker's own user, and the worker must report itself not root, with
//! no capabilities and no-new-privileges set.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use collegium_proto::pdf::v1::pdf_reader_client::PdfReaderClient;
use collegium_proto::pdf::v1::pdf_text_event::Event;
use collegium_proto::pdf::v1::{
    self as wire, DescribeRequest, FailureKind, PdfTextRequest, ProtocolVersion, Stop,
};
use collegium_proto::toolset::v1::Sandbox;
use tonic::Streaming;
use tonic::transport::Channel;

const MIB: u64 = 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum PdfWorkerError {
    #[error("cannot connect to the PDF worker at {socket}: {source}")]
    Connect {
        socket: String,
        source: tonic::transport::Error,
    },
    #[error("the PDF worker did not describe itself: {0}")]
    Describe(tonic::Status),
    #[error("the PDF worker speaks protocol version {0}, this daemon version 1")]
    Protocol(u32),
    #[error("the PDF worker's description has no {0}")]
    Missing(&'static str),
    #[error("the PDF worker is not confined as it must be:\n  - {}", .0.join("\n  - "))]
    Sandbox(Vec<String>),
    #[error(
        "The PDF is {bytes} bytes, over the {} MiB a PDF may be; it was not read, since a PDF cut short does not parse.",
        .cap / MIB
    )]
    TooLarge { bytes: u64, cap: u64 },
    #[error("the PDF worker failed the read: {0}")]
    Read(tonic::Status),
    #[error("the PDF worker sent an event this daemon does not know: {0}")]
    Unknown(String),
}

/// One event of a read, in order: pages, then one end or one failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PdfEvent {
    Page {
        number: u32,
        text: String,
    },
    End {
        pages_read: u32,
        total_pages: Option<u32>,
        stopped: Stop,
    },
    Failure {
        kind: FailureKind,
        /// For a limit met before any text: which.
        limit: Option<Stop>,
        /// The worker's words for the model.
        message: String,
        total_pages: Option<u32>,
    },
}

/// A connected, checked PDF worker.
#[derive(Debug, Clone)]
pub struct PdfWorker {
    client: PdfReaderClient<Channel>,
    build_version: String,
    sandbox: Sandbox,
    limits: wire::Limits,
}

/// What is wrong with the worker's sandbox, each as `field: problem`.
pub fn sandbox_gaps(sandbox: &Sandbox, served_by: u32) -> Vec<String> {
    let mut gaps = Vec::new();
    if sandbox.effective_uid == 0 {
        gaps.push("effective_uid: the worker runs as root".to_string());
    } else if sandbox.effective_uid != served_by {
        gaps.push(format!(
            "effective_uid: {}, not the worker's uid {served_by}",
            sandbox.effective_uid
        ));
    }
    // A non-root process with no-new-privileges cannot gain what its
    // bounding set allows; every other set must be empty.
    for (field, set) in [
        ("cap_inheritable", sandbox.cap_inheritable),
        ("cap_permitted", sandbox.cap_permitted),
        ("cap_effective", sandbox.cap_effective),
        ("cap_ambient", sandbox.cap_ambient),
    ] {
        if set != 0 {
            gaps.push(format!("{field}: {set:#x}, where none is allowed"));
        }
    }
    if !sandbox.no_new_privileges {
        gaps.push("no_new_privileges: not set".to_string());
    }
    gaps
}

impl PdfWorker {
    /// Connects to the worker on `socket`, served by `served_by` (the
    /// `collegium-pdf` user), and holds it to its sandbox.
    pub async fn connect(socket: &Path, served_by: u32) -> Result<Self, PdfWorkerError> {
        let channel = collegium_worker_kit::client::channel(socket, Some(served_by))
            .await
            .map_err(|source| PdfWorkerError::Connect {
                socket: socket.display().to_string(),
                source,
            })?;
        let mut client = PdfReaderClient::new(channel).max_encoding_message_size(usize::MAX);
        let described = client
            .describe(DescribeRequest {
                protocol_version: ProtocolVersion::ProtocolVersion1 as u32,
            })
            .await
            .map_err(PdfWorkerError::Describe)?
            .into_inner();
        if described.protocol_version != ProtocolVersion::ProtocolVersion1 as u32 {
            return Err(PdfWorkerError::Protocol(described.protocol_version));
        }
        let sandbox = described
            .sandbox
            .ok_or(PdfWorkerError::Missing("sandbox"))?;
        let limits = described.limits.ok_or(PdfWorkerError::Missing("limits"))?;
        let gaps = sandbox_gaps(&sandbox, served_by);
        if !gaps.is_empty() {
            return Err(PdfWorkerError::Sandbox(gaps));
        }
        Ok(Self {
            client,
            build_version: described.build_version,
            sandbox,
            limits,
        })
    }

    pub fn build_version(&self) -> &str {
        &self.build_version
    }

    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// The limits the worker applies, for the boot log.
    pub fn limits(&self) -> &wire::Limits {
        &self.limits
    }

    /// Starts reading `pdf`, to answer by `deadline`, stopping before the
    /// page that would take the text past `ceiling` characters. A PDF over
    /// the worker's body cap is refused here, unsent.
    pub async fn read(
        &self,
        pdf: Vec<u8>,
        deadline: SystemTime,
        ceiling: u64,
        call_id: &str,
    ) -> Result<PdfRead, PdfWorkerError> {
        let bytes = pdf.len() as u64;
        if bytes > self.limits.body_cap_bytes {
            return Err(PdfWorkerError::TooLarge {
                bytes,
                cap: self.limits.body_cap_bytes,
            });
        }
        let deadline_unix_ms = deadline
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let stream = self
            .client
            .clone()
            .pdf_text(PdfTextRequest {
                pdf,
                deadline_unix_ms,
                text_ceiling_chars: ceiling,
                call_id: call_id.to_string(),
            })
            .await
            .map_err(PdfWorkerError::Read)?
            .into_inner();
        Ok(PdfRead {
            stream,
            done: false,
        })
    }
}

/// A read in progress.
pub struct PdfRead {
    stream: Streaming<wire::PdfTextEvent>,
    done: bool,
}

impl PdfRead {
    /// The next event; `None` once the end or the failure was returned.
    pub async fn next(&mut self) -> Result<Option<PdfEvent>, PdfWorkerError> {
        if self.done {
            return Ok(None);
        }
        let Some(event) = self.stream.message().await.map_err(PdfWorkerError::Read)? else {
            return Err(PdfWorkerError::Unknown(
                "the read ended without an end or a failure".into(),
            ));
        };
        let event = match event.event {
            Some(Event::Page(page)) => PdfEvent::Page {
                number: page.number,
                text: page.text,
            },
            Some(Event::End(end)) => {
                self.done = true;
                PdfEvent::End {
                    pages_read: end.pages_read,
                    total_pages: end.total_pages,
                    stopped: known_stop(end.stopped)?,
                }
            }
            Some(Event::Failure(failure)) => {
                self.done = true;
                let kind = FailureKind::try_from(failure.kind)
                    .ok()
                    .filter(|k| *k != FailureKind::Unspecified)
                    .ok_or_else(|| {
                        PdfWorkerError::Unknown(format!("failure kind {}", failure.kind))
                    })?;
                let limit = match kind {
                    FailureKind::LimitBeforeText => Some(known_stop(failure.limit)?),
                    _ => None,
                };
                PdfEvent::Failure {
                    kind,
                    limit,
                    message: failure.message,
                    total_pages: failure.total_pages,
                }
            }
            None => return Err(PdfWorkerError::Unknown("an empty event".into())),
        };
        Ok(Some(event))
    }

    /// Every remaining event, in order.
    pub async fn collect(mut self) -> Result<Vec<PdfEvent>, PdfWorkerError> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await? {
            events.push(event);
        }
        Ok(events)
    }
}

fn known_stop(value: i32) -> Result<Stop, PdfWorkerError> {
    Stop::try_from(value)
        .ok()
        .filter(|s| *s != Stop::Unspecified)
        .ok_or_else(|| PdfWorkerError::Unknown(format!("stop reason {value}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_4_a_root_or_capable_worker_is_refused_by_field() {
        let confined = Sandbox {
            effective_uid: 990,
            effective_gid: 990,
            cap_bounding: 0x1ff_ffff_ffff,
            no_new_privileges: true,
            ..Sandbox::default()
        };
        assert!(sandbox_gaps(&confined, 990).is_empty());
        let root = Sandbox {
            effective_uid: 0,
            cap_effective: 0x1,
            no_new_privileges: false,
            ..confined.clone()
        };
        assert_eq!(
            sandbox_gaps(&root, 990),
            vec![
                "effective_uid: the worker runs as root".to_string(),
                "cap_effective: 0x1, where none is allowed".to_string(),
                "no_new_privileges: not set".to_string(),
            ]
        );
        assert_eq!(
            sandbox_gaps(&confined, 991),
            vec!["effective_uid: 990, not the worker's uid 991".to_string()]
        );
    }
}
