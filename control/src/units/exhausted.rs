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

/// The units a turn answering `answered` was working (§3.15 selection).
pub fn working(assigned: Vec<Unit>, answered: &[String]) -> Vec<Unit> {
    let (named, rest): (Vec<Unit>, Vec<Unit>) = assigned
        .into_iter()
        .partition(|u| answered.contains(&u.assignment_post_id));
    if !named.is_empty() {
        return named;
    }
    if rest.len() == 1 { rest } else { Vec::new() }
}

/// Reports blocked each unit the exhausted turn was working.
pub async fn report_blocked(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
) {
    let (agent, channel) = (seat.agent.username.clone(), channel_id.to_string());
    let assigned: Vec<Unit> = match services
        .store
        .call(move |s| s.open_units_of(&agent, &channel))
        .await
    {
        Ok(open) => open
            .into_iter()
            .filter(|u| u.assignee == seat.agent.username && u.state == UnitState::Assigned)
            .collect(),
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
    for unit in working(assigned, answered) {
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
        Unit {
            id,
            channel_id: "c1".into(),
            creator: "sam".into(),
            assignee: "naomi".into(),
            outcome: "o".into(),
            criteria: "c".into(),
            context: String::new(),
            state: UnitState::Assigned,
            assigned_at: 0,
            changed_at: 0,
            assignment_post_id: post.into(),
            assigning_turn_id: "t".into(),
            follows: None,
            followed_by: None,
            linked_from_state: None,
            latest_report_id: None,
            close_post_id: None,
            closed_at: None,
            closed_from_state: None,
            closed_by: None,
            closer: None,
            verdict: None,
        }
    }

    fn ids(units: Vec<Unit>) -> Vec<i64> {
        units.into_iter().map(|u| u.id).collect()
    }

    #[test]
    fn s3_15_out_of_context_reports_the_units_whose_assignment_the_turn_answers() {
        let held = vec![unit(1, "a1"), unit(2, "a2"), unit(3, "a3")];
        assert_eq!(ids(working(held, &["a2".into(), "x".into()])), vec![2]);
    }

    #[test]
    fn s3_15_out_of_context_falls_back_to_the_only_assigned_unit_and_never_guesses() {
        assert_eq!(ids(working(vec![unit(1, "a1")], &["x".into()])), vec![1]);
        let several = vec![unit(1, "a1"), unit(2, "a2")];
        assert!(working(several, &["x".into()]).is_empty());
    }
}
