//! The status post's open-unit note (§3.15): a turn that completes while a
//! unit it owed a move is still open — one it was working still assigned
//! to it, or a report of its own unit it answered still awaiting its
//! verdict — names the unit on its status post, whether or not it replied,
//! since the reminder is sent at most once a side and is not sent where
//! the reply addressed someone. A person reading the channel then sees
//! which work stands still.

use crate::services::{Seat, Services};
use crate::store::Unit;

use super::exhausted::working_now;
use super::reminder::awaiting_verdict;

/// The note's lines for the units the completing turn left open.
pub async fn open_units_note(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
) -> Option<String> {
    let working = working_now(services, seat, channel_id, turn_id, answered)
        .await
        .unwrap_or_default();
    let awaiting = awaiting_verdict(services, seat, channel_id, answered).await;
    note(&working, awaiting.as_ref(), |u| {
        services.display_name(u).to_string()
    })
}

/// "⚑ U-1 from Mira is still assigned to Theo, with no report" — display
/// names, never an @handle: a status post addresses nobody (§4.5).
fn note(
    working: &[Unit],
    awaiting: Option<&Unit>,
    name: impl Fn(&str) -> String,
) -> Option<String> {
    let mut lines: Vec<String> = working
        .iter()
        .map(|u| {
            format!(
                "⚑ {} from {} is still assigned to {}, with no report",
                u.label(),
                name(&u.creator),
                name(&u.assignee)
            )
        })
        .collect();
    lines.extend(awaiting.map(|u| {
        format!(
            "⚑ {}'s report on {} still awaits {}'s verdict",
            name(&u.assignee),
            u.label(),
            name(&u.creator)
        )
    }));
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::UnitState;

    fn unit(id: i64, state: UnitState) -> Unit {
        Unit {
            state,
            ..crate::units::test_unit::unit(id)
        }
    }

    fn name(u: &str) -> String {
        match u {
            "sam" => "Sam Rivers".into(),
            other => other.into(),
        }
    }

    #[test]
    fn s3_15_a_turn_completing_with_a_unit_open_names_it_on_its_status_post() {
        assert_eq!(note(&[], None, name), None);
        let assignee = note(&[unit(1, UnitState::Assigned)], None, name).expect("named");
        assert_eq!(
            assignee,
            "⚑ U-1 from Sam Rivers is still assigned to naomi, with no report"
        );
        let review = unit(2, UnitState::Review);
        let creator = note(&[], Some(&review), name).expect("named");
        assert_eq!(
            creator,
            "⚑ naomi's report on U-2 still awaits Sam Rivers's verdict"
        );
        assert!(!creator.contains('@') && !assignee.contains('@'));
    }
}
