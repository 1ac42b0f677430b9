//! What a load run found: its figures for the docs, and every broken
//! promise, each a line the test fails on.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use crate::profile::Profile;

/// The median and 99th percentile of some latencies, in milliseconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spread {
    pub count: usize,
    pub p50: i64,
    pub p99: i64,
    pub max: i64,
}

/// Nearest-rank percentiles of `values` (sorted in place).
pub fn percentiles(values: &mut [i64]) -> Spread {
    if values.is_empty() {
        return Spread::default();
    }
    values.sort_unstable();
    let rank = |p: f64| {
        let index = ((p * values.len() as f64).ceil() as usize).saturating_sub(1);
        values[index.min(values.len() - 1)]
    };
    Spread {
        count: values.len(),
        p50: rank(0.50),
        p99: rank(0.99),
        max: values[values.len() - 1],
    }
}

#[derive(Debug)]
pub struct Report {
    pub profile: Profile,
    pub posted: usize,
    pub posting_took: Duration,
    pub settled_after: Duration,
    pub recorded_posts: i64,
    pub turns: usize,
    /// How the turns ended (§7.1), with how many ended each way.
    pub exits: HashMap<String, usize>,
    /// Posts addressing two agents, refused by §4.5.
    pub refused: usize,
    pub to_turn_start: Spread,
    pub to_reply: Spread,
    /// The daemon's resident memory in KiB over the run.
    pub resident: Vec<(Duration, u64)>,
    pub warnings: usize,
    pub violations: Vec<String>,
}

/// The issue's memory criterion looks at the last five minutes of a
/// ten-minute run; a shorter run is judged over its second half.
fn memory_window(profile: &Profile) -> Duration {
    Duration::from_secs(60 * u64::from(profile.minutes)).min(Duration::from_secs(600)) / 2
}

impl Report {
    /// The resident memory's growth over the memory window, as a fraction,
    /// with the two samples it compares.
    pub fn resident_growth(&self) -> Option<(f64, u64, u64)> {
        let (end_at, end) = *self.resident.last()?;
        let from = end_at.checked_sub(memory_window(&self.profile))?;
        let (_, start) = *self.resident.iter().find(|(at, _)| *at >= from)?;
        Some(((end as f64 - start as f64) / start as f64, start, end))
    }

    /// Every broken promise; empty when the run held.
    pub fn failures(&self) -> Vec<String> {
        let mut failures = self.violations.clone();
        // The issue's bound is for the ten-minute run; a shorter one is
        // still warming its caches in its second half, so it only reports.
        if self.profile.minutes >= 10
            && let Some((growth, start, end)) = self.resident_growth()
            && growth >= 0.05
        {
            failures.push(format!(
                "the daemon's resident memory grew {:.1}% over the last five minutes ({start} KiB to {end} KiB)",
                growth * 100.0
            ));
        }
        failures
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.profile;
        writeln!(
            f,
            "load: {} agents, {} channels, {} people, {} posts a minute for {} min (hourly turn ceiling set to {}, above the load)",
            p.agents,
            p.channels,
            p.people,
            p.posts_per_minute,
            p.minutes,
            p.hourly_ceiling()
        )?;
        if let Some(tokens) = p.context_budget_tokens {
            writeln!(f, "context budget set to {tokens} tokens")?;
        }
        writeln!(
            f,
            "posted {} in {:.1} s; lanes settled {:.1} s later; {} posts in the store; {} turns; {} refused by §4.5",
            self.posted,
            self.posting_took.as_secs_f64(),
            self.settled_after.as_secs_f64(),
            self.recorded_posts,
            self.turns,
            self.refused
        )?;
        let mut exits: Vec<_> = self.exits.iter().collect();
        exits.sort();
        writeln!(f, "turn exits: {exits:?}")?;
        for (name, s) in [
            ("post to turn start", self.to_turn_start),
            ("post to reply", self.to_reply),
        ] {
            writeln!(
                f,
                "{name}: p50 {} ms, p99 {} ms, max {} ms over {} posts",
                s.p50, s.p99, s.max, s.count
            )?;
        }
        if let Some((growth, start, end)) = self.resident_growth() {
            writeln!(
                f,
                "daemon resident memory: {:.1} MiB to {:.1} MiB over the last {} s ({:+.1}%); peak {:.1} MiB",
                start as f64 / 1024.0,
                end as f64 / 1024.0,
                memory_window(p).as_secs(),
                growth * 100.0,
                self.resident.iter().map(|(_, k)| *k).max().unwrap_or(0) as f64 / 1024.0
            )?;
        }
        writeln!(f, "daemon warnings logged: {}", self.warnings)?;
        for failure in self.failures() {
            writeln!(f, "FAILED: {failure}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut values: Vec<i64> = (1..=100).rev().collect();
        let s = percentiles(&mut values);
        assert_eq!((s.count, s.p50, s.p99, s.max), (100, 50, 99, 100));
        assert_eq!(percentiles(&mut []).count, 0);
    }

    fn report(minutes: u32, resident: Vec<(u64, u64)>) -> Report {
        Report {
            profile: Profile::issue(minutes),
            posted: 0,
            posting_took: Duration::ZERO,
            settled_after: Duration::ZERO,
            recorded_posts: 0,
            turns: 0,
            exits: HashMap::new(),
            refused: 0,
            to_turn_start: Spread::default(),
            to_reply: Spread::default(),
            resident: resident
                .into_iter()
                .map(|(s, k)| (Duration::from_secs(s), k))
                .collect(),
            warnings: 0,
            violations: Vec::new(),
        }
    }

    #[test]
    fn memory_growth_is_judged_over_the_last_five_minutes_of_ten() {
        let grew = report(10, vec![(0, 10_000), (300, 40_000), (600, 42_500)]);
        assert_eq!(grew.failures().len(), 1, "{:?}", grew.failures());
        let level = report(10, vec![(0, 10_000), (300, 40_000), (600, 41_000)]);
        assert!(level.failures().is_empty());
        let short = report(1, vec![(0, 10_000), (30, 20_000), (60, 40_000)]);
        assert!(short.failures().is_empty(), "a one-minute run only reports");
        assert!(short.resident_growth().is_some_and(|(g, ..)| g > 0.9));
    }
}
