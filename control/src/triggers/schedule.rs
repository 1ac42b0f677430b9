//! When a declared schedule comes due (§4.2), decided from an injected clock.
//!
//! The recurrence is read on the wall clock of its timezone: croner matches
//! the five cron fields against local dates and times, and this module turns
//! each matching local time into the one instant it fires at. Doing that here
//! rather than in croner's zoned search is what keeps a daylight-saving change
//! from skipping or doubling a firing, whatever the expression (§4.2 fires each
//! occurrence once; the spec is silent on DST itself): croner moves a time lost to
//! spring-forward past the gap, and fires a repeated time once, only for an
//! expression with a single fixed hour and minute; a listed hour
//! (`30 1,13 * * *`) it fires twice on fall-back and not at all on
//! spring-forward.

use chrono::{DateTime, LocalResult, NaiveDateTime, Offset, TimeDelta, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::errors::CronError;
use croner::parser::{CronParser, Seconds, Year};

#[cfg(test)]
mod tests;

/// How many matching local times a search may step over before it gives up:
/// those lost to one gap or repeated by one fold. The longest either has
/// lasted is a day (Samoa skipped 30 December 2011), so three days of
/// minutes is never reached by a real timezone.
const WALL_CLOCK_SLACK: usize = 3 * 24 * 60;

/// A schedule's recurrence: a five-field cron expression read in an IANA
/// timezone.
#[derive(Debug, Clone)]
pub struct Recurrence {
    cron: Cron,
    zone: Tz,
}

/// Why a recurrence or its timezone was refused, in an operator's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecurrenceError {
    #[error(
        "`{expression}` has {fields} {noun}; a recurrence is a five-field cron expression (minute hour day-of-month month day-of-week), with no seconds or year field",
        noun = if *fields == 1 { "field" } else { "fields" }
    )]
    FieldCount { expression: String, fields: usize },
    #[error("`{expression}` does not parse as cron: {reason}")]
    Expression { expression: String, reason: String },
    #[error(
        "`{expression}` matches no date in any year, so it would never fire (for example the 30th of February)"
    )]
    Never { expression: String },
    #[error("`{timezone}` is not an IANA timezone (for example `Europe/Berlin`)")]
    Timezone { timezone: String },
}

impl Recurrence {
    /// Reads `expression` (five cron fields: minute, hour, day of month,
    /// month, day of week) in the IANA timezone `timezone`. The timezone is
    /// checked first, so a refusal of the timezone says nothing about the
    /// expression.
    pub fn parse(expression: &str, timezone: &str) -> Result<Self, RecurrenceError> {
        let zone = timezone
            .parse::<Tz>()
            .map_err(|_| RecurrenceError::Timezone {
                timezone: timezone.to_string(),
            })?;
        let fields = expression.split_whitespace().count();
        if fields != 5 {
            return Err(RecurrenceError::FieldCount {
                expression: expression.to_string(),
                fields,
            });
        }
        let cron = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build()
            .parse(expression)
            .map_err(|error| RecurrenceError::Expression {
                expression: expression.to_string(),
                reason: reason(&error),
            })?;
        // croner gives up at its year limit (5000); a date no year has
        // (`0 9 30 2 *`) exhausts that search and would never fire.
        let epoch = NaiveDateTime::default();
        if cron.find_next_occurrence(&epoch, false).is_err() {
            return Err(RecurrenceError::Never {
                expression: expression.to_string(),
            });
        }
        Ok(Self { cron, zone })
    }

    /// The occurrence due now: the latest in (`since`, `now`], or none.
    /// `since` is the later of when the schedule was first seen and the last
    /// occurrence announced, so a schedule declared this afternoon does not
    /// announce this morning, a week down announces once (the latest), and
    /// asking again while a busy channel delays the announcement returns the
    /// same one until a later one replaces it (§4.2).
    pub fn due(&self, since: DateTime<Utc>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if now <= since {
            return None;
        }
        let mut wall = self.latest_wall_clock(now);
        let mut inclusive = true;
        for _ in 0..WALL_CLOCK_SLACK {
            let found = self.cron.find_previous_occurrence(&wall, inclusive).ok()?;
            if let Some(fires) = self.fires_at(found)
                && fires <= now
            {
                return (fires > since).then_some(fires);
            }
            wall = found;
            inclusive = false;
        }
        None
    }

    /// The first occurrence after `at`, for the scheduler's sleep.
    pub fn next_after(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        // Every local time up to `at`'s own fires no later than `at`, so the
        // search can start there.
        let mut wall = at.with_timezone(&self.zone).naive_local();
        for _ in 0..WALL_CLOCK_SLACK {
            let found = self.cron.find_next_occurrence(&wall, false).ok()?;
            if let Some(fires) = self.fires_at(found)
                && fires > at
            {
                return Some(fires);
            }
            wall = found;
        }
        None
    }

    /// The instant a matching local time fires at, so that no occurrence is
    /// skipped or doubled by a daylight-saving change (§4.2). A local time
    /// that happens twice fires at its first pass; one that never happens fires at the first instant after the gap
    /// that swallowed it, as cron itself runs such a job.
    fn fires_at(&self, wall: NaiveDateTime) -> Option<DateTime<Utc>> {
        match self.zone.from_local_datetime(&wall) {
            LocalResult::Single(at) | LocalResult::Ambiguous(at, _) => Some(at.to_utc()),
            LocalResult::None => {
                let mut probe = wall;
                for _ in 0..WALL_CLOCK_SLACK {
                    probe += TimeDelta::minutes(1);
                    if let Some(at) = self.zone.from_local_datetime(&probe).earliest() {
                        return Some(at.to_utc());
                    }
                }
                None
            }
        }
    }

    /// The latest local time whose firing is not after `now`. It is `now`'s
    /// own local time, except in the second pass of a repeated hour: there
    /// every local time of that hour already fired at its first pass, up to
    /// the hour's end.
    fn latest_wall_clock(&self, now: DateTime<Utc>) -> NaiveDateTime {
        let local = now.with_timezone(&self.zone);
        let wall = local.naive_local();
        match self.zone.from_local_datetime(&wall) {
            LocalResult::Ambiguous(first, second) if second == local => {
                let repeated = first.offset().fix().local_minus_utc()
                    - second.offset().fix().local_minus_utc();
                wall + TimeDelta::seconds(i64::from(repeated))
            }
            _ => wall,
        }
    }
}

/// croner's refusal, without its type names (`Component error: …`).
fn reason(error: &CronError) -> String {
    match error {
        CronError::EmptyPattern => "it is empty".to_string(),
        CronError::InvalidPattern(detail)
        | CronError::IllegalCharacters(detail)
        | CronError::ComponentError(detail) => detail.trim_end_matches('.').to_string(),
        other => other.to_string(),
    }
}
