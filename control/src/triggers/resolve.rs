//! `triggers::resolve` (§4.2): the agent marks a trigger handled. It takes
//! the id the announcement brackets — the framework's — or none, for the
//! trigger whose announcement started the turn; never the sender's
//! reference, which the sender chooses and nothing makes unique. An id that
//! names no trigger outstanding for this agent in this channel is refused
//! with the ones that are, so the refusal points at the right one. The
//! source's own completion runs first — mail marks the message read
//! (§3.13) — and where it fails the trigger stays outstanding and the
//! result says so.

use crate::services::Services;
use crate::store::{Trigger, TriggerSource, TriggerStatus, parse_trigger_label, trigger_label};

/// What the call answers: done, or a refusal the model reads (§7.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Done(String),
    Refused(String),
}

/// Where the call is made.
pub struct Caller<'a> {
    pub agent: &'a str,
    pub channel_id: &'a str,
    pub turn_id: &'a str,
}

pub async fn resolve(services: &Services, caller: &Caller<'_>, named: Option<&str>) -> Resolution {
    let target = match find(services, caller, named).await {
        Ok(target) => target,
        Err(refusal) => return Resolution::Refused(refusal),
    };
    let label = trigger_label(target.id);
    if target.status == TriggerStatus::Resolved {
        return Resolution::Done(format!("{label} was already marked done; nothing changed."));
    }
    if let Err(why) = complete(services, &target).await {
        return Resolution::Refused(format!(
            "{label} stays outstanding: {why}. Nothing was marked done; try again once the mailbox answers."
        ));
    }
    let (id, now) = (target.id, chrono::Utc::now().timestamp_millis());
    match services
        .store
        .call(move |s| s.resolve_trigger(id, now))
        .await
    {
        Ok(_) => Resolution::Done(match target.source {
            TriggerSource::Mail => {
                format!("{label} is marked done, and the message is marked read.")
            }
            _ => format!("{label} is marked done."),
        }),
        Err(error) => Resolution::Refused(format!(
            "{label} stays outstanding: the store could not record it ({error})."
        )),
    }
}

/// The trigger the call names, or the one that started the turn.
async fn find(
    services: &Services,
    caller: &Caller<'_>,
    named: Option<&str>,
) -> Result<Trigger, String> {
    let (agent, channel, turn) = (
        caller.agent.to_string(),
        caller.channel_id.to_string(),
        caller.turn_id.to_string(),
    );
    let named = named.map(str::trim).filter(|n| !n.is_empty());
    let id = match named {
        Some(text) => match parse_trigger_label(text) {
            Some(id) => Some(id),
            None => {
                return Err(format!(
                    "`{text}` is not a trigger id. Give the id the announcement brackets, such as T-12; a sender's own reference is never taken. {}",
                    outstanding_line(services, caller).await
                ));
            }
        },
        None => None,
    };
    let found = services
        .store
        .call(move |s| match id {
            Some(id) => s.trigger(id),
            None => s.trigger_of_turn(&turn),
        })
        .await
        .map_err(|error| format!("The store could not be read ({error})."))?;
    let theirs = |t: &Trigger| {
        t.agent == agent && t.channel_id == channel && t.status != TriggerStatus::Pending
    };
    match (found, named) {
        (Some(trigger), _) if theirs(&trigger) => Ok(trigger),
        (_, Some(text)) => Err(format!(
            "{text} is not a trigger announced to you in this channel. {}",
            outstanding_line(services, caller).await
        )),
        (_, None) => Err(format!(
            "This turn was not started by a trigger's announcement, so name the trigger. {}",
            outstanding_line(services, caller).await
        )),
    }
}

/// The ids announced to the agent and unresolved in this channel.
async fn outstanding_line(services: &Services, caller: &Caller<'_>) -> String {
    let (agent, channel) = (caller.agent.to_string(), caller.channel_id.to_string());
    let outstanding = services
        .store
        .call(move |s| s.outstanding_triggers(&agent, &channel))
        .await
        .unwrap_or_default();
    if outstanding.is_empty() {
        return "No trigger announced to you is outstanding in this channel.".into();
    }
    let listed: Vec<String> = outstanding
        .iter()
        .map(|t| {
            format!(
                "{} ({} from {} — “{}”)",
                trigger_label(t.id),
                t.source.as_str(),
                t.sender,
                t.subject
            )
        })
        .collect();
    format!("Outstanding for you here: {}.", listed.join("; "))
}

/// The source's own completion (§4.2): a mail is marked read.
async fn complete(services: &Services, trigger: &Trigger) -> Result<(), String> {
    if trigger.source != TriggerSource::Mail {
        return Ok(());
    }
    let Some(mail) = services.mail.as_ref() else {
        return Err(
            "marking the message read needs the mail worker, which this daemon is not connected to"
                .into(),
        );
    };
    let detail = &trigger.detail;
    let number = |key: &str| {
        detail[key]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0)
    };
    mail.mark_seen(
        &trigger.agent,
        number("uidvalidity"),
        number("uid"),
        &trigger.reference,
    )
    .await
    .map_err(|error| format!("marking the message read failed ({error})"))
}
