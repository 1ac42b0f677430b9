//! The agent's effective `[settings.shell]` (§3.4), as each call carries
//! them: how long a command may run, how much of each stream the result
//! shows, and what a command may take (§6.1). The configuration check refuses values the worker could not honour
//! (a deadline past the daemon's, a prefix past the capture), so nothing here
//! is cut short in silence.

use std::time::Duration;

use collegium_control::tools::shell_bounds::ShellBounds;
use serde::Deserialize;

use crate::run::{CAPTURED, SHOWN};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellSettings {
    /// The agent's own deadline for a command, where it set one.
    pub deadline: Option<Duration>,
    /// How many bytes of each stream the result shows.
    pub shown: usize,
    /// Processes, memory, file size and home (§6.1).
    pub bounds: ShellBounds,
}

impl Default for ShellSettings {
    fn default() -> Self {
        Self {
            deadline: None,
            shown: SHOWN,
            bounds: ShellBounds::default(),
        }
    }
}

#[derive(Deserialize)]
struct Wire {
    deadline_secs: Option<u64>,
    output_prefix_bytes: Option<usize>,
}

impl ShellSettings {
    /// Reads the settings a call carries; the daemon validated them against
    /// the toolset's schema, so a call whose settings do not parse gets the
    /// defaults rather than no answer.
    pub fn parse(json: &str) -> Self {
        let Ok(wire) = serde_json::from_str::<Wire>(json) else {
            return Self::default();
        };
        let value = serde_json::from_str::<serde_json::Value>(json).ok();
        Self {
            deadline: wire.deadline_secs.map(Duration::from_secs),
            shown: wire.output_prefix_bytes.unwrap_or(SHOWN).min(CAPTURED),
            bounds: ShellBounds::of(value.as_ref()),
        }
    }

    /// The command's deadline: the agent's own where it is sooner than what
    /// the daemon's deadline leaves.
    pub fn deadline(&self, daemon_leaves: Duration) -> Duration {
        match self.deadline {
            Some(own) => own.min(daemon_leaves),
            None => daemon_leaves,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_4_the_agents_deadline_and_prefix_are_read_from_the_call() {
        let settings = ShellSettings::parse(
            r#"{"deadline_secs": 3, "output_prefix_bytes": 100, "probe_commands": ["git"]}"#,
        );
        assert_eq!(settings.deadline, Some(Duration::from_secs(3)));
        assert_eq!(settings.shown, 100);
        assert_eq!(
            settings.deadline(Duration::from_secs(60)),
            Duration::from_secs(3)
        );
        assert_eq!(
            settings.deadline(Duration::from_secs(2)),
            Duration::from_secs(2)
        );
    }

    #[test]
    fn s6_1_the_agents_bounds_are_read_from_the_call() {
        let settings = ShellSettings::parse(
            r#"{"max_processes": 32, "memory_mib": 64, "max_file_mib": 5, "home_cap_mib": 7, "deadline_secs": 3}"#,
        );
        assert_eq!(
            settings.bounds,
            ShellBounds {
                max_processes: 32,
                memory_mib: 64,
                max_file_mib: 5,
                home_cap_mib: 7
            }
        );
        assert_eq!(
            ShellSettings::parse(r#"{"memory_mib": 64}"#)
                .bounds
                .max_processes,
            collegium_control::tools::shell_bounds::MAX_PROCESSES.default
        );
    }

    #[test]
    fn s3_4_without_settings_the_defaults_hold() {
        assert_eq!(ShellSettings::parse("{}"), ShellSettings::default());
        assert_eq!(ShellSettings::parse(""), ShellSettings::default());
        assert_eq!(
            ShellSettings::default().deadline(Duration::from_secs(9)),
            Duration::from_secs(9)
        );
    }
}
