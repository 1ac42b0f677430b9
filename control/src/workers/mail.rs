//! The daemon's client of the mail worker's `Mailbox` service (§3.13,
//! §4.2): the inbound poll from a cursor the daemon stores, marking an
//! arrival read when its trigger is resolved, and the boot check of each
//! mailbox. The daemon names an agent; the worker maps it to the mailbox
//! and credentials it alone holds. Before any call the socket's server is
//! checked to be the worker's own user.

use std::path::Path;
use std::time::Duration;

use collegium_proto::mail::v1::mailbox_client::MailboxClient;
use collegium_proto::mail::v1::{
    CheckOutcome, CheckRequest, MarkSeenRequest, PollRequest, PollResponse,
};
use tonic::transport::Channel;

pub use collegium_proto::mail::v1::{Arrival, Attachment, Cursor};

/// How long a poll may take: a backlog's messages are read one by one.
pub const POLL_WITHIN: Duration = Duration::from_secs(300);
/// How long marking read or the boot check may take.
pub const CALL_WITHIN: Duration = Duration::from_secs(90);

#[derive(Debug, thiserror::Error)]
pub enum MailWorkerError {
    #[error("cannot connect to the mail worker at {socket}: {reason}")]
    Connect { socket: String, reason: String },
    /// The worker holds no mailbox for the agent: its configuration and the
    /// daemon's differ (restart the worker after a configuration change).
    #[error("the mail worker has no mailbox for this agent: {0}")]
    NoMailbox(String),
    /// The message to mark read is no longer in the INBOX.
    #[error("{0}")]
    NoMessage(String),
    /// The mailbox's server did not answer, or failed mid-call; the call
    /// may be tried again later.
    #[error("the mailbox could not be read: {0}")]
    Unavailable(String),
    #[error("the mail worker did not answer within {} s", .0.as_secs())]
    TimedOut(Duration),
    #[error("the mail worker failed the call: {0}")]
    Failed(String),
    #[error("the mail worker answered with a check outcome this daemon does not know: {0}")]
    UnknownOutcome(i32),
}

/// What the boot check found of one mailbox (§3.13).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Logged in and selected the INBOX.
    Ok(String),
    /// The server refused the credentials: boot is refused.
    Refused(String),
    /// No answer that settles the credentials: polling goes on, and the
    /// announcement channel is told.
    Unreachable(String),
}

/// A connected mail worker's `Mailbox` service.
#[derive(Debug, Clone)]
pub struct MailWorker {
    client: MailboxClient<Channel>,
}

fn typed(status: tonic::Status) -> MailWorkerError {
    let message = status.message().to_string();
    match status.code() {
        tonic::Code::NotFound if message.contains("has no mailbox") => {
            MailWorkerError::NoMailbox(message)
        }
        tonic::Code::NotFound => MailWorkerError::NoMessage(message),
        tonic::Code::Unavailable => MailWorkerError::Unavailable(message),
        _ => MailWorkerError::Failed(message),
    }
}

async fn within<T>(
    limit: Duration,
    call: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, MailWorkerError> {
    match tokio::time::timeout(limit, call).await {
        Ok(Ok(response)) => Ok(response.into_inner()),
        Ok(Err(status)) => Err(typed(status)),
        Err(_) => Err(MailWorkerError::TimedOut(limit)),
    }
}

impl MailWorker {
    /// Connects to the worker on `socket`, served by `served_by` (the
    /// `collegium-mail` user).
    pub async fn connect(socket: &Path, served_by: u32) -> Result<Self, MailWorkerError> {
        let channel = collegium_worker_kit::client::channel(socket, Some(served_by))
            .await
            .map_err(|e| MailWorkerError::Connect {
                socket: socket.display().to_string(),
                reason: super::dispatch::error_chain(&e),
            })?;
        Ok(Self::over(channel))
    }

    /// The service over an open channel to the worker's socket.
    pub fn over(channel: Channel) -> Self {
        Self {
            client: MailboxClient::new(channel).max_decoding_message_size(usize::MAX),
        }
    }

    /// The arrivals after `cursor` in `agent`'s INBOX, oldest first, at
    /// most `max`; without a cursor, the head and no arrivals.
    pub async fn poll(
        &self,
        agent: &str,
        cursor: Option<Cursor>,
        max: u32,
    ) -> Result<PollResponse, MailWorkerError> {
        let request = PollRequest {
            agent: agent.to_string(),
            cursor,
            max,
        };
        within(POLL_WITHIN, self.client.clone().poll(request)).await
    }

    /// Marks one arrival read (`\Seen`): the source's completion of a
    /// resolved trigger (§4.2).
    pub async fn mark_seen(
        &self,
        agent: &str,
        uidvalidity: u32,
        uid: u32,
        message_id: &str,
    ) -> Result<(), MailWorkerError> {
        let request = MarkSeenRequest {
            agent: agent.to_string(),
            uidvalidity,
            uid,
            message_id: message_id.to_string(),
        };
        within(CALL_WITHIN, self.client.clone().mark_seen(request))
            .await
            .map(drop)
    }

    /// Logs in to `agent`'s mailbox and selects its INBOX.
    pub async fn check(&self, agent: &str) -> Result<Check, MailWorkerError> {
        let request = CheckRequest {
            agent: agent.to_string(),
        };
        let answer = within(CALL_WITHIN, self.client.clone().check(request)).await?;
        match CheckOutcome::try_from(answer.outcome) {
            Ok(CheckOutcome::Ok) => Ok(Check::Ok(answer.detail)),
            Ok(CheckOutcome::Refused) => Ok(Check::Refused(answer.detail)),
            Ok(CheckOutcome::Unreachable) => Ok(Check::Unreachable(answer.detail)),
            Ok(CheckOutcome::Unspecified) | Err(_) => {
                Err(MailWorkerError::UnknownOutcome(answer.outcome))
            }
        }
    }
}
