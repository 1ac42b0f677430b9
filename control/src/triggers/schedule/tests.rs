//! The schedule decision against an injected clock (§4.2).

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

use super::{Recurrence, RecurrenceError};

fn recurrence(expression: &str, timezone: &str) -> Recurrence {
    Recurrence::parse(expression, timezone).expect("the recurrence parses")
}

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .single()
        .expect("a valid UTC time")
}

/// A local time that happens exactly once in `zone`.
fn local(zone: &str, y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    let zone: Tz = zone.parse().expect("a known zone");
    zone.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .single()
        .expect("a local time that happens once")
        .to_utc()
}

/// Every firing from `from` up to `to`, found by stepping `next_after`.
fn firings(r: &Recurrence, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    let mut out = Vec::new();
    let mut at = from;
    while let Some(next) = r.next_after(at) {
        if next > to {
            break;
        }
        out.push(next);
        at = next;
    }
    out
}

/// The firings that fall on local date `y-mo-d` in `zone`.
fn on_local_day(r: &Recurrence, zone: &str, (y, mo, d): (i32, u32, u32)) -> Vec<DateTime<Utc>> {
    let tz: Tz = zone.parse().expect("a known zone");
    let day = NaiveDate::from_ymd_opt(y, mo, d).expect("a date");
    firings(
        r,
        local(zone, y, mo, d, 0, 0) - chrono::TimeDelta::days(1),
        local(zone, y, mo, d, 0, 0) + chrono::TimeDelta::days(2),
    )
    .into_iter()
    .filter(|t| t.with_timezone(&tz).date_naive() == day)
    .collect()
}

#[test]
fn s4_2_a_week_down_fires_once_the_latest_occurrence() {
    let r = recurrence("0 9 * * *", "Europe/Berlin");
    let announced = local("Europe/Berlin", 2026, 3, 2, 9, 0);
    let back = local("Europe/Berlin", 2026, 3, 9, 12, 0);
    let due = r.due(announced, back);
    assert_eq!(due, Some(local("Europe/Berlin", 2026, 3, 9, 9, 0)));
    // Announcing it leaves nothing else of the week due.
    assert_eq!(r.due(local("Europe/Berlin", 2026, 3, 9, 9, 0), back), None);
}

#[test]
fn s4_2_declared_at_14_00_does_not_fire_that_day_s_09_00() {
    let r = recurrence("0 9 * * *", "UTC");
    let declared = utc(2026, 6, 10, 14, 0);
    assert_eq!(r.due(declared, utc(2026, 6, 10, 14, 0)), None);
    assert_eq!(r.due(declared, utc(2026, 6, 10, 23, 59)), None);
    assert_eq!(r.due(declared, utc(2026, 6, 11, 8, 59)), None);
    assert_eq!(
        r.due(declared, utc(2026, 6, 11, 9, 0)),
        Some(utc(2026, 6, 11, 9, 0))
    );
}

#[test]
fn s4_2_announced_then_due_again_fires_the_next_only() {
    let r = recurrence("0 9,17 * * *", "UTC");
    let first = r
        .due(utc(2026, 6, 10, 0, 0), utc(2026, 6, 10, 10, 0))
        .expect("09:00 is due");
    assert_eq!(first, utc(2026, 6, 10, 9, 0));
    assert_eq!(r.due(first, utc(2026, 6, 10, 16, 59)), None);
    assert_eq!(
        r.due(first, utc(2026, 6, 10, 18, 0)),
        Some(utc(2026, 6, 10, 17, 0))
    );
}

#[test]
fn s4_2_a_busy_channel_delays_the_same_occurrence_until_a_later_one_replaces_it() {
    let r = recurrence("0 9 * * *", "UTC");
    let since = utc(2026, 6, 9, 9, 0);
    let due = Some(utc(2026, 6, 10, 9, 0));
    // Asked again and again while the channel stays busy: the same one,
    // neither dropped nor a second added.
    for hour in [9, 12, 18, 23] {
        assert_eq!(r.due(since, utc(2026, 6, 10, hour, 0)), due);
    }
    // Busy past the next occurrence: that one, alone.
    assert_eq!(
        r.due(since, utc(2026, 6, 11, 9, 30)),
        Some(utc(2026, 6, 11, 9, 0))
    );
}

#[test]
fn s4_2_now_at_or_before_since_is_never_due() {
    let r = recurrence("* * * * *", "UTC");
    let at = utc(2026, 6, 10, 9, 0);
    assert_eq!(r.due(at, at), None);
    assert_eq!(r.due(at, utc(2026, 6, 10, 8, 0)), None);
}

#[test]
fn s4_2_next_after_is_strictly_after() {
    let r = recurrence("0 9 * * *", "UTC");
    assert_eq!(
        r.next_after(utc(2026, 6, 10, 8, 59)),
        Some(utc(2026, 6, 10, 9, 0))
    );
    assert_eq!(
        r.next_after(utc(2026, 6, 10, 9, 0)),
        Some(utc(2026, 6, 11, 9, 0))
    );
}

#[test]
fn s4_2_berlin_spring_forward_02_30_fires_once_that_day() {
    // 29 March 2026, the last Sunday of March: 02:00 CET becomes 03:00 CEST.
    let r = recurrence("30 2 * * *", "Europe/Berlin");
    let day = on_local_day(&r, "Europe/Berlin", (2026, 3, 29));
    // 02:30 does not exist; it fires at the first instant after the gap.
    assert_eq!(day, vec![utc(2026, 3, 29, 1, 0)]);
    let announced = local("Europe/Berlin", 2026, 3, 28, 2, 30);
    let evening = local("Europe/Berlin", 2026, 3, 29, 23, 0);
    assert_eq!(r.due(announced, evening), Some(utc(2026, 3, 29, 1, 0)));
    assert_eq!(r.due(utc(2026, 3, 29, 1, 0), evening), None);
}

#[test]
fn s4_2_berlin_last_sunday_of_march_fires_once_in_the_year() {
    let r = recurrence("30 2 * 3 0L", "Europe/Berlin");
    let year = firings(&r, utc(2026, 1, 1, 0, 0), utc(2027, 1, 1, 0, 0));
    assert_eq!(year, vec![utc(2026, 3, 29, 1, 0)]);
}

#[test]
fn s4_2_berlin_fall_back_02_30_fires_once_that_day() {
    // 25 October 2026, the last Sunday of October: 03:00 CEST becomes
    // 02:00 CET, so 02:30 happens twice.
    let r = recurrence("30 2 * * *", "Europe/Berlin");
    let day = on_local_day(&r, "Europe/Berlin", (2026, 10, 25));
    assert_eq!(day, vec![utc(2026, 10, 25, 0, 30)]);
    // In the second pass of the repeated hour, the first pass's 02:30 is
    // the one due, and once announced nothing is.
    let second_pass = utc(2026, 10, 25, 1, 45);
    let announced = local("Europe/Berlin", 2026, 10, 24, 2, 30);
    assert_eq!(
        r.due(announced, second_pass),
        Some(utc(2026, 10, 25, 0, 30))
    );
    assert_eq!(r.due(utc(2026, 10, 25, 0, 30), second_pass), None);
    assert_eq!(
        r.next_after(utc(2026, 10, 25, 0, 30)),
        Some(local("Europe/Berlin", 2026, 10, 26, 2, 30))
    );
}

#[test]
fn s4_2_new_york_spring_forward_and_fall_back_fire_once_each() {
    // 8 March 2026: 02:00 EST becomes 03:00 EDT.
    let spring = recurrence("30 2 * * *", "America/New_York");
    assert_eq!(
        on_local_day(&spring, "America/New_York", (2026, 3, 8)),
        vec![utc(2026, 3, 8, 7, 0)]
    );
    // 1 November 2026: 02:00 EDT becomes 01:00 EST, so 01:30 happens twice.
    let fall = recurrence("30 1 * * *", "America/New_York");
    assert_eq!(
        on_local_day(&fall, "America/New_York", (2026, 11, 1)),
        vec![utc(2026, 11, 1, 5, 30)]
    );
    assert_eq!(
        fall.due(utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6, 45)),
        None
    );
}

#[test]
fn s4_2_listed_hours_neither_skip_nor_double_across_dst() {
    // Two hours listed: croner's zoned search treats this as an interval,
    // which fires the repeated 01:30 twice and skips the lost 02:30.
    let fall = recurrence("30 1,13 * * *", "America/New_York");
    assert_eq!(
        on_local_day(&fall, "America/New_York", (2026, 11, 1)),
        vec![utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 18, 30)]
    );
    let spring = recurrence("30 2,14 * * *", "America/New_York");
    assert_eq!(
        on_local_day(&spring, "America/New_York", (2026, 3, 8)),
        vec![utc(2026, 3, 8, 7, 0), utc(2026, 3, 8, 18, 30)]
    );
}

#[test]
fn s4_2_croner_alone_doubles_and_skips_a_listed_hour() {
    // Why this module reads the wall clock itself: croner's zoned search
    // fires `30 1,13 * * *` at both passes of 01:30 on 1 November 2026.
    // Should croner change, the wall-clock reading here still holds.
    let cron: croner::Cron = "30 1,13 * * *".parse().expect("parses");
    let start = utc(2026, 11, 1, 4, 0).with_timezone(&chrono_tz::America::New_York);
    let passes: Vec<DateTime<Utc>> = cron.iter_after(start).take(2).map(|t| t.to_utc()).collect();
    assert_eq!(
        passes,
        vec![utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6, 30)]
    );
    // And on 8 March 2026 it skips the lost 02:30 of `30 2,14 * * *`.
    let cron: croner::Cron = "30 2,14 * * *".parse().expect("parses");
    let start = utc(2026, 3, 8, 5, 0).with_timezone(&chrono_tz::America::New_York);
    let first = cron.iter_after(start).next().map(|t| t.to_utc());
    assert_eq!(first, Some(utc(2026, 3, 8, 18, 30)));
}

#[test]
fn s4_2_an_interval_fires_each_local_quarter_hour_once_across_dst() {
    let r = recurrence("*/15 * * * *", "Europe/Berlin");
    // Local midnight to 05:00 CEST on spring-forward day: sixteen firings.
    // The lost hour's four quarter hours fire together at 03:00 with 03:00's
    // own, once: no time is skipped and no instant fires twice.
    let spring = firings(&r, utc(2026, 3, 28, 23, 0), utc(2026, 3, 29, 3, 0));
    assert_eq!(spring.len(), 16, "{spring:?}");
    assert!(spring.windows(2).all(|w| w[0] < w[1]), "{spring:?}");
    assert!(spring.contains(&utc(2026, 3, 29, 1, 0)), "{spring:?}");
    // Local midnight to 04:00 CET on fall-back day: five real hours, but
    // sixteen local quarter hours, each firing at its first pass; the
    // repeated hour's second pass is quiet.
    let fall = firings(&r, utc(2026, 10, 24, 22, 0), utc(2026, 10, 25, 3, 0));
    assert_eq!(fall.len(), 16, "{fall:?}");
    assert!(fall.windows(2).all(|w| w[0] < w[1]), "{fall:?}");
    assert!(
        !fall
            .iter()
            .any(|t| *t > utc(2026, 10, 25, 0, 45) && *t < utc(2026, 10, 25, 2, 0)),
        "{fall:?}"
    );
}

#[test]
fn s4_2_last_day_ranges_and_steps_parse_and_fire() {
    let last = recurrence("0 9 L * *", "UTC");
    assert_eq!(
        last.next_after(utc(2026, 2, 1, 0, 0)),
        Some(utc(2026, 2, 28, 9, 0))
    );
    let weekdays = recurrence("0 9-17/4 * * 1-5", "UTC");
    // 12 June 2026 is a Friday; the next fires are 09, 13, 17, then Monday.
    assert_eq!(
        firings(&weekdays, utc(2026, 6, 12, 0, 0), utc(2026, 6, 15, 10, 0)),
        vec![
            utc(2026, 6, 12, 9, 0),
            utc(2026, 6, 12, 13, 0),
            utc(2026, 6, 12, 17, 0),
            utc(2026, 6, 15, 9, 0),
        ]
    );
    let last_friday = recurrence("0 9 * * 5L", "UTC");
    assert_eq!(
        last_friday.next_after(utc(2026, 6, 1, 0, 0)),
        Some(utc(2026, 6, 26, 9, 0))
    );
    let second_monday = recurrence("0 9 * * 1#2", "UTC");
    assert_eq!(
        second_monday.next_after(utc(2026, 6, 1, 0, 0)),
        Some(utc(2026, 6, 8, 9, 0))
    );
    // 15 August 2026 is a Saturday: the nearest weekday is Friday the 14th.
    let nearest_weekday = recurrence("0 9 15W * *", "UTC");
    assert_eq!(
        nearest_weekday.next_after(utc(2026, 8, 1, 0, 0)),
        Some(utc(2026, 8, 14, 9, 0))
    );
    let named = recurrence("*/30 9 * JAN-MAR MON", "UTC");
    assert_eq!(
        named.next_after(utc(2026, 3, 31, 0, 0)),
        Some(utc(2027, 1, 4, 9, 0))
    );
}

#[test]
fn s4_2_day_of_month_and_day_of_week_either_match() {
    // As Vixie cron reads it: every 13th, and every Friday.
    let r = recurrence("0 9 13 * 5", "UTC");
    assert_eq!(
        firings(&r, utc(2026, 6, 1, 0, 0), utc(2026, 6, 14, 0, 0)),
        vec![
            utc(2026, 6, 5, 9, 0),
            utc(2026, 6, 12, 9, 0),
            utc(2026, 6, 13, 9, 0),
        ]
    );
}

#[test]
fn s4_2_a_nickname_is_refused_as_not_five_fields() {
    let error = Recurrence::parse("@daily", "UTC").expect_err("a nickname");
    assert!(
        error.to_string().contains("`@daily` has 1 field;"),
        "{error}"
    );
}

#[test]
fn s4_2_a_six_field_expression_is_refused_in_words_saying_five_fields() {
    let error = Recurrence::parse("0 0 9 * * *", "UTC").expect_err("six fields");
    assert_eq!(
        error,
        RecurrenceError::FieldCount {
            expression: "0 0 9 * * *".into(),
            fields: 6
        }
    );
    let text = error.to_string();
    assert!(text.contains("has 6 fields"), "{text}");
    assert!(text.contains("five-field cron expression"), "{text}");
}

#[test]
fn s4_2_an_out_of_range_field_is_refused_naming_it() {
    let error = Recurrence::parse("0 25 * * *", "UTC").expect_err("hour 25");
    let text = error.to_string();
    assert!(
        text.starts_with("`0 25 * * *` does not parse as cron: "),
        "{text}"
    );
    assert!(!text.contains("Component error"), "{text}");
}

#[test]
fn s4_2_a_date_no_year_has_is_refused() {
    let error = Recurrence::parse("0 9 30 2 *", "UTC").expect_err("30 February");
    assert!(matches!(error, RecurrenceError::Never { .. }), "{error}");
    // A leap day exists, every fourth year.
    recurrence("0 9 29 2 *", "UTC");
}

#[test]
fn s4_2_an_unknown_timezone_is_refused() {
    let error = Recurrence::parse("0 9 * * *", "Mars/Olympus").expect_err("no such zone");
    assert_eq!(
        error.to_string(),
        "`Mars/Olympus` is not an IANA timezone (for example `Europe/Berlin`)"
    );
}
