//! A turn does not end silently on a unit still assigned (§3.15). A final
//! reply that mentions no colleague present and no person, from a turn
//! whose agent still holds in assigned a unit it was working (chosen as
//! the out-of-context report chooses), is sent back once, naming the
//! creator and both ways on; the same reply sent again posts. Not where
//! the turn already handed work to a colleague other than the unit's
//! creator, whose turn carries it on. Likewise a creator's silent reply,
//! in a turn answering a report of its own unit still awaiting its
//! verdict. Each side is sent back at most once per turn. The runner
//! decides when to ask (never as the rejection that would end the turn);
//! this module says whether a unit is open and in what words.

use crate::services::{Seat, Services};
use crate::store::{Unit, UnitState};

use super::exhausted::working_now;

/// Which side of a unit a reminder speaks to; each is spent once a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Assignee,
    Creator,
}

/// The reminders a turn has spent (§3.15: each side at most once).
#[derive(Debug, Default, Clone, Copy)]
pub struct Spent {
    assignee: bool,
    creator: bool,
}

impl Spent {
    pub fn spend(&mut self, side: Side) {
        match side {
            Side::Assignee => self.assignee = true,
            Side::Creator => self.creator = true,
        }
    }
}

/// The reminder a silent final reply earns, if any, from a side not yet
/// spent this turn: the assignee's first, then the creator's.
pub async fn next(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
    spent: Spent,
) -> Option<(Side, String)> {
    if !spent.assignee
        && let Some(words) = assignee(services, seat, channel_id, turn_id, answered).await
    {
        return Some((Side::Assignee, words));
    }
    if spent.creator {
        return None;
    }
    creator(services, seat, channel_id, answered)
        .await
        .map(|words| (Side::Creator, words))
}

/// The creator side: a report of the agent's own unit, still awaiting its
/// verdict, is among the posts the turn answers (§3.15).
pub async fn creator(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    answered: &[String],
) -> Option<String> {
    let unit = awaiting_verdict(services, seat, channel_id, answered).await?;
    Some(creator_words(&unit, services.display_name(&unit.assignee)))
}

/// The agent's own unit, in review or blocked, whose latest report is among
/// the posts the turn answers: the move the creator owes (§3.15).
pub async fn awaiting_verdict(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    answered: &[String],
) -> Option<Unit> {
    let (agent, channel) = (seat.agent.username.clone(), channel_id.to_string());
    let awaiting = services
        .store
        .call(move |s| {
            let mut found = Vec::new();
            for unit in s.open_units_of(&agent, &channel)? {
                if unit.creator != agent
                    || !matches!(unit.state, UnitState::Review | UnitState::Blocked)
                {
                    continue;
                }
                let Some(report) = unit.latest_report_id else {
                    continue;
                };
                if let Some(report) = s.unit_report(report)? {
                    found.push((unit, report.post_id));
                }
            }
            Ok(found)
        })
        .await
        .ok()?;
    awaiting
        .into_iter()
        .find(|(_, post)| answered.contains(post))
        .map(|(unit, _)| unit)
}

/// The creator's reminder: the unit, where it stands, and the ways on.
fn creator_words(unit: &Unit, assignee: &str) -> String {
    let label = unit.label();
    let state = unit.state.as_str();
    format!(
        "Your reply was not posted: {assignee}'s report on {label} awaits your verdict, and this reply mentions no one, so it starts nobody and {label} stays in {state}. Either judge it with tasks::close (done, or cancelled with the reason); or hand it back as a fresh unit with corrected criteria, with tasks::assign following {label}; or, to ask {assignee} something, write a post that mentions @{}. Sending the same reply again posts it, and {label} stays in {state}.",
        unit.assignee
    )
}

/// The assignee side: the agent holds such a unit still assigned.
pub async fn assignee(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
) -> Option<String> {
    let unit = working_now(services, seat, channel_id, turn_id, answered)
        .await
        .ok()?
        .into_iter()
        .next()?;
    let creator = services.display_name(&unit.creator);
    let label = unit.label();
    Some(format!(
        "Your reply was not posted: you still hold {label} from {creator} in assigned, and this reply mentions no one, so it starts nobody and {label} stays assigned. Either report it with tasks::report (review, or blocked), which starts {creator}'s turn; or, for an interim update or a question, write a post that mentions @{}. Sending the same reply again posts it, and the unit stays assigned.",
        unit.creator
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_15_each_side_of_the_silent_reply_reminder_is_spent_on_its_own() {
        let mut spent = Spent::default();
        spent.spend(Side::Assignee);
        assert!(spent.assignee && !spent.creator);
        spent.spend(Side::Creator);
        assert!(spent.assignee && spent.creator);
    }
}
