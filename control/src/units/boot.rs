//! The units the boot notice names (§3.15, §7.3): each unit an abandoned
//! turn that had effects was working, chosen as the out-of-context report
//! chooses, and each unit whose report such a turn answered and left
//! awaiting its creator's verdict. A restart resumes nothing, so the unit
//! stays where it stood and nobody is woken; the notice is how a person
//! learns which work stopped. Agents are named without the @.

use crate::store::{Store, StoreError, Unit, UnitState};

use super::exhausted::working;

/// The units one abandoned turn left where they stood.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Left {
    /// Units it was working, still assigned to its agent.
    pub working: Vec<Unit>,
    /// Its agent's own units whose latest report it answered, in review or
    /// blocked.
    pub awaiting: Vec<Unit>,
}

impl Left {
    pub fn is_empty(&self) -> bool {
        self.working.is_empty() && self.awaiting.is_empty()
    }

    pub fn extend(&mut self, other: Left) {
        self.working.extend(other.working);
        self.awaiting.extend(other.awaiting);
    }
}

/// The units the abandoned turn `turn_id` of `agent` in `channel_id` left,
/// given the posts it answered. Read inside the sweep's store call.
pub fn left_by(
    store: &Store,
    agent: &str,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
) -> Result<Left, StoreError> {
    let open = store.open_units_of(agent, channel_id)?;
    let handed = store.units_assigned_by(turn_id)?;
    let (assigned, own): (Vec<Unit>, Vec<Unit>) = open
        .into_iter()
        .filter(|u| {
            (u.assignee == agent && u.state == UnitState::Assigned)
                || (u.creator == agent && matches!(u.state, UnitState::Review | UnitState::Blocked))
        })
        .partition(|u| u.assignee == agent && u.state == UnitState::Assigned);
    let mut awaiting = Vec::new();
    for unit in own {
        let Some(report) = unit.latest_report_id else {
            continue;
        };
        if store
            .unit_report(report)?
            .is_some_and(|r| answered.contains(&r.post_id))
        {
            awaiting.push(unit);
        }
    }
    Ok(Left {
        working: working(assigned, answered, &handed),
        awaiting,
    })
}

/// The boot notice's sentence on the units, or nothing where none was left.
/// `name` gives a display name for a username.
pub fn sentence(left: &Left, name: impl Fn(&str) -> String) -> Option<String> {
    if left.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = left
        .working
        .iter()
        .map(|u| {
            format!(
                "{} from {} stays assigned to {}",
                u.label(),
                name(&u.creator),
                name(&u.assignee)
            )
        })
        .collect();
    parts.extend(left.awaiting.iter().map(|u| {
        format!(
            "{}'s report on {} awaits {}'s verdict",
            name(&u.assignee),
            u.label(),
            name(&u.creator)
        )
    }));
    Some(format!(
        "Work units the abandoned work was on, left where they stood: {}.",
        parts.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewReport, NewUnit};

    fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.db")).expect("open");
        (dir, store)
    }

    fn assign(store: &mut Store, creator: &str, assignee: &str, turn: &str) -> i64 {
        let id = store
            .reserve_unit_number("c1", creator, 100)
            .expect("reserve");
        store
            .record_assignment(&NewUnit {
                id,
                channel_id: "c1".into(),
                creator: creator.into(),
                assignee: assignee.into(),
                outcome: "A summary".into(),
                criteria: "Cites sources".into(),
                context: String::new(),
                assignment_post_id: format!("assign-{id}"),
                assigning_turn_id: turn.into(),
                follows: None,
                at: 100,
            })
            .expect("record");
        id
    }

    fn report(store: &mut Store, unit_id: i64) -> String {
        let post_id = format!("report-{unit_id}");
        store
            .record_report(&NewReport {
                unit_id,
                post_id: post_id.clone(),
                state: UnitState::Review,
                body: "Done".into(),
                by_framework: false,
                turn_id: Some("t-naomi".into()),
                at: 200,
            })
            .expect("report");
        post_id
    }

    fn name(u: &str) -> String {
        match u {
            "sam" => "Sam Rivers".into(),
            "naomi" => "Naomi".into(),
            other => other.into(),
        }
    }

    #[test]
    fn s3_15_the_boot_notice_names_the_unit_an_abandoned_turn_was_working() {
        let (_dir, mut store) = open();
        let first = assign(&mut store, "sam", "naomi", "t-sam");
        assign(&mut store, "sam", "naomi", "t-sam");
        // Two held: only the one whose assignment the turn answered.
        let left =
            left_by(&store, "naomi", "c1", "t-x", &[format!("assign-{first}")]).expect("read");
        assert_eq!(
            left.working.iter().map(|u| u.id).collect::<Vec<_>>(),
            vec![first]
        );
        let text = sentence(&left, name).expect("named");
        assert_eq!(
            text,
            format!(
                "Work units the abandoned work was on, left where they stood: U-{first} from Sam Rivers stays assigned to Naomi."
            )
        );
        assert!(!text.contains('@'));
        // Several held and none answered: none, never a guess.
        let none = left_by(&store, "naomi", "c1", "t-x", &["other".into()]).expect("read");
        assert!(none.is_empty());
        assert_eq!(sentence(&none, name), None);
    }

    #[test]
    fn s3_15_the_boot_notice_names_a_report_the_abandoned_turn_left_awaiting_its_verdict() {
        let (_dir, mut store) = open();
        let unit = assign(&mut store, "sam", "naomi", "t-sam");
        let post = report(&mut store, unit);
        let left = left_by(&store, "sam", "c1", "t-y", &[post]).expect("read");
        let text = sentence(&left, name).expect("named");
        assert!(
            text.contains(&format!(
                "Naomi's report on U-{unit} awaits Sam Rivers's verdict"
            )),
            "{text}"
        );
        // A turn that did not answer the report leaves it unnamed.
        let unread = left_by(&store, "sam", "c1", "t-y", &["other".into()]).expect("read");
        assert!(unread.is_empty());
    }
}
