//! `units {agent} cancel {reference}` (§8.4, §3.15): a close as cancelled
//! on a person's authority, for a unit whose creator will never reach it.
//! As every close, the unit post comes first and the record cites it; the
//! record keeps the person and the state the unit closed from, which the
//! assignee's later report is refused with.

use axum::Json;
use serde_json::{Value, json};

use super::forgetting::agent_in_channel;
use super::notice::posted_notice;
use super::{CommandRequest, ephemeral};
use crate::services::Services;
use crate::store::{ClosedBy, NewClose, UnitState, parse_unit_label, unit_label};
use crate::units::template;

pub async fn cancel(
    services: &Services,
    request: &CommandRequest,
    word: &str,
    reference: &str,
) -> Json<Value> {
    let agent = match agent_in_channel(services, request, word).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    let Some(id) = parse_unit_label(reference.trim()) else {
        return ephemeral(&format!(
            "`{reference}` is not a unit reference: a unit is named U- and its number, such as U-3, as `/collegium units {agent}` lists it."
        ));
    };
    let unit = match services.store.call(move |s| s.unit(id)).await {
        Ok(Some(unit))
            if unit.channel_id == request.channel_id
                && (unit.creator == agent || unit.assignee == agent) =>
        {
            unit
        }
        Ok(_) => {
            return ephemeral(&format!(
                "{} is not a unit of {agent} in this channel; `/collegium units {agent}` lists them.",
                unit_label(id)
            ));
        }
        Err(error) => {
            return ephemeral(&format!(
                "Nothing changed: the store could not be read ({error})."
            ));
        }
    };
    if !matches!(
        unit.state,
        UnitState::Assigned | UnitState::Blocked | UnitState::Review
    ) {
        return ephemeral(&format!(
            "{} is already closed ({}); nothing changed.",
            unit.label(),
            unit.state.as_str()
        ));
    }
    let name = |u: &str| services.display_name(u).to_string();
    let verdict = format!(
        "cancelled at @{}'s command, from {}",
        request.user_name,
        unit.state.as_str()
    );
    let message = template::close(
        &unit.label(),
        &name(&unit.creator),
        &name(&unit.assignee),
        UnitState::Cancelled,
        &verdict,
    );
    // The post first (§3.15): where it cannot be made, nothing changes.
    let voices = [unit.creator.clone(), unit.assignee.clone()];
    let post_id = match posted_notice(services, &request.channel_id, &voices, message).await {
        Ok(id) => id,
        Err(error) => {
            return ephemeral(&format!(
                "Nothing changed: the close of {} could not be posted ({error}).",
                unit.label()
            ));
        }
    };
    let record = NewClose {
        unit_id: unit.id,
        post_id: post_id.clone(),
        state: UnitState::Cancelled,
        closed_by: ClosedBy::Person,
        closer: request.user_name.clone(),
        verdict,
        at: chrono::Utc::now().timestamp_millis(),
    };
    match services.store.call(move |s| s.record_close(&record)).await {
        Ok(()) => Json(json!({})),
        Err(error) => ephemeral(&format!(
            "The close of {} is posted (post {post_id}), but the store could not record it ({error}); the unit stays {}.",
            unit.label(),
            unit.state.as_str()
        )),
    }
}
