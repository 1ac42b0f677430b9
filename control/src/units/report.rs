//! `tasks::report` (§3.15): the assignee's claim, review or blocked. A
//! report is a claim and a close a judgement, and one agent never makes
//! both about one unit. A unit in review takes no second report; a closed
//! unit takes none, and the refusal names who closed it, when and how. A
//! report also names any unit post a crash left without its record.

use crate::store::{ClosedBy, NewReport, Unit, UnitState};

use super::find::find;
use super::publish::publish;
use super::template::{self, clean};
use super::when::when;
use super::{Answer, Caller};

pub async fn report(caller: &Caller<'_>, reference: &str, state: UnitState, text: &str) -> Answer {
    let unit = match find(caller, reference).await {
        Ok(unit) => unit,
        Err(refusal) => return Answer::Refused(refusal),
    };
    if let Err(refusal) = may_report(caller, &unit) {
        return Answer::Refused(refusal);
    }
    let orphans = unrecorded(caller).await;
    let label = unit.label();
    let body = clean(text, &caller.services.display_names);
    let message = template::report(
        &label,
        caller.name(&unit.assignee),
        &unit.creator,
        state,
        &body,
    );
    let post_id = match publish(caller, &label, message).await {
        Ok(post_id) => post_id,
        Err(refusal) => return Answer::Refused(refusal),
    };
    let record = NewReport {
        unit_id: unit.id,
        post_id: post_id.clone(),
        state,
        body,
        by_framework: false,
        turn_id: Some(caller.turn_id.to_string()),
        at: chrono::Utc::now().timestamp_millis(),
    };
    if let Err(error) = caller
        .services
        .store
        .call(move |s| s.record_report(&record))
        .await
    {
        return Answer::Failed(format!(
            "The report on {label} is posted (post {post_id}), but the store could not record it ({error}); the unit stays {}. Tell {} in a post.",
            unit.state.as_str(),
            caller.name(&unit.creator)
        ));
    }
    let creator = caller.name(&unit.creator);
    let what = match state {
        UnitState::Blocked => "blocked",
        _ => "for review",
    };
    Answer::Done(format!(
        "{label} is reported {what}: its post is published (post {post_id}) and addresses {creator}, whose turn waits for this one to end, then starts to judge it.{orphans}"
    ))
}

/// The assignee reports, from assigned or blocked (§3.15).
fn may_report(caller: &Caller<'_>, unit: &Unit) -> Result<(), String> {
    let label = unit.label();
    let creator = caller.name(&unit.creator);
    if unit.assignee != caller.agent() {
        return Err(format!(
            "The report did not run: you created {label}, and a report is its assignee's, {}. You judge it with tasks::close.",
            caller.name(&unit.assignee)
        ));
    }
    match unit.state {
        UnitState::Assigned | UnitState::Blocked => Ok(()),
        UnitState::Review => Err(format!(
            "The report did not run: {label} is already reported for review and is with its creator, {creator}; it takes no second report. {creator} either hands it back as a fresh unit with corrected criteria, or closes it as cancelled with the reason. A finding to add goes to {creator} in a post that mentions @{}.",
            unit.creator
        )),
        UnitState::Done | UnitState::Cancelled => Err(closed_refusal(caller, unit)),
    }
}

/// Who closed a unit, when, and with what verdict (§3.15): an assignee told
/// only that its unit moved cannot tell a judgement from a mistake.
fn closed_refusal(caller: &Caller<'_>, unit: &Unit) -> String {
    let now = chrono::Utc::now().timestamp_millis();
    let at = unit
        .closed_at
        .map(|t| when(t, now, caller.services.timezone))
        .unwrap_or_else(|| "an unrecorded time".into());
    let closer = unit.closer.as_deref().unwrap_or(&unit.creator);
    let how = match unit.closed_by {
        Some(ClosedBy::Person) => format!("{closer} (a person) cancelled it"),
        Some(ClosedBy::Continuation) => {
            format!("{} closed it by continuing it", caller.name(closer))
        }
        _ => format!("{} closed it", caller.name(closer)),
    };
    let verdict = unit
        .verdict
        .as_deref()
        .filter(|v| !v.is_empty())
        .map(|v| format!(" with the verdict “{v}”"))
        .unwrap_or_default();
    format!(
        "The report did not run: {} is closed as {}: {how} at {at}{verdict}. A closed unit takes no report; a finding still wanted goes to its creator, {}, in a post that mentions @{}.",
        unit.label(),
        unit.state.as_str(),
        caller.name(&unit.creator),
        unit.creator
    )
}

/// Unit posts a crash left without their record, named once (§3.15).
async fn unrecorded(caller: &Caller<'_>) -> String {
    let (agent, channel) = (caller.agent().to_string(), caller.channel_id.to_string());
    let now = chrono::Utc::now().timestamp_millis();
    let found = caller
        .services
        .store
        .call(move |s| {
            let found = s.unrecorded_unit_posts(&channel, &agent)?;
            for (post_id, _, _) in &found {
                s.note_orphan_named(post_id, now)?;
            }
            Ok(found)
        })
        .await
        .unwrap_or_default();
    if found.is_empty() {
        return String::new();
    }
    let named: Vec<String> = found
        .iter()
        .map(|(post_id, _, label)| match label {
            Some(label) => format!("post {post_id} (announcing {label})"),
            None => format!("post {post_id}"),
        })
        .collect();
    format!(
        " Note: {} announced a change in this channel that was never recorded — the daemon stopped between the post and its record — so it did not happen; an assignment there is no unit, and its creator assigns again.",
        named.join(", ")
    )
}
