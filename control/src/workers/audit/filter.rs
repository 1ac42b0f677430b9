//! Which lines `collegium audit show` shows: by agent, tool, outcome and
//! time. The flags' values are parsed here, so a bad one is refused by the
//! command line naming its flag before the log is read.

use chrono::{DateTime, Days, FixedOffset, NaiveDate, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use collegium_worker_kit::audit::{Line, Outcome};

/// Every outcome a log line can carry, as `--outcome` takes it and the
/// lines print it.
pub const OUTCOMES: &[(&str, Outcome)] = &[
    ("success", Outcome::Success),
    ("refusal", Outcome::Refusal),
    ("invalid_arguments", Outcome::InvalidArguments),
    ("unresolved", Outcome::Unresolved),
    ("failure", Outcome::Failure),
    ("grant_refused", Outcome::GrantRefused),
    ("abandoned", Outcome::Abandoned),
];

/// The name a line prints for its outcome, the one `--outcome` takes.
pub fn outcome_name(outcome: Outcome) -> &'static str {
    OUTCOMES
        .iter()
        .find(|(_, o)| *o == outcome)
        .map_or("unknown", |(name, _)| name)
}

/// `--outcome`'s value: one of [`OUTCOMES`]; anything else is refused
/// listing them.
pub fn parse_outcome(text: &str) -> Result<Outcome, String> {
    OUTCOMES
        .iter()
        .find(|(name, _)| *name == text)
        .map(|(_, outcome)| *outcome)
        .ok_or_else(|| {
            let names: Vec<&str> = OUTCOMES.iter().map(|(name, _)| *name).collect();
            format!("expected one of {}", names.join(", "))
        })
}

/// `--since` or `--until` as written: an instant, or a whole day read in
/// the operator's timezone (known only once the configuration is read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeArg {
    Instant(DateTime<FixedOffset>),
    Date(NaiveDate),
}

/// RFC 3339 (`2026-12-07T09:30:00+01:00`) or a date (`2026-12-07`).
pub fn parse_time(text: &str) -> Result<TimeArg, String> {
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Ok(TimeArg::Instant(instant));
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map(TimeArg::Date)
        .map_err(|_| {
            "expected an RFC 3339 time (2026-12-07T09:30:00+01:00) or a date (2026-12-07)".into()
        })
}

/// The filters as the command line gave them.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub agent: Option<String>,
    /// `namespace::tool`, or a namespace alone for all of its tools.
    pub tool: Option<String>,
    pub outcome: Option<Outcome>,
    pub since: Option<TimeArg>,
    pub until: Option<TimeArg>,
}

#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    #[error("--since ({since}) is after --until ({until}): no call can match; swap them")]
    Empty { since: String, until: String },
}

/// The filters with their times fixed as instants.
#[derive(Debug, Clone)]
pub struct Window {
    filter: Filter,
    /// Calls at or after.
    since: Option<DateTime<Utc>>,
    /// Calls strictly before: an instant's next millisecond (log times are
    /// in milliseconds), a date's next midnight.
    before: Option<DateTime<Utc>>,
}

/// Midnight opening `date` in `tz`; where a DST change skips that midnight,
/// the first instant of the day that exists.
fn midnight(date: NaiveDate, tz: Tz) -> DateTime<Utc> {
    let naive = date.and_time(NaiveTime::MIN);
    match tz.from_local_datetime(&naive).earliest() {
        Some(local) => local.with_timezone(&Utc),
        // A skipped midnight lies in a gap of at most a few hours; the
        // day begins at its end, which UTC's reading of the hour after
        // reaches (no zone skips more than one hour at midnight today).
        None => tz
            .from_local_datetime(&(naive + chrono::Duration::hours(1)))
            .earliest()
            .map_or_else(|| Utc.from_utc_datetime(&naive), |l| l.with_timezone(&Utc)),
    }
}

impl Filter {
    /// Fixes the times: a date is a whole day in `tz`, `--until`'s date
    /// through the end of that day.
    pub fn window(&self, tz: Tz) -> Result<Window, FilterError> {
        let since = self.since.map(|t| match t {
            TimeArg::Instant(instant) => instant.with_timezone(&Utc),
            TimeArg::Date(date) => midnight(date, tz),
        });
        let before = self.until.map(|t| match t {
            TimeArg::Instant(instant) => {
                instant.with_timezone(&Utc) + chrono::Duration::milliseconds(1)
            }
            TimeArg::Date(date) => {
                midnight(date.checked_add_days(Days::new(1)).unwrap_or(date), tz)
            }
        });
        if let (Some(since), Some(before)) = (since, before)
            && since >= before
        {
            return Err(FilterError::Empty {
                since: since.to_rfc3339(),
                until: before.to_rfc3339(),
            });
        }
        Ok(Window {
            filter: self.clone(),
            since,
            before,
        })
    }

    /// The filters in force, as flags, for the closing count; empty where
    /// none is.
    pub fn describe(&self) -> String {
        let time = |t: &TimeArg| match t {
            TimeArg::Instant(instant) => instant.to_rfc3339(),
            TimeArg::Date(date) => date.to_string(),
        };
        let mut flags = Vec::new();
        if let Some(agent) = &self.agent {
            flags.push(format!("--agent {agent}"));
        }
        if let Some(tool) = &self.tool {
            flags.push(format!("--tool {tool}"));
        }
        if let Some(outcome) = self.outcome {
            flags.push(format!("--outcome {}", outcome_name(outcome)));
        }
        if let Some(since) = &self.since {
            flags.push(format!("--since {}", time(since)));
        }
        if let Some(until) = &self.until {
            flags.push(format!("--until {}", time(until)));
        }
        flags.join(" ")
    }
}

impl Window {
    /// Whether `line` passes every filter. A line whose time does not parse
    /// passes no time filter: it cannot be placed in the window.
    pub fn keeps(&self, line: &Line) -> bool {
        let filter = &self.filter;
        if filter
            .agent
            .as_ref()
            .is_some_and(|a| *a != line.record.agent)
        {
            return false;
        }
        if let Some(tool) = &filter.tool {
            let in_namespace = line
                .record
                .tool
                .strip_prefix(tool.as_str())
                .is_some_and(|rest| rest.starts_with("::"));
            if line.record.tool != *tool && !in_namespace {
                return false;
            }
        }
        if filter.outcome.is_some_and(|o| o != line.record.outcome) {
            return false;
        }
        if self.since.is_none() && self.before.is_none() {
            return true;
        }
        let Ok(at) = DateTime::parse_from_rfc3339(&line.time) else {
            return false;
        };
        let at = at.with_timezone(&Utc);
        self.since.is_none_or(|since| at >= since) && self.before.is_none_or(|before| at < before)
    }
}

#[cfg(test)]
mod tests {
    use collegium_worker_kit::audit::Record;

    use super::*;

    fn line(agent: &str, tool: &str, outcome: Outcome, time: &str) -> Line {
        Line {
            seq: 1,
            time: time.into(),
            worker: "mail".into(),
            record: Record {
                agent: agent.into(),
                turn: "t".into(),
                call: "t/c".into(),
                tool: tool.into(),
                arguments_sha256: String::new(),
                decision: String::new(),
                outcome,
                detail: String::new(),
                duration_ms: 1,
            },
            prev: String::new(),
        }
    }

    fn keeps(filter: Filter, line: &Line) -> bool {
        filter
            .window(chrono_tz::Europe::Berlin)
            .expect("window")
            .keeps(line)
    }

    const NOON: &str = "2026-12-07T12:00:00.000Z";

    #[test]
    fn i21_7_agent_filter_keeps_only_that_agents_calls() {
        let theo = line("theo", "mail::send", Outcome::Success, NOON);
        let filter = Filter {
            agent: Some("theo".into()),
            ..Filter::default()
        };
        assert!(keeps(filter.clone(), &theo));
        assert!(!keeps(
            filter,
            &line("mira", "mail::send", Outcome::Success, NOON)
        ));
    }

    #[test]
    fn i21_7_tool_filter_takes_a_tool_or_its_whole_namespace() {
        let send = line("theo", "mail::send", Outcome::Success, NOON);
        let read = line("theo", "mail::read", Outcome::Success, NOON);
        let other = line("theo", "mailbox::send", Outcome::Success, NOON);
        let tool = |t: &str| Filter {
            tool: Some(t.into()),
            ..Filter::default()
        };
        assert!(keeps(tool("mail::send"), &send));
        assert!(!keeps(tool("mail::send"), &read));
        assert!(keeps(tool("mail"), &read));
        assert!(
            !keeps(tool("mail"), &other),
            "a namespace is matched whole, never as a prefix of another"
        );
    }

    #[test]
    fn i21_7_outcome_filter_and_its_refusal_list_the_outcomes() {
        let refused = line("theo", "mail::send", Outcome::GrantRefused, NOON);
        let filter = Filter {
            outcome: Some(parse_outcome("grant_refused").expect("outcome")),
            ..Filter::default()
        };
        assert!(keeps(filter.clone(), &refused));
        assert!(!keeps(
            filter,
            &line("theo", "mail::send", Outcome::Success, NOON)
        ));
        let refusal = parse_outcome("ok").expect_err("refused");
        assert!(
            refusal.contains("success, refusal, invalid_arguments"),
            "{refusal}"
        );
        for (name, outcome) in OUTCOMES {
            assert_eq!(outcome_name(*outcome), *name);
        }
    }

    #[test]
    fn i21_7_times_take_rfc3339_or_a_day_in_the_operators_timezone() {
        // 23:30 UTC on the 6th is already the 7th in Berlin (UTC+1).
        let late = line(
            "theo",
            "mail::send",
            Outcome::Success,
            "2026-12-06T23:30:00.000Z",
        );
        let day = Filter {
            since: Some(parse_time("2026-12-07").expect("date")),
            until: Some(parse_time("2026-12-07").expect("date")),
            ..Filter::default()
        };
        assert!(keeps(day.clone(), &late));
        assert!(keeps(
            day.clone(),
            &line("theo", "x::y", Outcome::Success, "2026-12-07T22:59:59.999Z")
        ));
        assert!(!keeps(
            day,
            &line("theo", "x::y", Outcome::Success, "2026-12-07T23:00:00.000Z")
        ));

        let until = Filter {
            until: Some(parse_time("2026-12-07T13:00:00+01:00").expect("instant")),
            ..Filter::default()
        };
        assert!(
            keeps(until.clone(), &line("theo", "x::y", Outcome::Success, NOON)),
            "inclusive"
        );
        assert!(!keeps(
            until,
            &line("theo", "x::y", Outcome::Success, "2026-12-07T12:00:00.001Z")
        ));
        assert!(parse_time("yesterday").is_err());
        assert!(parse_time("2026-13-01").is_err());
    }

    #[test]
    fn i21_7_a_window_that_can_hold_nothing_is_refused() {
        let filter = Filter {
            since: Some(parse_time("2026-12-08").expect("date")),
            until: Some(parse_time("2026-12-07").expect("date")),
            ..Filter::default()
        };
        let refusal = filter.window(chrono_tz::UTC).expect_err("empty");
        assert!(refusal.to_string().contains("swap them"), "{refusal}");
    }
}
