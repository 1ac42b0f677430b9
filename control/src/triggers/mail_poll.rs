//! The inbound poll (§3.13, §4.2): deterministic code reading each agent's
//! mailbox on its interval and recording one trigger per arrival. The mail
//! worker reads; this loop keeps the cursor, which moves in the same store
//! transaction as the rows it read, so a crash between the read and the
//! commit reads the same mail again and records each arrival once. The first
//! connection reads to the head and records nothing. A backlog drains a
//! batch at a time. A mailbox that cannot be reached is said so by the
//! system bot in its announcement channel, once, and again when it answers;
//! polling goes on.

use std::sync::Arc;
use std::time::Duration;

use collegium_proto::mail::v1::Arrival;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tracing::{info, warn};

use super::intake::{self, IntakeRefusal};
use crate::chat::directory::framework_post;
use crate::config::LoadedConfig;
use crate::lanes::LaneInput;
use crate::services::Services;
use crate::store::{MailCursor, NewTrigger, TriggerSource};
use crate::workers::mail::{Cursor, MailWorker};

/// Arrivals recorded per poll: a backlog of 200 drains in 20 polls rather
/// than at once (§3.13).
pub const BATCH: u32 = 10;

/// The pause between the polls that drain a backlog.
pub const BACKLOG_PAUSE: Duration = Duration::from_secs(1);

/// How often a mailbox is read where its settings name no interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// One agent's mailbox, as the daemon knows it: never its credentials.
#[derive(Debug, Clone)]
pub struct Mailbox {
    pub agent: String,
    pub address: String,
    /// The announcement channel's name.
    pub channel: String,
    pub interval: Duration,
}

/// Every mailbox the configuration gives an agent holding a mail tool.
pub fn mailboxes(loaded: &LoadedConfig) -> Vec<Mailbox> {
    loaded
        .agents
        .iter()
        .filter_map(|agent| {
            let mailbox = agent.settings.get("mail")?.get("mailbox")?;
            let text = |key: &str| mailbox.get(key).and_then(Value::as_str).map(str::to_string);
            Some(Mailbox {
                agent: agent.username.clone(),
                address: text("address")?,
                channel: text("announce_channel")?,
                interval: mailbox
                    .get("poll_interval_secs")
                    .and_then(Value::as_u64)
                    .map_or(DEFAULT_INTERVAL, Duration::from_secs),
            })
        })
        .collect()
}

/// A mailbox whose announcement channel is no target for its agent: boot
/// refuses it (§3.13), as it refuses credentials the server turned down
/// (`workers::framework::connect_mailboxes`).
#[derive(Debug, thiserror::Error)]
#[error("agents.{agent}.settings.mail.mailbox.announce_channel: {refusal}")]
pub struct MailboxRefused {
    pub agent: String,
    pub refusal: IntakeRefusal,
}

/// A mailbox proven at boot, and whether it answered.
#[derive(Debug, Clone)]
pub struct Proven {
    pub mailbox: Mailbox,
    pub channel_id: String,
    /// Why it could not be reached at boot; none where it answered.
    pub unreachable: Option<String>,
}

/// Checks every mailbox's announcement channel at boot: a direct message or
/// a channel without the agent refuses boot naming the mailbox's key.
/// `unreachable` holds, by agent, why a server did not answer the boot
/// check; that is no refusal.
pub async fn prove(
    services: &Services,
    mailboxes: Vec<Mailbox>,
    unreachable: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<Proven>, MailboxRefused> {
    let mut proven = Vec::new();
    for mailbox in mailboxes {
        let channel_id = intake::target(services, &mailbox.agent, &mailbox.channel)
            .await
            .map_err(|refusal| MailboxRefused {
                agent: mailbox.agent.clone(),
                refusal,
            })?;
        proven.push(Proven {
            unreachable: unreachable.get(&mailbox.agent).cloned(),
            mailbox,
            channel_id,
        });
    }
    Ok(proven)
}

/// Polls one mailbox until `stop`.
pub fn spawn(
    services: Arc<Services>,
    source: Arc<MailWorker>,
    proven: Proven,
    lanes: mpsc::Sender<LaneInput>,
    mut stop: watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        let Proven {
            mailbox,
            channel_id,
            unreachable,
        } = proven;
        let mut reachable = true;
        if let Some(why) = unreachable {
            notice_unreachable(&services, &mailbox, &channel_id, &why).await;
            reachable = false;
        }
        info!(agent = %mailbox.agent, mailbox = %mailbox.address, "mail poll running");
        loop {
            let wait = match poll_once(&services, &source, &mailbox, &channel_id, &lanes).await {
                Ok(more) => {
                    if !reachable {
                        notice_recovered(&services, &mailbox, &channel_id).await;
                        reachable = true;
                    }
                    if more {
                        BACKLOG_PAUSE
                    } else {
                        mailbox.interval
                    }
                }
                Err(why) => {
                    warn!(agent = %mailbox.agent, mailbox = %mailbox.address, %why, "mail poll failed");
                    if reachable {
                        notice_unreachable(&services, &mailbox, &channel_id, &why).await;
                        reachable = false;
                    }
                    mailbox.interval
                }
            };
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop.changed() => return,
            }
        }
    });
}

/// One poll: the arrivals after the stored cursor, recorded with the
/// cursor's move in one transaction. Whether more wait.
async fn poll_once(
    services: &Services,
    source: &MailWorker,
    mailbox: &Mailbox,
    channel_id: &str,
    lanes: &mpsc::Sender<LaneInput>,
) -> Result<bool, String> {
    let agent = mailbox.agent.clone();
    let cursor = services
        .store
        .call(move |s| s.mail_cursor(&agent))
        .await
        .map_err(|e| format!("the store could not be read: {e}"))?;
    let cursor = cursor.map(|c| Cursor {
        uidvalidity: c.uidvalidity,
        last_uid: c.last_uid,
        last_internal_date: c.last_internal_date,
    });
    let polled = source
        .poll(&mailbox.agent, cursor, BATCH)
        .await
        .map_err(|e| e.to_string())?;
    let Some(next) = polled.cursor else {
        return Err("the mail worker answered without a cursor".into());
    };
    let next = MailCursor {
        uidvalidity: next.uidvalidity,
        last_uid: next.last_uid,
        last_internal_date: next.last_internal_date,
    };
    let arrivals: Vec<NewTrigger> = polled
        .arrivals
        .iter()
        .map(|arrival| recorded(&mailbox.agent, channel_id, arrival))
        .collect();
    let agent = mailbox.agent.clone();
    let now = chrono::Utc::now().timestamp_millis();
    let ids = services
        .store
        .call(move |s| s.record_mail(&agent, next, &arrivals, now))
        .await
        .map_err(|e| format!("the store could not record the arrivals: {e}"))?;
    if !ids.is_empty() {
        info!(agent = %mailbox.agent, arrivals = ids.len(), "mail arrived");
        let _ = lanes
            .send(LaneInput::TriggerRecorded(channel_id.to_string()))
            .await;
    }
    Ok(polled.more)
}

/// An arrival as its trigger row: the reference is its Message-ID, the
/// body its whole text, and the detail what its announcement and its
/// completion read.
fn recorded(agent: &str, channel_id: &str, arrival: &Arrival) -> NewTrigger {
    NewTrigger {
        source: TriggerSource::Mail,
        agent: agent.to_string(),
        channel_id: channel_id.to_string(),
        sender: arrival.from.clone(),
        subject: arrival.subject.clone(),
        reference: arrival.message_id.clone(),
        body: Some(arrival.text.clone()),
        detail: json!({
            "uidvalidity": arrival.uidvalidity,
            "uid": arrival.uid,
            "internal_date": arrival.internal_date,
            "from": arrival.from,
            "to": arrival.to,
            "cc": arrival.cc,
            "date": arrival.date,
            "subject": arrival.subject,
            "html": arrival.html,
            "attachments": arrival.attachments.iter().map(|a| json!({
                "name": a.name,
                "content_type": a.content_type,
                "size_bytes": a.size_bytes,
            })).collect::<Vec<_>>(),
            "problems": arrival.problems,
        }),
    }
}

async fn notice_unreachable(services: &Services, mailbox: &Mailbox, channel_id: &str, why: &str) {
    let text = format!(
        "⚠ The mailbox {} of {} cannot be reached: {why}. Mail is not being read; polling goes on, and this channel will be told when it answers again (§3.13).",
        mailbox.address,
        services.display_name(&mailbox.agent)
    );
    notice(services, channel_id, text).await;
}

async fn notice_recovered(services: &Services, mailbox: &Mailbox, channel_id: &str) {
    let text = format!(
        "The mailbox {} of {} answers again; mail that arrived meanwhile is read now.",
        mailbox.address,
        services.display_name(&mailbox.agent)
    );
    notice(services, channel_id, text).await;
}

/// The system bot's notice. It names the agent by display name, never by
/// handle: a mention would start a turn (§4.2).
async fn notice(services: &Services, channel_id: &str, text: String) {
    let post = framework_post(channel_id, text, "notice", None);
    if let Err(error) = services.system_bot.rest.create_post(&post).await {
        warn!(%error, "could not post a mailbox notice");
    }
}
