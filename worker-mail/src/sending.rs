//! `mail::send` and `mail::reply` (§3.13): gated, so each is rendered for a
//! person first and sent only on their approval, and never sent twice. The
//! arguments are checked, and a reply's original read, before the prompt:
//! an address that does not parse is refused then, and the prompt never
//! shows a send that could not happen (§3.7).

use collegium_proto::toolset::v1::ToolResult;
use lettre::Address;

use crate::arguments::{self, ArgumentError};
use crate::compose::{self, Original, Outgoing};
use crate::fetch;
use crate::id::{MessageRef, RefError};
use crate::imap;
use crate::message;
use crate::result;
use crate::settings::Mailbox;
use crate::smtp::{self, Sent};
use crate::tls::Trust;

/// Why a send could not be prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unprepared {
    /// Arguments the tool refuses (§7.2).
    Invalid(String),
    /// A value the domain refuses: a stale id, a message with no sender.
    Refused(String),
    /// The mailbox could not be read to find the original.
    Failed(String),
}

impl Unprepared {
    pub fn message(&self) -> &str {
        match self {
            Self::Invalid(m) | Self::Refused(m) | Self::Failed(m) => m,
        }
    }

    pub fn into_result(self) -> ToolResult {
        match self {
            Self::Invalid(m) => result::invalid(m),
            Self::Refused(m) => result::refusal(m, "nothing sent".into()),
            Self::Failed(m) => result::failure(m, "nothing sent".into()),
        }
    }
}

impl From<ArgumentError> for Unprepared {
    fn from(error: ArgumentError) -> Self {
        match error {
            ArgumentError::Invalid(m) => Self::Invalid(m),
            ArgumentError::AttachmentContent(_) => Self::Refused(error.to_string()),
        }
    }
}

fn own_address(mailbox: &Mailbox) -> Result<Address, Unprepared> {
    mailbox.address.parse().map_err(|e| {
        Unprepared::Failed(format!(
            "the mailbox's own address `{}` does not parse ({e}); the deployment's configuration must give a plain address",
            mailbox.address
        ))
    })
}

/// `mail::send`, checked and built.
pub fn prepare_send(mailbox: &Mailbox, bytes: &[u8]) -> Result<Outgoing, Unprepared> {
    let send: arguments::Send = arguments::read(bytes)?;
    if send.to.is_empty() {
        return Err(Unprepared::Invalid(
            "to: give at least one recipient".into(),
        ));
    }
    let to = arguments::addresses("to", &send.to)?;
    let cc = arguments::addresses("cc", &send.cc)?;
    Ok(Outgoing {
        from: own_address(mailbox)?,
        to,
        cc,
        subject: send.subject,
        body: send.body,
        replying_to: None,
        template: mailbox.html_template.clone(),
    })
}

/// `mail::reply`, checked, its original read, and built.
pub async fn prepare_reply(
    mailbox: &Mailbox,
    trust: &Trust,
    bytes: &[u8],
) -> Result<Outgoing, Unprepared> {
    let reply: arguments::Reply = arguments::read(bytes)?;
    let cc = arguments::addresses("cc", &reply.cc)?;
    let given =
        MessageRef::parse(&reply.message).map_err(|e| Unprepared::Invalid(e.to_string()))?;
    let from = own_address(mailbox)?;
    let original = original(mailbox, trust, given).await?;
    Ok(Outgoing {
        from,
        to: vec![original.recipient.clone()],
        cc,
        subject: compose::reply_subject(&original.subject),
        body: reply.body,
        replying_to: Some(original),
        template: mailbox.html_template.clone(),
    })
}

async fn original(
    mailbox: &Mailbox,
    trust: &Trust,
    given: MessageRef,
) -> Result<Original, Unprepared> {
    let (mut session, selected) = imap::open(&mailbox.imap, trust)
        .await
        .map_err(|e| Unprepared::Failed(format!("The mailbox could not be read: {e}.")))?;
    let fetched = match given.current(selected.uidvalidity) {
        Ok(id) => fetch::summaries(&mut session, &[id.uid])
            .await
            .map_err(|e| Unprepared::Failed(format!("The mailbox stopped answering: {e}."))),
        Err(stale @ RefError::Stale { .. }) => Err(Unprepared::Refused(stale.to_string())),
        Err(other) => Err(Unprepared::Invalid(other.to_string())),
    };
    imap::close(session).await;
    let Some(fetched) = fetched?.into_iter().next() else {
        return Err(Unprepared::Refused(format!(
            "No message {given} is in the mailbox: it was deleted or moved. List or search again."
        )));
    };
    let read = message::read(&fetched.bytes, fetched.whole);
    let recipient = read
        .reply_address
        .as_deref()
        .and_then(|a| a.parse::<Address>().ok())
        .ok_or_else(|| {
            Unprepared::Refused(format!(
                "The message {given} names no address to reply to (its Reply-To and From are missing or do not parse: `{}`); use mail::send to a recipient you name.",
                read.from
            ))
        })?;
    Ok(Original {
        id: given.to_string(),
        from: read.from,
        subject: read.subject,
        recipient,
        message_id: (!read.message_id.is_empty()).then_some(read.message_id),
        references: read.references,
    })
}

/// Sends an approved message once, and says what became of it.
pub async fn deliver(mailbox: &Mailbox, trust: &Trust, outgoing: &Outgoing) -> ToolResult {
    let bytes = match outgoing.build() {
        Ok(bytes) => bytes,
        Err(error) => {
            return result::failure(format!("Nothing was sent: {error}."), "nothing sent".into());
        }
    };
    let recipients = outgoing.recipients();
    let named: Vec<String> = recipients.iter().map(ToString::to_string).collect();
    match smtp::send(&mailbox.smtp, trust, &outgoing.from, &recipients, &bytes).await {
        Sent::Accepted(answer) => result::success(
            format!(
                "Sent from {} to {} (subject \"{}\"). The server took it: {answer}",
                outgoing.from,
                named.join(", "),
                outgoing.subject
            ),
            format!("sent to {} recipients", named.len()),
        ),
        Sent::Refused(reason) => result::refusal(
            format!("Nothing was sent: {reason}."),
            "the server refused; nothing sent".into(),
        ),
        Sent::NotSent(reason) => result::failure(
            format!("Nothing was sent: {reason}."),
            "nothing sent".into(),
        ),
        Sent::Unresolved(reason) => result::unresolved(
            format!(
                "Whether the message to {} was sent cannot be established: {reason}. It was not sent again; check the recipients' mail before sending it once more.",
                named.join(", ")
            ),
            "send unresolved".into(),
        ),
    }
}
