//! The work unit a turn serves as assignee, which each plugin call carries
//! (§3.14): the one whose assignment post started the turn and that was
//! still assigned to the turn's agent when it began, fixed for the turn so
//! a report mid-turn does not unname it. Any other turn names none, even
//! where its agent holds a single assigned unit in the channel: rows
//! stamped with the wrong unit mislead silently.

use crate::store::{Store, StoreError};

/// The reference (`U-12`) of the unit `agent` serves in `channel_id` in a
/// turn started by `started_by` (the posts it answers), read as the turn
/// begins; none where no such post assigned it an open unit.
pub fn of(
    store: &Store,
    agent: &str,
    channel_id: &str,
    started_by: &[String],
) -> Result<Option<String>, StoreError> {
    let units = store.open_units_of(agent, channel_id)?;
    Ok(units
        .into_iter()
        .find(|unit| unit.assignee == agent && started_by.contains(&unit.assignment_post_id))
        .map(|unit| unit.label()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewUnit;

    fn assign(store: &mut Store, creator: &str, assignee: &str) -> i64 {
        let id = store
            .reserve_unit_number("c1", creator, 10)
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
                assignment_post_id: format!("post-{id}"),
                assigning_turn_id: "t1".into(),
                follows: None,
                at: 10,
            })
            .expect("record");
        id
    }

    #[test]
    fn s3_14_a_turn_names_the_unit_whose_assignment_post_started_it_and_no_other() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("s.db")).expect("open");
        let first = assign(&mut store, "sam", "mira");
        let second = assign(&mut store, "sam", "mira");
        let started = vec![format!("post-{second}")];
        assert_eq!(
            of(&store, "mira", "c1", &started).expect("read"),
            Some(crate::store::unit_label(second))
        );
        // A turn a person started names none, though mira holds two units.
        assert_eq!(
            of(&store, "mira", "c1", &["a-person's-post".into()]).expect("read"),
            None
        );
        // The creator's turn does not serve the unit as assignee.
        assert_eq!(
            of(&store, "sam", "c1", &[format!("post-{first}")]).expect("read"),
            None
        );
    }
}
