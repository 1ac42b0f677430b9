//! What the daemon asks of a mailbox (§3.13, §4.2): the inbound poll, marking
//! a handled arrival read, and the boot proof. The mail worker serves it
//! over its `Mailbox` service; the daemon names an agent and never holds a
//! mailbox's credentials (ARCHITECTURE §4). A trait, so the triggers that
//! use it need not know how the worker is reached.

use std::future::Future;
use std::pin::Pin;

use collegium_proto::mail::v1::{CheckResponse, PollResponse};

use crate::store::MailCursor;

/// Why a call to the mailbox did not answer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct MailboxError(pub String);

pub type MailboxFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, MailboxError>> + Send + 'a>>;

pub trait MailSource: Send + Sync {
    /// The arrivals after `cursor`, at most `max`, oldest first; none and
    /// the head's cursor where there is no cursor yet.
    fn poll<'a>(
        &'a self,
        agent: &'a str,
        cursor: Option<MailCursor>,
        max: u32,
    ) -> MailboxFuture<'a, PollResponse>;

    /// Marks one arrival read: mail's own completion of a trigger (§4.2).
    fn mark_seen<'a>(
        &'a self,
        agent: &'a str,
        uidvalidity: u32,
        uid: u32,
        message_id: &'a str,
    ) -> MailboxFuture<'a, ()>;

    /// Logs in and selects the INBOX.
    fn check<'a>(&'a self, agent: &'a str) -> MailboxFuture<'a, CheckResponse>;
}
