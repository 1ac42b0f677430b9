//! The command surface (§8.4): one slash command, `/collegium`, whose
//! subcommands are defined here and nowhere else. The provisioner registers
//! the command with the hint built from these definitions; the command route
//! (with the control work) dispatches on them.

pub mod approvals;
pub mod targets;

/// The slash command's trigger.
pub const TRIGGER: &str = "collegium";

/// The path of the daemon's command route, under the callback URL.
pub const ROUTE: &str = "/mattermost/command";

/// The command's one-line description in Mattermost's autocomplete.
pub const DESCRIPTION: &str = "Inspect, steer and stop Collegium's agents in this channel";

/// One subcommand, as a person types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subcommand {
    pub name: &'static str,
    /// Its arguments, as the hint shows them.
    pub arguments: &'static str,
    /// One line of help.
    pub help: &'static str,
}

/// Every subcommand, in the order §8.4 lists them.
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "trace",
        arguments: "{post-id}",
        help: "the full tool trace of a turn, what started it, what it read and cost",
    },
    Subcommand {
        name: "forget",
        arguments: "{post-id}",
        help: "remove a post from agent context and from every queue",
    },
    Subcommand {
        name: "clear",
        arguments: "[--memories]",
        help: "delete every post here and every agent's record of them, after a confirmation",
    },
    Subcommand {
        name: "reset",
        arguments: "{agent}",
        help: "mark an episode boundary for an agent here",
    },
    Subcommand {
        name: "stop",
        arguments: "",
        help: "stop the turns here at the next boundary",
    },
    Subcommand {
        name: "kill",
        arguments: "",
        help: "abandon the turns here at once",
    },
    Subcommand {
        name: "steer",
        arguments: "[{agent}] {text}",
        help: "hand one instruction to a running turn here",
    },
    Subcommand {
        name: "resume",
        arguments: "",
        help: "clear a global halt",
    },
    Subcommand {
        name: "approvals",
        arguments: "[{agent}]",
        help: "every approval and question still waiting on a person",
    },
    Subcommand {
        name: "queue",
        arguments: "{agent} [clear]",
        help: "the agent's lane and queue here, or discard the queue",
    },
    Subcommand {
        name: "triggers",
        arguments: "{agent}",
        help: "outstanding triggers",
    },
    Subcommand {
        name: "memory",
        arguments: "{agent} [prune {reference}]",
        help: "inspect and prune an agent's memories",
    },
    Subcommand {
        name: "units",
        arguments: "{agent} [cancel {reference}]",
        help: "open work units here, or cancel one",
    },
    Subcommand {
        name: "inspect",
        arguments: "{agent}",
        help: "an agent's model, limits, tools, skills, schedules and prompt",
    },
    Subcommand {
        name: "usage",
        arguments: "",
        help: "token usage per agent and model over the last 24 hours",
    },
];

/// The subcommands this build serves (`callbacks/command.rs` dispatches
/// each); the rest answer that they are not available yet. No text the
/// framework writes points a person at one this build does not serve (A4).
pub const SERVED: &[&str] = &[
    "trace",
    "forget",
    "clear",
    "reset",
    "stop",
    "kill",
    "steer",
    "resume",
    "approvals",
    "queue",
    "triggers",
    "memory",
    "units",
];

/// `/collegium NAME` where this build serves it: the only way a notice or a
/// status post points a person at a subcommand.
pub fn pointer(name: &str) -> Option<String> {
    SERVED.contains(&name).then(|| format!("/collegium {name}"))
}

/// The autocomplete hint: every subcommand with its arguments. A custom slash
/// command has one hint line, not a line of help per subcommand as a plugin
/// would give (the README's operator section says so).
pub fn hint() -> String {
    SUBCOMMANDS
        .iter()
        .map(|s| {
            if s.arguments.is_empty() {
                s.name.to_string()
            } else {
                format!("{} {}", s.name, s.arguments)
            }
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The bare `/collegium` answer: the list of subcommands with their help.
pub fn listing() -> String {
    let mut out = String::from("Usage: /collegium <subcommand>\n");
    for s in SUBCOMMANDS {
        let usage = if s.arguments.is_empty() {
            s.name.to_string()
        } else {
            format!("{} {}", s.name, s.arguments)
        };
        out.push_str(&format!("- `/collegium {usage}` — {}\n", s.help));
    }
    out
}

/// The URL Mattermost posts executions to.
pub fn callback_url(public_url: &str) -> String {
    format!("{}{ROUTE}", public_url.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_names_every_subcommand_and_fits_mattermosts_limit() {
        let hint = hint();
        for s in SUBCOMMANDS {
            assert!(hint.contains(s.name), "{}", s.name);
        }
        // auto_complete_hint is at most 1024 characters.
        assert!(hint.len() <= 1024, "{}", hint.len());
        assert!(DESCRIPTION.len() <= 128);
        assert_eq!(
            callback_url("http://127.0.0.1:8071/"),
            "http://127.0.0.1:8071/mattermost/command"
        );
    }

    #[test]
    fn s8_4_a_pointer_names_only_a_served_subcommand() {
        for name in SERVED {
            assert!(SUBCOMMANDS.iter().any(|s| s.name == *name), "{name}");
            assert_eq!(pointer(name), Some(format!("/collegium {name}")));
        }
        assert_eq!(pointer("inspect"), None, "inspect is not served yet");
    }
}
