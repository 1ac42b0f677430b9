//! What a load run is made of: its size, its rate and its mix (issue 21's
//! load test).

use std::time::Duration;

/// The context budget that brings the load's windows to their steady size
/// within about three minutes.
pub const STEADY_WINDOW_TOKENS: u32 = 3_000;

#[derive(Debug, Clone)]
pub struct Profile {
    pub agents: usize,
    pub channels: usize,
    pub people: usize,
    pub posts_per_minute: u32,
    pub minutes: u32,
    /// The seed of every random choice: the same seed makes the same posts.
    pub seed: u64,
    /// How long the lanes may take to settle once the traffic stops.
    pub settle_limit: Duration,
    /// `limits.context_budget_tokens`. The issue's load fills each channel
    /// by about twenty posts a minute, so under the default budget (a share
    /// of a 64,000-token ceiling) every window is still growing at the end of
    /// ten minutes and memory grows with them; a small budget brings the
    /// windows to their steady size in the first minutes, so the last five
    /// show whether anything else grows (`docs/load.md`). Unset: the default.
    pub context_budget_tokens: Option<u32>,
}

impl Profile {
    /// The issue's load for `minutes` minutes.
    pub fn issue(minutes: u32) -> Self {
        Self {
            agents: 20,
            channels: 50,
            people: 10,
            posts_per_minute: 1_000,
            minutes,
            seed: 21,
            settle_limit: Duration::from_secs(600),
            context_budget_tokens: Some(STEADY_WINDOW_TOKENS),
        }
    }

    /// The `[limits]` the run sets.
    pub fn limits(&self) -> String {
        let mut lines = format!("hourly_turn_ceiling = {}", self.hourly_ceiling());
        if let Some(tokens) = self.context_budget_tokens {
            lines.push_str(&format!("\ncontext_budget_tokens = {tokens}"));
        }
        lines
    }

    pub fn total_posts(&self) -> usize {
        (self.posts_per_minute as usize) * (self.minutes as usize)
    }

    pub fn duration(&self) -> Duration {
        Duration::from_secs(60 * u64::from(self.minutes))
    }

    /// The hourly turn ceiling the run sets: far above what the traffic can
    /// start, so §7.4's halt never cuts the load short (the report says so).
    pub fn hourly_ceiling(&self) -> u32 {
        self.posts_per_minute.saturating_mul(60).saturating_mul(10)
    }
}
