//! What one shell command may take (§6.1; issue 16 item 3), read from the
//! agent's `[agents.settings.shell]`: the one place its keys and defaults
//! live. The toolset's schema (`framework`), the preamble (`context::prompt`)
//! and the shell worker all read them from here, so the bound an agent is
//! told of is the bound its commands run under.

use serde_json::{Value, json};

/// One bound: its settings key, its default, and what it bounds.
pub struct Key {
    pub name: &'static str,
    pub default: u64,
    /// The least the schema accepts.
    pub minimum: u64,
    pub description: &'static str,
}

/// Processes and threads of the agent's commands at once.
pub const MAX_PROCESSES: Key = Key {
    name: "max_processes",
    default: 256,
    // The launcher outside the command's namespace, the namespace's first
    // process and the command's bash are three before the command forks.
    minimum: 8,
    description: "How many processes and threads a command may run at once, at least 8 (256 when not given).",
};
/// Memory, in MiB.
pub const MEMORY_MIB: Key = Key {
    name: "memory_mib",
    minimum: 1,
    default: 1024,
    description: "How much memory a command may use, in MiB (1024 when not given); its private TMPDIR is no larger.",
};
/// The largest file a command may write, in MiB.
pub const MAX_FILE_MIB: Key = Key {
    name: "max_file_mib",
    minimum: 1,
    default: 1024,
    description: "The largest file a command may write, in MiB (1024 when not given).",
};
/// The agent's home, in MiB of disk.
pub const HOME_CAP_MIB: Key = Key {
    name: "home_cap_mib",
    minimum: 1,
    default: 2048,
    description: "How much disk the agent's home may hold, in MiB (2048 when not given); over it, commands may only shrink files until enough is removed.",
};

/// Every bound, in the order the preamble and the schema list them.
pub const KEYS: [&Key; 4] = [&MAX_PROCESSES, &MEMORY_MIB, &MAX_FILE_MIB, &HOME_CAP_MIB];

/// One MiB, in bytes.
pub const MIB: u64 = 1024 * 1024;

/// An agent's effective bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellBounds {
    pub max_processes: u64,
    pub memory_mib: u64,
    pub max_file_mib: u64,
    pub home_cap_mib: u64,
}

impl Default for ShellBounds {
    fn default() -> Self {
        Self {
            max_processes: MAX_PROCESSES.default,
            memory_mib: MEMORY_MIB.default,
            max_file_mib: MAX_FILE_MIB.default,
            home_cap_mib: HOME_CAP_MIB.default,
        }
    }
}

impl ShellBounds {
    /// The bounds an agent's effective shell settings give: each key given
    /// as a positive integer, else its default. The schema refuses anything
    /// else before a call is made, so nothing is guessed here.
    pub fn of(settings: Option<&Value>) -> Self {
        let read = |key: &Key| {
            settings
                .and_then(|s| s.get(key.name))
                .and_then(Value::as_u64)
                .filter(|n| *n > 0)
                .unwrap_or(key.default)
        };
        Self {
            max_processes: read(&MAX_PROCESSES),
            memory_mib: read(&MEMORY_MIB),
            max_file_mib: read(&MAX_FILE_MIB),
            home_cap_mib: read(&HOME_CAP_MIB),
        }
    }

    pub fn memory_bytes(&self) -> u64 {
        self.memory_mib.saturating_mul(MIB)
    }

    pub fn file_bytes(&self) -> u64 {
        self.max_file_mib.saturating_mul(MIB)
    }

    pub fn home_cap_bytes(&self) -> u64 {
        self.home_cap_mib.saturating_mul(MIB)
    }
}

/// The schema of each bound's key: a positive integer (at least what a
/// command needs to start), described with its default.
pub fn schema_properties() -> impl Iterator<Item = (&'static str, Value)> {
    KEYS.into_iter().map(|key| {
        (
            key.name,
            json!({"type": "integer", "minimum": key.minimum, "description": key.description}),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_1_unset_bounds_take_their_defaults_and_set_ones_their_value() {
        assert_eq!(ShellBounds::of(None), ShellBounds::default());
        let bounds = ShellBounds::of(Some(&json!({"max_processes": 64, "home_cap_mib": 10})));
        assert_eq!(bounds.max_processes, 64);
        assert_eq!(bounds.home_cap_bytes(), 10 * MIB);
        assert_eq!(bounds.memory_mib, MEMORY_MIB.default);
        assert_eq!(
            ShellBounds::of(Some(&json!({"memory_mib": u64::MAX}))).memory_bytes(),
            u64::MAX,
            "a huge bound saturates rather than wrapping"
        );
    }
}
