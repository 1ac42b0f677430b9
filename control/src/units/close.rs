//! `tasks::close` (§3.15): the creator's judgement, done or cancelled. A
//! close rests on the report it judges: from review or blocked only once
//! this turn has read the latest report (its window held it, or
//! tasks::read showed it — never a search hit). A unit still assigned
//! closes only while no turn of its assignee begun after the assignment is
//! running here, since that turn may be writing the report the close would
//! pre-empt. A close addresses nobody, and nothing reopens a unit.

use crate::store::{ClosedBy, NewClose, Unit, UnitState};

use super::find::find;
use super::publish::publish;
use super::template::{self, clean};
use super::when::when;
use super::{Answer, Caller, NOTHING_WAKES};

pub async fn close(
    caller: &Caller<'_>,
    reference: &str,
    state: UnitState,
    verdict: &str,
) -> Answer {
    let unit = match find(caller, reference).await {
        Ok(unit) => unit,
        Err(refusal) => return Answer::Refused(refusal),
    };
    if let Err(refusal) = may_close(caller, &unit).await {
        return Answer::Refused(refusal);
    }
    let label = unit.label();
    let verdict = clean(verdict, &caller.services.display_names);
    let message = template::close(
        &label,
        caller.name(&unit.creator),
        caller.name(&unit.assignee),
        state,
        &verdict,
    );
    let post_id = match publish(caller, &label, message).await {
        Ok(post_id) => post_id,
        Err(refusal) => return Answer::Refused(refusal),
    };
    let record = NewClose {
        unit_id: unit.id,
        post_id: post_id.clone(),
        state,
        closed_by: ClosedBy::Creator,
        closer: caller.agent().to_string(),
        verdict,
        at: chrono::Utc::now().timestamp_millis(),
    };
    let (agent, channel) = (caller.agent().to_string(), caller.channel_id.to_string());
    let recorded = caller
        .services
        .store
        .call(move |s| {
            s.record_close(&record)?;
            s.open_units_of(&agent, &channel)
        })
        .await;
    let still_open = match recorded {
        Ok(open) => open,
        Err(error) => {
            return Answer::Failed(format!(
                "The close of {label} is posted (post {post_id}), but the store could not record it ({error}); the unit stays {}. Tell the channel.",
                unit.state.as_str()
            ));
        }
    };
    let mut text = format!(
        "{label} is closed as {}: its post is published (post {post_id}). A close addresses nobody, so no colleague's turn waits on this one.",
        state.as_str()
    );
    // The fact sits where the turn decides whether to hand its work on
    // (§3.15): a close that leaves no open unit here repeats it.
    if still_open.is_empty() {
        text.push_str(&format!(
            " You have no other open unit here. {NOTHING_WAKES}"
        ));
    }
    Answer::Done(text)
}

/// The creator alone closes, once, on the terms of its state (§3.15).
async fn may_close(caller: &Caller<'_>, unit: &Unit) -> Result<(), String> {
    let label = unit.label();
    if unit.creator != caller.agent() {
        return Err(format!(
            "The close did not run: you are {label}'s assignee, and the assignee cannot close. Report it with tasks::report (review or blocked); its creator, {}, judges it.",
            caller.name(&unit.creator)
        ));
    }
    match unit.state {
        UnitState::Done | UnitState::Cancelled => Err(format!(
            "The close did not run: {label} is already closed as {}, and nothing reopens a unit. To take the work further, assign a fresh unit.",
            unit.state.as_str()
        )),
        UnitState::Review | UnitState::Blocked => latest_report_read(caller, unit).await,
        UnitState::Assigned => assignee_not_running(caller, unit).await,
    }
}

/// §3.15: a verdict on a report its judge never saw judges nothing.
pub(super) async fn latest_report_read(caller: &Caller<'_>, unit: &Unit) -> Result<(), String> {
    let label = unit.label();
    let Some(report) = unit.latest_report_id else {
        return Ok(());
    };
    let turn = caller.turn_id.to_string();
    let read = caller
        .services
        .store
        .call(move |s| s.has_read_report(&turn, report))
        .await
        .map_err(|error| format!("The store could not be read ({error}); nothing changed."))?;
    if read {
        return Ok(());
    }
    Err(format!(
        "The call did not run: {label} is in {} and this turn has not read its latest report. Read it first with tasks::read (unit \"{label}\"), then call again; a search hit does not count as read.",
        unit.state.as_str()
    ))
}

/// §3.15: a unit still assigned closes only while no turn of its assignee
/// opened after the assignment is running here.
async fn assignee_not_running(caller: &Caller<'_>, unit: &Unit) -> Result<(), String> {
    let (assignee, channel, boot) = (
        unit.assignee.clone(),
        unit.channel_id.clone(),
        caller.services.boot_id.clone(),
    );
    let running = caller
        .services
        .store
        .call(move |s| s.running_turn(&assignee, &channel, &boot))
        .await
        .map_err(|error| format!("The store could not be read ({error}); nothing changed."))?;
    match running {
        Some((_, started)) if started >= unit.assigned_at => {
            let now = chrono::Utc::now().timestamp_millis();
            Err(format!(
                "The close did not run: {}'s turn here, begun at {} after the assignment of {}, is still running and may be writing the report this close would pre-empt. Let it end; its report will reach you.",
                caller.name(&unit.assignee),
                when(started, now, caller.services.timezone),
                unit.label()
            ))
        }
        _ => Ok(()),
    }
}
