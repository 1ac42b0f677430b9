//! The unit the units module's tests start from: U-`id` in channel `c1`,
//! from sam to naomi, assigned by post `a{id}` in turn `t`, every other
//! field empty. A test changes what it is about with struct update syntax.

use crate::store::{Unit, UnitState};

pub(crate) fn unit(id: i64) -> Unit {
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
        assignment_post_id: format!("a{id}"),
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
