//! Where a worker lets a call through (ARCHITECTURE §4): the grant is checked
//! before the tool acts, a refused grant is audited and never reaches the
//! tool, and every call that ran leaves its line in the audit log, whose
//! position goes back to the daemon as the anchor it stores.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use collegium_proto::toolset::v1::{
    AuditAnchor, DescribeRequest, InvokeRequest, ToolResult, tool_result,
};
use tonic::Status;

use crate::audit::{AuditLog, Outcome, Record};
use crate::grant::{GrantRefusal, GrantVerifier, arguments_digest};

pub struct Admission {
    namespace: String,
    verifier: Mutex<GrantVerifier>,
    log: Arc<Mutex<AuditLog>>,
}

/// A call let through, to be closed with its result. One dropped unclosed
/// (its caller went away, or the worker failed before it finished) still
/// leaves its line, as `abandoned`: a call that may have acted is never
/// missing from the log.
pub struct Admitted {
    record: Record,
    started: Instant,
    log: Arc<Mutex<AuditLog>>,
    closed: bool,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        let mut record = self.record.clone();
        record.outcome = Outcome::Abandoned;
        record.detail = "the call ended without a result".into();
        record.duration_ms = elapsed_ms(self.started);
        let written = match self.log.lock() {
            Ok(mut log) => log.append(record).map(drop).map_err(|e| e.to_string()),
            Err(_) => Err("a call panicked while holding the audit log".into()),
        };
        if let Err(error) = written {
            tracing::error!(call = %self.record.call, %error, "an abandoned call's audit line could not be written");
        }
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Admission {
    pub fn new(namespace: &str, verifier: GrantVerifier, log: AuditLog) -> Self {
        Self {
            namespace: namespace.to_string(),
            verifier: Mutex::new(verifier),
            log: Arc::new(Mutex::new(log)),
        }
    }

    /// Refuses a daemon speaking another protocol version, and takes the
    /// boot's key from a handshake.
    pub fn handshake(&self, request: &DescribeRequest) -> Result<(), Status> {
        if request.protocol_version != collegium_proto::PROTOCOL_VERSION {
            return Err(Status::failed_precondition(format!(
                "protocol version {} is not this worker's {}",
                request.protocol_version,
                collegium_proto::PROTOCOL_VERSION
            )));
        }
        lock(&self.verifier)?
            .accept_key(&request.boot_id, &request.grant_public_key)
            .map_err(|reason| Status::invalid_argument(format!("grant_public_key: {reason}")))
    }

    /// Checks the call's grant. A refusal is written to the audit log and
    /// returned as `PERMISSION_DENIED`, naming the reason.
    pub fn admit(&self, request: &InvokeRequest) -> Result<Admitted, Status> {
        let call = request
            .call
            .as_ref()
            .ok_or_else(|| Status::invalid_argument("the request carries no call"))?;
        let mut record = Record {
            agent: call.agent.clone(),
            turn: call.turn_id.clone(),
            call: call.call_id.clone(),
            tool: format!("{}::{}", self.namespace, call.tool),
            arguments_sha256: arguments_digest(call),
            decision: String::new(),
            outcome: Outcome::Success,
            detail: String::new(),
            duration_ms: 0,
        };
        let checked = lock(&self.verifier)?.check(request.grant.as_ref(), call, now_ms());
        match checked {
            Ok(claims) => {
                record.decision = claims.decision_id;
                Ok(Admitted {
                    record,
                    started: Instant::now(),
                    log: self.log.clone(),
                    closed: false,
                })
            }
            Err(refusal) => {
                record.outcome = Outcome::GrantRefused;
                record.detail = refusal.to_string();
                // The tool never ran, whatever became of its line: the
                // answer stays a refusal, which the daemon reads as not sent.
                if let Err(status) = self.write(record) {
                    tracing::error!(error = %status.message(), "a refused grant's audit line could not be written");
                }
                // A worker that holds no key was started after the daemon's
                // handshake (a restart under a running daemon): a code of its
                // own tells the daemon to hand the key over again.
                let message = format!("grant refused: {refusal}");
                Err(if refusal == GrantRefusal::NoKey {
                    Status::unauthenticated(message)
                } else {
                    Status::permission_denied(message)
                })
            }
        }
    }

    /// Writes the call's line and puts its position on the result.
    pub fn close(&self, mut admitted: Admitted, result: &mut ToolResult) -> Result<(), Status> {
        admitted.closed = true;
        let mut record = admitted.record.clone();
        record.duration_ms = elapsed_ms(admitted.started);
        (record.outcome, record.detail) = match &result.outcome {
            Some(tool_result::Outcome::Success(_)) => (Outcome::Success, String::new()),
            Some(tool_result::Outcome::Refusal(r)) => (Outcome::Refusal, r.message.clone()),
            Some(tool_result::Outcome::InvalidArguments(r)) => {
                (Outcome::InvalidArguments, r.message.clone())
            }
            Some(tool_result::Outcome::Unresolved(r)) => (Outcome::Unresolved, r.message.clone()),
            Some(tool_result::Outcome::Failure(r)) => (Outcome::Failure, r.message.clone()),
            None => (Outcome::Failure, "the tool returned no outcome".into()),
        };
        let anchor = self.write(record)?;
        result.audit = Some(AuditAnchor {
            seq: anchor.seq,
            hash: anchor.hash,
        });
        Ok(())
    }

    /// Closes a call that answers with one result and no progress: its
    /// audit line written, the result as the stream's one event.
    pub fn answer(
        &self,
        admitted: Admitted,
        mut result: ToolResult,
    ) -> Result<collegium_proto::toolset::v1::InvokeEvent, Status> {
        self.close(admitted, &mut result)?;
        Ok(collegium_proto::toolset::v1::InvokeEvent {
            event: Some(collegium_proto::toolset::v1::invoke_event::Event::Result(
                result,
            )),
        })
    }

    fn write(&self, record: Record) -> Result<crate::audit::Anchor, Status> {
        lock(&self.log)?.append(record).map_err(|e| {
            // The call may have acted; without its line the daemon must not
            // take it as done (§7.1).
            Status::data_loss(format!("the audit line could not be written: {e}"))
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>, Status> {
    mutex
        .lock()
        .map_err(|_| Status::internal("a call panicked while holding the worker's state"))
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
