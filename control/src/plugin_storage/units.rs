//! Work units, read only, for a plugin (§3.14, issue 22 item 5): a lookup
//! by reference among the units the acting agent created or was assigned
//! in the turn's channel — another pair's is simply absent, as it is to
//! `tasks::read` (units::find's rule). The agent and channel are the
//! daemon's record of a call of this plugin still in flight, never fields
//! of the request, so a plugin reads units only on behalf of a call it is
//! serving. Plugins never write units: every change to one is a post
//! (§3.15).

use collegium_proto::storage::v1::{UnitRequest, UnitView};
use tonic::{Code, Status};

use crate::store::{Store, StoreError, Unit, parse_unit_label, unit_label};
use crate::units::find::is_theirs;

#[derive(Debug, thiserror::Error)]
pub enum UnitLookupError {
    #[error(
        "call `{call_id}` of turn `{turn_id}` is not a call of the plugin `{namespace}` in flight; a unit is read only while a call of yours that names its turn runs, with the turn and call ids the call carried"
    )]
    NotInFlight {
        namespace: String,
        turn_id: String,
        call_id: String,
    },
    #[error(
        "`{reference}` is not a unit reference: a unit is named U- and its number, such as U-3"
    )]
    NotAReference { reference: String },
    #[error(
        "{label} is not a unit the acting agent created or was assigned in this turn's channel; read only those"
    )]
    Absent { label: String },
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
}

impl From<UnitLookupError> for Status {
    fn from(error: UnitLookupError) -> Self {
        let code = match &error {
            UnitLookupError::NotInFlight { .. } => Code::PermissionDenied,
            UnitLookupError::NotAReference { .. } => Code::InvalidArgument,
            UnitLookupError::Absent { .. } => Code::NotFound,
            UnitLookupError::Store(_) => Code::Unavailable,
        };
        Status::new(code, error.to_string())
    }
}

/// The unit `request` names, as the call's agent may read it from the
/// call's turn's channel. Runs on the store thread.
pub fn look_up(
    store: &Store,
    namespace: &str,
    request: &UnitRequest,
) -> Result<UnitView, UnitLookupError> {
    let not_in_flight = || UnitLookupError::NotInFlight {
        namespace: namespace.to_owned(),
        turn_id: request.turn_id.clone(),
        call_id: request.call_id.clone(),
    };
    let call = store
        .worker_call(&request.call_id)?
        .filter(|c| {
            c.ended_at.is_none() && c.call.turn_id == request.turn_id && c.call.worker == namespace
        })
        .ok_or_else(not_in_flight)?;
    let turn = store
        .turn(&call.call.turn_id)?
        .filter(|t| t.ended_at.is_none() && t.agent == call.call.agent)
        .ok_or_else(not_in_flight)?;
    let id =
        parse_unit_label(&request.reference).ok_or_else(|| UnitLookupError::NotAReference {
            reference: request.reference.chars().take(40).collect(),
        })?;
    store
        .unit(id)?
        .filter(|unit| is_theirs(unit, &turn.agent, &turn.channel_id))
        .map(|unit| view(&unit))
        .ok_or_else(|| UnitLookupError::Absent {
            label: unit_label(id),
        })
}

/// The unit as a plugin reads it: parties, outcome, criteria, context,
/// state, times, the links either way and, once closed, from what and by
/// whom (§3.14).
pub fn view(unit: &Unit) -> UnitView {
    UnitView {
        reference: unit.label(),
        creator: unit.creator.clone(),
        assignee: unit.assignee.clone(),
        outcome: unit.outcome.clone(),
        criteria: unit.criteria.clone(),
        context: unit.context.clone(),
        state: unit.state.as_str().to_owned(),
        assigned_at_unix_ms: unit.assigned_at,
        changed_at_unix_ms: unit.changed_at,
        follows: unit.follows.map(unit_label),
        followed_by: unit.followed_by.map(unit_label),
        closed_at_unix_ms: unit.closed_at,
        closed_from_state: unit.closed_from_state.map(|s| s.as_str().to_owned()),
        closed_by: unit.closed_by.map(|c| c.as_str().to_owned()),
        closer: unit.closer.clone(),
    }
}
