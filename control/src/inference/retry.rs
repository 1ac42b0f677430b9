//! Retry the transport, never the intent (§7.2): a bounded number of
//! attempts with backoff, and a rate limit's asked-for wait honoured up to
//! the policy's longest single wait.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    pub base_backoff: Duration,
    pub max_backoff: Duration,
    /// The longest `Retry-After` waited out; a longer one is an outage at once.
    pub longest_wait: Duration,
    pub connect_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            base_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            longest_wait: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt` (1 for the first retry).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.base_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// `Retry-After` as seconds or an HTTP date, relative to `now`.
pub fn retry_after(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = when.with_timezone(&chrono::Utc) - now;
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_ceiling() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.backoff(1), Duration::from_millis(500));
        assert_eq!(policy.backoff(3), Duration::from_secs(2));
        assert_eq!(policy.backoff(10), Duration::from_secs(8));
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
            .expect("time")
            .with_timezone(&chrono::Utc);
        assert_eq!(retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            retry_after("Mon, 30 Nov 2026 12:00:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(retry_after("soon", now), None);
    }
}
