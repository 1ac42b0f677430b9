//! The one retry of a 429 or 503: after the wait the site names, or a second for a 429 that
//! names none, only where the wait leaves the retry time to answer.

use std::time::Duration;

use chrono::{TimeZone, Utc};
use collegium_web_page::{DEFAULT_429_WAIT, RETRY_ANSWER_TIME, retry_wait};

#[test]
fn the_wait_the_site_names_is_taken() {
    let now = Utc::now();
    let budget = Duration::from_secs(30);
    assert_eq!(
        retry_wait(429, Some("2"), now, budget),
        Some(Duration::from_secs(2))
    );
    assert_eq!(
        retry_wait(503, Some(" 3 "), now, budget),
        Some(Duration::from_secs(3))
    );
    let now = Utc
        .with_ymd_and_hms(2026, 12, 2, 8, 0, 0)
        .single()
        .expect("a date");
    assert_eq!(
        retry_wait(503, Some("Wed, 02 Dec 2026 08:00:05 GMT"), now, budget),
        Some(Duration::from_secs(5))
    );
    assert_eq!(
        retry_wait(503, Some("Wed, 02 Dec 2026 07:59:00 GMT"), now, budget),
        Some(Duration::ZERO)
    );
}

#[test]
fn a_429_naming_no_wait_is_retried_after_a_second_and_a_503_is_not() {
    let now = Utc::now();
    let budget = Duration::from_secs(30);
    assert_eq!(retry_wait(429, None, now, budget), Some(DEFAULT_429_WAIT));
    assert_eq!(
        retry_wait(429, Some("soon"), now, budget),
        Some(DEFAULT_429_WAIT)
    );
    assert_eq!(retry_wait(503, None, now, budget), None);
}

#[test]
fn a_wait_that_leaves_no_time_to_answer_is_not_made() {
    let now = Utc::now();
    let budget = Duration::from_secs(10);
    assert_eq!(retry_wait(429, Some("120"), now, budget), None);
    let just = budget - RETRY_ANSWER_TIME;
    assert_eq!(
        retry_wait(429, Some(&just.as_secs().to_string()), now, budget),
        Some(just)
    );
    assert_eq!(
        retry_wait(429, Some(&(just.as_secs() + 1).to_string()), now, budget),
        None
    );
}

#[test]
fn other_statuses_are_not_retried() {
    for status in [200, 404, 500, 502, 504] {
        assert_eq!(
            retry_wait(status, Some("1"), Utc::now(), Duration::from_secs(30)),
            None,
            "{status}"
        );
    }
}
