//! Times as units show them (§3.15): the operator's time of day, with the
//! day where that is not today.

use chrono::TimeZone;

use crate::store::Millis;

pub fn when(at: Millis, now: Millis, timezone: chrono_tz::Tz) -> String {
    let (Some(at), Some(now)) = (
        timezone.timestamp_millis_opt(at).single(),
        timezone.timestamp_millis_opt(now).single(),
    ) else {
        return at.to_string();
    };
    if at.date_naive() == now.date_naive() {
        at.format("%H:%M").to_string()
    } else {
        at.format("%a %-d %b %H:%M").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_15_a_time_is_the_time_of_day_with_the_day_where_not_today() {
        let tz = chrono_tz::Europe::Berlin;
        // 2025-11-30 12:00 UTC is 13:00 in Berlin.
        let now = 1_764_504_000_000;
        assert_eq!(when(now - 3_600_000, now, tz), "12:00");
        assert_eq!(when(now - 2 * 86_400_000, now, tz), "Fri 28 Nov 13:00");
    }
}
