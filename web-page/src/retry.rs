//! Whether a 429 or 503 is asked once more, and after how long (§3.4: when the site names a
//! wait, or after a second for a 429 that names none, provided the wait leaves the retry time
//! to answer within the request's own timeout).

use std::time::Duration;

use chrono::{DateTime, Utc};

/// The wait for a 429 that names none.
pub const DEFAULT_429_WAIT: Duration = Duration::from_secs(1);

/// What a retry must have left after its wait to be worth making: the time a page takes to
/// answer on an ordinary connection, so a retry that could only time out is not made.
pub const RETRY_ANSWER_TIME: Duration = Duration::from_secs(2);

/// A result that was asked twice: what the first answer was, and how long was waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retried {
    pub first_status: u16,
    pub after: Duration,
}

/// The wait before the one retry, or `None` where none is made. `retry_after` is the
/// response's `Retry-After` (seconds or an HTTP date), `remaining` what is left of the
/// request's timeout.
pub fn retry_wait(
    status: u16,
    retry_after: Option<&str>,
    now: DateTime<Utc>,
    remaining: Duration,
) -> Option<Duration> {
    if status != 429 && status != 503 {
        return None;
    }
    let named = retry_after.and_then(|value| parse_retry_after(value, now));
    let wait = match (named, status) {
        (Some(wait), _) => wait,
        (None, 429) => DEFAULT_429_WAIT,
        (None, _) => return None,
    };
    (wait.saturating_add(RETRY_ANSWER_TIME) <= remaining).then_some(wait)
}

fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    // An HTTP date is the IMF-fixdate form of RFC 2822 (RFC 9110 §5.6.7).
    let at = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}
