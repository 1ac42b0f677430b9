//! The `Mailbox` service (§3.13, §4.2): the daemon's own calls beside the
//! agents' tools. The daemon keeps the cursor; the worker reads from it and
//! holds nothing between polls. A malformed message is an arrival with what
//! could be read and what could not; it never fails a poll.

use std::sync::Arc;

use collegium_proto::mail::v1::mailbox_server::Mailbox as MailboxService;
use collegium_proto::mail::v1::{
    Arrival, Attachment, CheckOutcome, CheckRequest, CheckResponse, Cursor, MarkSeenRequest,
    MarkSeenResponse, PollRequest, PollResponse,
};
use futures::TryStreamExt;
use tonic::{Request, Response, Status};

use crate::fetch;
use crate::imap::{self, ConnectError, ImapSession, Selected, step};
use crate::message;
use crate::settings::{Mailbox, Mailboxes};
use crate::tls::Trust;

/// The most arrivals one poll returns, whatever it is asked for: a backlog
/// drains over several polls.
pub const MAX_PER_POLL: u32 = 100;

pub struct MailboxWorker {
    mailboxes: Arc<Mailboxes>,
    trust: Arc<Trust>,
}

impl MailboxWorker {
    pub fn new(mailboxes: Arc<Mailboxes>, trust: Arc<Trust>) -> Self {
        Self { mailboxes, trust }
    }

    fn mailbox(&self, agent: &str) -> Result<&Mailbox, Status> {
        self.mailboxes.get(agent).ok_or_else(|| {
            Status::not_found(format!(
                "agent {agent} has no mailbox in the mail worker's configuration"
            ))
        })
    }

    async fn session(&self, mailbox: &Mailbox) -> Result<(ImapSession, Selected), Status> {
        imap::open(&mailbox.imap, &self.trust)
            .await
            .map_err(|e| Status::unavailable(format!("mailbox {}: {e}", mailbox.address)))
    }
}

fn unavailable(mailbox: &Mailbox) -> impl Fn(fetch::FetchError) -> Status + '_ {
    move |e| Status::unavailable(format!("mailbox {}: {e}", mailbox.address))
}

/// Seconds since the epoch of a fetched message's INTERNALDATE.
fn seconds(fetched: &fetch::Fetched) -> i64 {
    fetched.internal_date.map_or(0, |d| d.timestamp())
}

/// An IMAP date (`1-Jan-2024`) one day before `seconds`, so SINCE, which
/// compares dates in the server's zone, misses nothing on the day.
fn since(seconds: i64) -> String {
    let day = chrono::DateTime::from_timestamp(seconds.saturating_sub(86_400), 0)
        .unwrap_or_default()
        .date_naive();
    day.format("%-d-%b-%Y").to_string()
}

fn arrival(uidvalidity: u32, fetched: &fetch::Fetched) -> Arrival {
    let read = message::read(&fetched.bytes, fetched.whole);
    let mut problems = read.problems;
    if !fetched.whole {
        problems.push(format!(
            "The message is {} bytes, past the {} MiB a message is read at; only its headers were read.",
            fetched.size,
            fetch::WHOLE_BYTES >> 20
        ));
    }
    Arrival {
        uidvalidity,
        uid: fetched.uid,
        internal_date: seconds(fetched),
        message_id: read.message_id,
        from: read.from,
        to: read.to,
        cc: read.cc,
        date: read.date,
        subject: read.subject,
        text: read.text,
        html: read.html.unwrap_or_default(),
        attachments: read
            .attachments
            .into_iter()
            .map(|a| Attachment {
                name: a.name,
                content_type: a.content_type,
                size_bytes: a.size,
            })
            .collect(),
        problems,
    }
}

/// The cursor at the INBOX's newest message.
async fn head(
    session: &mut ImapSession,
    selected: Selected,
    mailbox: &Mailbox,
) -> Result<Cursor, Status> {
    if selected.exists == 0 {
        return Ok(Cursor {
            uidvalidity: selected.uidvalidity,
            last_uid: selected.uid_next.map_or(0, |n| n.saturating_sub(1)),
            last_internal_date: 0,
        });
    }
    let uids = fetch::uids_at(session, selected.exists, selected.exists)
        .await
        .map_err(unavailable(mailbox))?;
    let newest = fetch::sizes(session, &uids)
        .await
        .map_err(unavailable(mailbox))?
        .into_iter()
        .max_by_key(|f| f.uid);
    Ok(Cursor {
        uidvalidity: selected.uidvalidity,
        last_uid: newest.as_ref().map_or(0, |f| f.uid),
        last_internal_date: newest.as_ref().map_or(0, seconds),
    })
}

async fn poll(
    session: &mut ImapSession,
    selected: Selected,
    mailbox: &Mailbox,
    cursor: Option<Cursor>,
    max: u32,
) -> Result<PollResponse, Status> {
    let Some(cursor) = cursor else {
        return Ok(PollResponse {
            cursor: Some(head(session, selected, mailbox).await?),
            ..PollResponse::default()
        });
    };
    let renumbered = cursor.uidvalidity != selected.uidvalidity;
    let waiting: Vec<u32> = if renumbered {
        // The old UIDs mean nothing now: read again from the cursor's
        // internal date; the daemon drops what it already recorded by
        // Message-ID (docs/spec-findings.md, §3.13).
        let candidates = fetch::search(
            session,
            &format!("SINCE {}", since(cursor.last_internal_date)),
        )
        .await
        .map_err(unavailable(mailbox))?;
        let mut dated = fetch::sizes(session, &candidates)
            .await
            .map_err(unavailable(mailbox))?;
        dated.retain(|f| seconds(f) >= cursor.last_internal_date);
        let mut uids: Vec<u32> = dated.into_iter().map(|f| f.uid).collect();
        uids.sort_unstable();
        uids
    } else {
        // `n:*` always matches the newest message, even below n.
        let next = cursor.last_uid.saturating_add(1);
        fetch::search(session, &format!("UID {next}:*"))
            .await
            .map_err(unavailable(mailbox))?
            .into_iter()
            .filter(|uid| *uid > cursor.last_uid)
            .collect()
    };
    let more = waiting.len() > max as usize;
    let mut arrivals = Vec::new();
    for uid in waiting.into_iter().take(max as usize) {
        // One at a time: a large message is held alone, never beside the
        // rest of the backlog.
        if let Some(fetched) = fetch::whole(session, uid)
            .await
            .map_err(unavailable(mailbox))?
        {
            arrivals.push(arrival(selected.uidvalidity, &fetched));
        }
    }
    let cursor = match arrivals.last() {
        Some(last) => Cursor {
            uidvalidity: selected.uidvalidity,
            last_uid: last.uid,
            last_internal_date: last.internal_date,
        },
        None if renumbered => head(session, selected, mailbox).await?,
        None => cursor,
    };
    Ok(PollResponse {
        cursor: Some(cursor),
        arrivals,
        renumbered,
        more,
    })
}

/// Finds the message to mark: at `uid` where its Message-ID matches, else
/// by Message-ID anywhere in the INBOX.
async fn locate(
    session: &mut ImapSession,
    selected: Selected,
    mailbox: &Mailbox,
    request: &MarkSeenRequest,
) -> Result<Option<u32>, Status> {
    if request.uidvalidity == selected.uidvalidity {
        let at = fetch::summaries(session, &[request.uid])
            .await
            .map_err(unavailable(mailbox))?;
        if let Some(found) = at.first() {
            let id = message::read(&found.bytes, found.whole).message_id;
            if request.message_id.is_empty() || id == request.message_id {
                return Ok(Some(found.uid));
            }
        }
    }
    if request.message_id.is_empty() {
        return Ok(None);
    }
    let bracketed = crate::query::string(&format!("<{}>", request.message_id)).text;
    let found = fetch::search(session, &format!("HEADER Message-ID {bracketed}"))
        .await
        .map_err(unavailable(mailbox))?;
    Ok(found.last().copied())
}

#[tonic::async_trait]
impl MailboxService for MailboxWorker {
    async fn poll(&self, request: Request<PollRequest>) -> Result<Response<PollResponse>, Status> {
        let request = request.into_inner();
        if request.max == 0 {
            return Err(Status::invalid_argument(
                "max: a poll reads at least one arrival",
            ));
        }
        let mailbox = self.mailbox(&request.agent)?;
        let (mut session, selected) = self.session(mailbox).await?;
        let max = request.max.min(MAX_PER_POLL);
        let polled = poll(&mut session, selected, mailbox, request.cursor, max).await;
        imap::close(session).await;
        polled.map(Response::new)
    }

    async fn mark_seen(
        &self,
        request: Request<MarkSeenRequest>,
    ) -> Result<Response<MarkSeenResponse>, Status> {
        let request = request.into_inner();
        let mailbox = self.mailbox(&request.agent)?;
        let (mut session, selected) = self.session(mailbox).await?;
        let marked = async {
            let Some(uid) = locate(&mut session, selected, mailbox, &request).await? else {
                return Err(Status::not_found(format!(
                    "no message with Message-ID <{}> is in the INBOX of {}",
                    request.message_id, mailbox.address
                )));
            };
            let stored = step(async {
                let stream = session
                    .uid_store(uid.to_string(), "+FLAGS.SILENT (\\Seen)")
                    .await?;
                stream.try_collect::<Vec<_>>().await
            })
            .await
            .map_err(|e| Status::unavailable(format!("mailbox {}: {e}", mailbox.address)))?;
            stored.map(drop).map_err(|e| {
                Status::unavailable(format!(
                    "mailbox {}: marking message {uid} read: {e}",
                    mailbox.address
                ))
            })
        }
        .await;
        imap::close(session).await;
        marked.map(|()| Response::new(MarkSeenResponse {}))
    }

    async fn check(
        &self,
        request: Request<CheckRequest>,
    ) -> Result<Response<CheckResponse>, Status> {
        let request = request.into_inner();
        let mailbox = self.mailbox(&request.agent)?;
        let (outcome, detail) = match imap::open(&mailbox.imap, &self.trust).await {
            Ok((session, _)) => {
                imap::close(session).await;
                (
                    CheckOutcome::Ok,
                    format!(
                        "mailbox {} on {}: logged in and selected the INBOX",
                        mailbox.address,
                        mailbox.imap.named()
                    ),
                )
            }
            Err(error @ ConnectError::Refused { .. }) => (
                CheckOutcome::Refused,
                format!("mailbox {}: {error}", mailbox.address),
            ),
            Err(error @ ConnectError::Unreachable { .. }) => (
                CheckOutcome::Unreachable,
                format!("mailbox {}: {error}", mailbox.address),
            ),
        };
        Ok(Response::new(CheckResponse {
            outcome: outcome as i32,
            detail,
        }))
    }
}
