//! A turn does not end silently on a unit still assigned (§3.15). A final
//! reply that mentions no colleague present and no person, from a turn
//! whose agent still holds in assigned a unit it was working (chosen as
//! the out-of-context report chooses), is sent back once, naming the
//! creator and both ways on; the same reply sent again posts. Not where
//! the turn already handed work to a colleague other than the unit's
//! creator, whose turn carries it on. The runner decides when to ask
//! (once, never as the rejection that would end the turn); this module
//! says whether a unit is open and in what words.

use crate::services::{Seat, Services};
use crate::store::{Unit, UnitState};

use super::exhausted::working;

/// The reminder's words, where the agent holds such a unit.
pub async fn assignee(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
) -> Option<String> {
    let (agent, channel, turn) = (
        seat.agent.username.clone(),
        channel_id.to_string(),
        turn_id.to_string(),
    );
    let (open, handed) = services
        .store
        .call(move |s| {
            Ok((
                s.open_units_of(&agent, &channel)?,
                s.units_assigned_by(&turn)?,
            ))
        })
        .await
        .ok()?;
    let assigned: Vec<Unit> = open
        .into_iter()
        .filter(|u| u.assignee == seat.agent.username && u.state == UnitState::Assigned)
        .collect();
    let unit = working(assigned, answered, &handed).into_iter().next()?;
    let creator = services.display_name(&unit.creator);
    let label = unit.label();
    Some(format!(
        "Your reply was not posted: you still hold {label} from {creator} in assigned, and this reply mentions no one, so it starts nobody and {label} stays assigned. Either report it with tasks::report (review, or blocked), which starts {creator}'s turn; or, for an interim update or a question, write a post that mentions @{}. Sending the same reply again posts it, and the unit stays assigned.",
        unit.creator
    ))
}
