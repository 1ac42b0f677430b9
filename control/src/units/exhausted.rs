//! An assignee that runs out of context is reported blocked by the
//! framework (§3.15), through the path tasks::report takes, so the creator
//! is activated once the turn ends. The units are the agent's units here
//! still assigned whose assignment post is among the posts the turn
//! answers; where none of those posts is an assignment, the agent's only
//! assigned unit here; where it holds several and none is among them,
//! none, since the framework does not guess which work a turn was doing.
//! The reason is fixed text, not the model's.

use crate::services::{Seat, Services};
use crate::store::{NewReport, Unit, UnitState};

use super::Caller;
use super::publish::publish;
use super::template::{self, OUT_OF_CONTEXT};

/// The units a turn answering `answered`, having assigned `handed`, was
/// working (§3.15 selection): those whose assignment it answers, else the
/// only one held, else none — less any it handed on, since a colleague
/// other than the creator then carries that work and reports back to it.
pub fn working(assigned: Vec<Unit>, answered: &[String], handed: &[Unit]) -> Vec<Unit> {
    let (named, rest): (Vec<Unit>, Vec<Unit>) = assigned
        .into_iter()
        .partition(|u| answered.contains(&u.assignment_post_id));
    let chosen = if !named.is_empty() {
        named
    } else if rest.len() == 1 {
        rest
    } else {
        Vec::new()
    };
    chosen
        .into_iter()
        .filter(|u| !handed_on(u, handed))
        .collect()
}

/// Whether the turn handed `unit`'s work on: it assigned work to a
/// colleague other than the unit's creator (§3.15).
pub fn handed_on(unit: &Unit, handed: &[Unit]) -> bool {
    handed.iter().any(|h| h.assignee != unit.creator)
}

/// The units the turn is working, read from the store and chosen by
/// `working`: the one selection the out-of-context report, the denial
/// notice and the assignee's reminder share (§3.15).
pub async fn working_now(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
) -> Result<Vec<Unit>, crate::store::StoreError> {
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
        .await?;
    let assigned: Vec<Unit> = open
        .into_iter()
        .filter(|u| u.assignee == seat.agent.username && u.state == UnitState::Assigned)
        .collect();
    Ok(working(assigned, answered, &handed))
}

/// Reports blocked each unit the exhausted turn was working.
pub async fn report_blocked(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
) {
    let units = match working_now(services, seat, channel_id, turn_id, answered).await {
        Ok(units) => units,
        Err(error) => {
            tracing::warn!(%error, turn = %turn_id, "could not read the units of an exhausted turn");
            return;
        }
    };
    let caller = Caller {
        services,
        seat,
        channel_id,
        turn_id,
    };
    for unit in units {
        let label = unit.label();
        let message = template::report(
            &label,
            caller.name(&unit.assignee),
            &unit.creator,
            UnitState::Blocked,
            OUT_OF_CONTEXT,
        );
        let post_id = match publish(&caller, &label, message).await {
            Ok(post_id) => post_id,
            Err(why) => {
                tracing::warn!(turn = %turn_id, unit = %label, %why, "the blocked report was not posted");
                continue;
            }
        };
        let record = NewReport {
            unit_id: unit.id,
            post_id,
            state: UnitState::Blocked,
            body: OUT_OF_CONTEXT.to_string(),
            by_framework: true,
            turn_id: Some(turn_id.to_string()),
            at: chrono::Utc::now().timestamp_millis(),
        };
        if let Err(error) = services.store.call(move |s| s.record_report(&record)).await {
            tracing::warn!(%error, turn = %turn_id, unit = %label, "the blocked report is posted without its record");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(id: i64, post: &str) -> Unit {
        handed(id, post, "naomi")
    }

    fn handed(id: i64, post: &str, assignee: &str) -> Unit {
        Unit {
            assignee: assignee.into(),
            assignment_post_id: post.into(),
            ..crate::units::test_unit::unit(id)
        }
    }

    fn ids(units: Vec<Unit>) -> Vec<i64> {
        units.into_iter().map(|u| u.id).collect()
    }

    #[test]
    fn s3_15_out_of_context_reports_the_units_whose_assignment_the_turn_answers() {
        let held = vec![unit(1, "a1"), unit(2, "a2"), unit(3, "a3")];
        assert_eq!(ids(working(held, &["a2".into(), "x".into()], &[])), vec![2]);
    }

    #[test]
    fn s3_15_out_of_context_falls_back_to_the_only_assigned_unit_and_never_guesses() {
        assert_eq!(
            ids(working(vec![unit(1, "a1")], &["x".into()], &[])),
            vec![1]
        );
        let several = vec![unit(1, "a1"), unit(2, "a2")];
        assert!(working(several, &["x".into()], &[]).is_empty());
    }

    /// Each of the three selections leaves out a unit the turn handed on
    /// to a colleague other than its creator; work handed back to the
    /// creator itself does not hand the unit on.
    #[test]
    fn s3_15_out_of_context_leaves_out_a_unit_handed_on_to_another_colleague() {
        let on = [handed(9, "a9", "amos")];
        let back = [handed(9, "a9", "sam")];
        let held = || vec![unit(1, "a1"), unit(2, "a2")];
        // Named among the answered posts.
        assert!(working(held(), &["a1".into()], &on).is_empty());
        assert_eq!(ids(working(held(), &["a1".into()], &back)), vec![1]);
        // The only unit held.
        assert!(working(vec![unit(1, "a1")], &["x".into()], &on).is_empty());
        assert_eq!(
            ids(working(vec![unit(1, "a1")], &["x".into()], &back)),
            vec![1]
        );
        // Several held, none named: none, handed on or not.
        assert!(working(held(), &["x".into()], &on).is_empty());
        assert!(working(held(), &["x".into()], &back).is_empty());
    }
}
