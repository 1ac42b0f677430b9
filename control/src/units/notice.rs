//! The denial notice names each unit the turn was working (§3.15), chosen
//! as the out-of-context report chooses, and its agents without the @: a
//! denial was a person's act, so the unit stays assigned and nobody is
//! woken, and the person reading the notice sees which work stopped.

use crate::services::{Seat, Services};
use crate::store::Unit;

use super::exhausted::working_now;

/// The sentence the denial notice ends with, where the turn was working a
/// unit.
pub async fn denial(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
) -> Option<String> {
    let units = working_now(services, seat, channel_id, turn_id, answered)
        .await
        .ok()?;
    sentence(&units, |u| services.display_name(u).to_string())
}

/// "U-1 from Mira stays assigned." — display names, never an @handle.
fn sentence(units: &[Unit], name: impl Fn(&str) -> String) -> Option<String> {
    if units.is_empty() {
        return None;
    }
    let named: Vec<String> = units
        .iter()
        .map(|u| format!("{} from {}", u.label(), name(&u.creator)))
        .collect();
    let verb = if units.len() == 1 { "stays" } else { "stay" };
    Some(format!(
        "{} {verb} assigned to {}.",
        named.join(", "),
        name(&units[0].assignee)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::test_unit::unit;

    #[test]
    fn s3_15_the_denial_notice_names_the_units_the_turn_was_working_without_the_at() {
        let name = |u: &str| match u {
            "sam" => "Sam Rivers".to_string(),
            other => other.to_string(),
        };
        assert_eq!(sentence(&[], name), None);
        let one = sentence(&[unit(1)], name).expect("named");
        assert_eq!(one, "U-1 from Sam Rivers stays assigned to naomi.");
        assert!(!one.contains('@'));
        let two = sentence(&[unit(1), unit(2)], name).expect("named");
        assert_eq!(
            two,
            "U-1 from Sam Rivers, U-2 from Sam Rivers stay assigned to naomi."
        );
    }
}
