//! The reads (§3.13): `mail::list`, `mail::search`, `mail::conversation`
//! and `mail::open`, ungated and safe to repeat. Each opens its own
//! connection, reads with PEEK so nothing is marked read (marking read is
//! the trigger's resolution, §4.2), and answers with text the model reads.

use chrono::{DateTime, FixedOffset};

use crate::arguments::{self, ArgumentError};
use crate::fetch::{self, Fetched};
use crate::id::MessageRef;
use crate::imap::{self, ImapSession, Selected};
use crate::message::{self, Read};
use crate::result;
use crate::settings::Mailbox;
use crate::tls::Trust;
use collegium_proto::toolset::v1::ToolResult;

/// How many characters of a body a listing entry previews.
pub const PREVIEW_CHARS: usize = 160;

/// A read that could not finish, as its result.
enum Stop {
    Result(Box<ToolResult>),
}

impl From<ArgumentError> for Stop {
    fn from(error: ArgumentError) -> Self {
        Stop::Result(Box::new(match error {
            ArgumentError::Invalid(message) => result::invalid(message),
            ArgumentError::AttachmentContent(_) => {
                result::refusal(error.to_string(), "attachment content refused".into())
            }
        }))
    }
}

impl From<imap::ConnectError> for Stop {
    fn from(error: imap::ConnectError) -> Self {
        Stop::Result(Box::new(result::failure(
            format!("The mailbox could not be read: {error}."),
            "mailbox unavailable".into(),
        )))
    }
}

impl From<fetch::FetchError> for Stop {
    fn from(error: fetch::FetchError) -> Self {
        Stop::Result(Box::new(result::failure(
            format!("The mailbox stopped answering mid-read: {error}."),
            "mailbox read failed".into(),
        )))
    }
}

impl From<crate::id::RefError> for Stop {
    fn from(error: crate::id::RefError) -> Self {
        Stop::Result(Box::new(match error {
            crate::id::RefError::Malformed(_) => result::invalid(error.to_string()),
            crate::id::RefError::Stale { .. } => {
                result::refusal(error.to_string(), "stale message id".into())
            }
        }))
    }
}

fn finish(outcome: Result<ToolResult, Stop>) -> ToolResult {
    match outcome {
        Ok(result) => result,
        Err(Stop::Result(result)) => *result,
    }
}

/// A fresh session, or the result saying why there is none.
async fn session(
    mailbox: &Mailbox,
    trust: &Trust,
) -> Result<(ImapSession, Selected), Box<ToolResult>> {
    imap::open(&mailbox.imap, trust)
        .await
        .map_err(|error| Box::new(finish(Err(error.into()))))
}

pub async fn list(mailbox: &Mailbox, trust: &Trust, bytes: &[u8]) -> ToolResult {
    let count =
        match arguments::read::<arguments::List>(bytes).and_then(|a| arguments::count(a.count)) {
            Ok(count) => count,
            Err(error) => return finish(Err(error.into())),
        };
    let (mut session, selected) = match session(mailbox, trust).await {
        Ok(opened) => opened,
        Err(result) => return *result,
    };
    let outcome = listed(&mut session, selected, mailbox, count).await;
    imap::close(session).await;
    finish(outcome)
}

async fn listed(
    session: &mut ImapSession,
    selected: Selected,
    mailbox: &Mailbox,
    count: u32,
) -> Result<ToolResult, Stop> {
    if selected.exists == 0 {
        return Ok(result::success(
            format!("The mailbox {} holds no messages.", mailbox.address),
            "no messages".into(),
        ));
    }
    let from = selected.exists.saturating_sub(count - 1).max(1);
    let uids = fetch::uids_at(session, from, selected.exists).await?;
    let mut summaries = fetch::summaries(session, &uids).await?;
    summaries.sort_by_key(|f| std::cmp::Reverse(f.uid));
    let head = format!(
        "The mailbox {} holds {} messages; the newest {} follow, newest first.",
        mailbox.address,
        selected.exists,
        summaries.len()
    );
    Ok(result::success(
        entries(&head, selected.uidvalidity, &summaries),
        format!("{} messages listed", summaries.len()),
    ))
}

pub async fn search(mailbox: &Mailbox, trust: &Trust, bytes: &[u8]) -> ToolResult {
    let (phrase, count) = match arguments::read::<arguments::Search>(bytes).and_then(|a| {
        if a.phrase.trim().is_empty() {
            return Err(ArgumentError::Invalid(
                "phrase: give a phrase to search for".into(),
            ));
        }
        Ok((a.phrase, arguments::count(a.count)?))
    }) {
        Ok(read) => read,
        Err(error) => return finish(Err(error.into())),
    };
    let (mut session, selected) = match session(mailbox, trust).await {
        Ok(opened) => opened,
        Err(result) => return *result,
    };
    let outcome = searched(&mut session, selected, mailbox, (&phrase, count)).await;
    imap::close(session).await;
    finish(outcome)
}

async fn searched(
    session: &mut ImapSession,
    selected: Selected,
    mailbox: &Mailbox,
    (phrase, count): (&str, u32),
) -> Result<ToolResult, Stop> {
    let found = fetch::search(session, &crate::query::anywhere(phrase)).await?;
    if found.is_empty() {
        return Ok(result::success(
            format!(
                "No message in {} has \"{phrase}\" in its sender, subject or body.",
                mailbox.address
            ),
            "no matches".into(),
        ));
    }
    let newest: Vec<u32> = found.iter().rev().take(count as usize).copied().collect();
    let mut summaries = fetch::summaries(session, &newest).await?;
    summaries.sort_by_key(|f| std::cmp::Reverse(f.uid));
    let head = format!(
        "{} messages have \"{phrase}\" in their sender, subject or body; {} follow, newest first.",
        found.len(),
        if found.len() > summaries.len() {
            format!("the newest {}", summaries.len())
        } else {
            "all".to_string()
        }
    );
    Ok(result::success(
        entries(&head, selected.uidvalidity, &summaries),
        format!("{} of {} matches", summaries.len(), found.len()),
    ))
}

pub async fn open(mailbox: &Mailbox, trust: &Trust, bytes: &[u8]) -> ToolResult {
    let given = match arguments::read::<arguments::OneMessage>(bytes)
        .map_err(Stop::from)
        .and_then(|a| MessageRef::parse(&a.message).map_err(Stop::from))
    {
        Ok(given) => given,
        Err(stop) => return finish(Err(stop)),
    };
    let (mut session, selected) = match session(mailbox, trust).await {
        Ok(opened) => opened,
        Err(result) => return *result,
    };
    let outcome = opened_message(&mut session, selected, given).await;
    imap::close(session).await;
    finish(outcome)
}

async fn opened_message(
    session: &mut ImapSession,
    selected: Selected,
    given: MessageRef,
) -> Result<ToolResult, Stop> {
    let id = given.current(selected.uidvalidity)?;
    let Some(fetched) = fetch::whole(session, id.uid).await? else {
        return Err(gone(id));
    };
    if !fetched.whole {
        return Ok(result::refusal(
            format!(
                "The message {id} is {} bytes, past the {} MiB a message is opened at; only its headers could be read:\n\n{}",
                fetched.size,
                fetch::WHOLE_BYTES >> 20,
                String::from_utf8_lossy(&fetched.bytes)
            ),
            "message too large to open".into(),
        ));
    }
    let read = message::read(&fetched.bytes, true);
    Ok(result::success(
        opened(id, &fetched, &read),
        format!("opened {id}"),
    ))
}

pub async fn conversation(mailbox: &Mailbox, trust: &Trust, bytes: &[u8]) -> ToolResult {
    let given = match arguments::read::<arguments::OneMessage>(bytes)
        .map_err(Stop::from)
        .and_then(|a| MessageRef::parse(&a.message).map_err(Stop::from))
    {
        Ok(given) => given,
        Err(stop) => return finish(Err(stop)),
    };
    let (mut session, selected) = match session(mailbox, trust).await {
        Ok(opened) => opened,
        Err(result) => return *result,
    };
    let outcome = gathered(&mut session, selected, mailbox, given).await;
    imap::close(session).await;
    finish(outcome)
}

async fn gathered(
    session: &mut ImapSession,
    selected: Selected,
    mailbox: &Mailbox,
    given: MessageRef,
) -> Result<ToolResult, Stop> {
    let id = given.current(selected.uidvalidity)?;
    let Some(start) = fetch::summaries(session, &[id.uid])
        .await?
        .into_iter()
        .next()
    else {
        return Err(gone(id));
    };
    let read = message::read(&start.bytes, start.whole);
    let mut uids = vec![id.uid];
    if let Some(criteria) = thread_criteria(&read) {
        uids.extend(fetch::search(session, &criteria).await?);
    }
    uids.sort_unstable();
    uids.dedup();
    let mut summaries = fetch::summaries(session, &uids).await?;
    summaries.sort_by_key(|f| f.uid);
    let head = format!(
        "This conversation holds {} message{} in the INBOX of {}, oldest first (replies sent from this mailbox are not kept in the INBOX).",
        summaries.len(),
        if summaries.len() == 1 { "" } else { "s" },
        mailbox.address
    );
    Ok(result::success(
        entries(&head, selected.uidvalidity, &summaries),
        format!("{} messages in the conversation", summaries.len()),
    ))
}

/// IMAP criteria for every message of `read`'s conversation: the messages
/// it names (References, In-Reply-To), those naming it, and those naming
/// the conversation's first message.
fn thread_criteria(read: &Read) -> Option<String> {
    let mut ids: Vec<String> = read
        .references
        .iter()
        .chain(&read.in_reply_to)
        .cloned()
        .collect();
    if !read.message_id.is_empty() {
        ids.push(read.message_id.clone());
    }
    ids.sort();
    ids.dedup();
    let mut criteria: Vec<String> = Vec::new();
    for id in &ids {
        let bracketed = crate::query::string(&format!("<{id}>")).text;
        criteria.push(format!("HEADER Message-ID {bracketed}"));
        criteria.push(format!("HEADER References {bracketed}"));
        criteria.push(format!("HEADER In-Reply-To {bracketed}"));
    }
    let mut iter = criteria.into_iter();
    let first = iter.next()?;
    Some(iter.fold(first, |all, next| format!("OR ({all}) ({next})")))
}

fn gone(id: MessageRef) -> Stop {
    Stop::Result(Box::new(result::refusal(
        format!(
            "No message {id} is in the mailbox: it was deleted or moved. List or search again."
        ),
        "no such message".into(),
    )))
}

/// A receipt time as the model reads it.
pub fn received(date: Option<DateTime<FixedOffset>>) -> String {
    date.map(|d| {
        d.with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M UTC")
            .to_string()
    })
    .unwrap_or_else(|| "unknown".into())
}

/// A listing: `head`, then one entry per message.
fn entries(head: &str, uidvalidity: u32, fetched: &[Fetched]) -> String {
    let mut text = format!("{head}\n");
    for f in fetched {
        let read = message::read(&f.bytes, f.whole);
        let id = MessageRef {
            uidvalidity,
            uid: f.uid,
        };
        let attachments = if !read.attachments.is_empty() {
            "yes".to_string()
        } else if f.whole {
            "no".to_string()
        } else {
            format!(
                "not known from its first {} KiB (mail::open says)",
                fetch::SUMMARY_BYTES >> 10
            )
        };
        let preview: String = read
            .text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(PREVIEW_CHARS)
            .collect();
        text.push_str(&format!(
            "\n- message {id}{unread}\n  from: {from}\n  subject: {subject}\n  received: {received}\n  attachments: {attachments}\n  preview: {preview}\n",
            unread = if f.seen { "" } else { " (unread)" },
            from = or_none(&read.from),
            subject = or_none(&read.subject),
            received = received(f.internal_date),
        ));
    }
    text
}

fn or_none(text: &str) -> &str {
    if text.is_empty() { "(none)" } else { text }
}

/// An opened message: its headers, what could not be read, its
/// attachments described, then its whole body.
fn opened(id: MessageRef, fetched: &Fetched, read: &Read) -> String {
    let mut text = format!(
        "Message {id}\nFrom: {}\nTo: {}\n",
        or_none(&read.from),
        or_none(&read.to)
    );
    if !read.cc.is_empty() {
        text.push_str(&format!("Cc: {}\n", read.cc));
    }
    text.push_str(&format!(
        "Date: {}\nSubject: {}\nReceived: {}\n",
        or_none(&read.date),
        or_none(&read.subject),
        received(fetched.internal_date)
    ));
    if read.attachments.is_empty() {
        text.push_str("Attachments: none.\n");
    } else {
        text.push_str(&format!(
            "Attachments ({}; described only, their content is not available to you):\n",
            read.attachments.len()
        ));
        for a in &read.attachments {
            text.push_str(&format!(
                "- {} ({}, {} bytes)\n",
                a.name, a.content_type, a.size
            ));
        }
    }
    for problem in &read.problems {
        text.push_str(&format!("Could not be read: {problem}\n"));
    }
    text.push('\n');
    text.push_str(&read.text);
    text
}
