//! What `collegium audit show` takes from the configuration (`--config`):
//! the operator's timezone, for times and for `--since`/`--until` dates,
//! and the Mattermost site and team, for permalinks. The store knows
//! neither: it keeps post ids, not the site's address.

use std::path::Path;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::config;

/// Where times are read and links point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The operator's timezone; UTC, said in the header, without
    /// `--config`.
    pub timezone: Tz,
    /// Whether the timezone came from the configuration.
    pub configured: bool,
    /// `https://chat.example.com/team`, where a permalink's `/pl/ID` goes;
    /// none without `--config`.
    team_url: Option<String>,
}

impl Default for Site {
    fn default() -> Self {
        Self {
            timezone: chrono_tz::UTC,
            configured: false,
            team_url: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// The configuration's own report, every problem with its key.
    #[error("--config: {0}")]
    Config(String),
}

impl Site {
    /// The configuration at `path`, checked whole as `config check` does:
    /// a review must not read a timezone from a file the daemon would
    /// refuse.
    pub fn from_config(path: &Path) -> Result<Self, SiteError> {
        let loaded =
            config::load(path).map_err(|e| SiteError::Config(e.report().trim_end().to_string()))?;
        let timezone: Tz = loaded
            .config
            .deployment
            .operator_timezone
            .parse()
            .map_err(|e| SiteError::Config(format!("deployment.operator_timezone: {e}")))?;
        let mattermost = &loaded.config.mattermost;
        Ok(Self {
            timezone,
            configured: true,
            team_url: Some(format!(
                "{}/{}",
                mattermost.url.trim_end_matches('/'),
                mattermost.team
            )),
        })
    }

    /// The link to a post: the site's permalink with `--config`, else
    /// Mattermost's site-relative redirect, which any signed-in browser on
    /// the site resolves.
    pub fn permalink(&self, post_id: &str) -> String {
        match &self.team_url {
            Some(team) => format!("{team}/pl/{post_id}"),
            None => format!("/_redirect/pl/{post_id}"),
        }
    }

    /// The sentence saying which timezone times are in.
    pub fn times_are_in(&self) -> String {
        if self.configured {
            format!("Times are in {} (the operator's timezone).", self.timezone)
        } else {
            "Times are in UTC: --config names the operator's timezone; links are site-relative without it.".into()
        }
    }

    /// `at` in the operator's timezone, to the millisecond.
    pub fn local(&self, at: DateTime<Utc>) -> String {
        at.with_timezone(&self.timezone)
            .format("%Y-%m-%d %H:%M:%S%.3f %Z")
            .to_string()
    }
}
