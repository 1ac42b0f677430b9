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

/// Who sees a subcommand's answer (§8.4): the invoker alone, or the
/// channel, through a notice the system bot posts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Ephemeral,
    Posts,
}

/// One subcommand, as a person types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subcommand {
    pub name: &'static str,
    /// Its arguments, as the hint shows them.
    pub arguments: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// Whether its answer is the invoker's alone or posted (§8.4).
    pub answer: Answer,
}

impl Subcommand {
    /// How a person types it: the name and its arguments, as the hint and
    /// the listing show it and as a missing argument is answered.
    pub fn usage(&self) -> String {
        if self.arguments.is_empty() {
            self.name.to_string()
        } else {
            format!("{} {}", self.name, self.arguments)
        }
    }
}

/// The subcommand a typed word names, case-insensitively: the parser's one
/// lookup, so nothing is dispatched that `SUBCOMMANDS` does not declare.
pub fn parse(word: &str) -> Option<&'static Subcommand> {
    SUBCOMMANDS
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(word))
}

/// Every subcommand, in the order §8.4 lists them.
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "trace",
        arguments: "{post-id}",
        help: "the full tool trace of a turn, what started it, what it read and cost",
        answer: Answer::Ephemeral,
    },
    Subcommand {
        name: "forget",
        arguments: "{post-id}",
        help: "remove a post from agent context and from every queue",
        answer: Answer::Posts,
    },
    Subcommand {
        name: "clear",
        arguments: "[--memories]",
        help: "delete every post here and every agent's record of them, after a confirmation",
        answer: Answer::Posts,
    },
    Subcommand {
        name: "reset",
        arguments: "{agent}",
        help: "mark an episode boundary for an agent here",
        answer: Answer::Posts,
    },
    Subcommand {
        name: "stop",
        arguments: "",
        help: "stop the turns here at the next boundary",
        answer: Answer::Posts,
    },
    Subcommand {
        name: "kill",
        arguments: "",
        help: "abandon the turns here at once",
        answer: Answer::Posts,
    },
    Subcommand {
        name: "steer",
        arguments: "[{agent}] {text}",
        help: "hand one instruction to a running turn here",
        answer: Answer::Ephemeral,
    },
    Subcommand {
        name: "resume",
        arguments: "",
        help: "clear a global halt",
        answer: Answer::Posts,
    },
    Subcommand {
        name: "approvals",
        arguments: "[{agent}]",
        help: "every approval and question still waiting on a person",
        answer: Answer::Ephemeral,
    },
    Subcommand {
        name: "queue",
        arguments: "{agent} [clear]",
        help: "the agent's lane and queue here, or discard the queue",
        answer: Answer::Ephemeral,
    },
    Subcommand {
        name: "triggers",
        arguments: "{agent}",
        help: "outstanding triggers",
        answer: Answer::Ephemeral,
    },
    Subcommand {
        name: "memory",
        arguments: "{agent} [prune {reference}]",
        help: "inspect and prune an agent's memories",
        answer: Answer::Ephemeral,
    },
    Subcommand {
        name: "units",
        arguments: "{agent} [cancel {reference}]",
        help: "open work units here, or cancel one",
        answer: Answer::Ephemeral,
    },
    Subcommand {
        name: "inspect",
        arguments: "{agent}",
        help: "an agent's model, limits, tools, skills, schedules and prompt",
        answer: Answer::Ephemeral,
    },
    Subcommand {
        name: "usage",
        arguments: "",
        help: "token usage per agent and model over the last 24 hours",
        answer: Answer::Ephemeral,
    },
];

/// `/collegium NAME` for a declared subcommand: the only way a notice or a
/// status post points a person at one, so no text names a subcommand that
/// does not exist (A4).
pub fn pointer(name: &str) -> Option<String> {
    parse(name).map(|s| format!("/collegium {}", s.name))
}

/// The autocomplete hint: every subcommand with its arguments. A custom slash
/// command has one hint line, not a line of help per subcommand as a plugin
/// would give (the README's operator section says so).
pub fn hint() -> String {
    SUBCOMMANDS
        .iter()
        .map(Subcommand::usage)
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The bare `/collegium` answer: the list of subcommands with their help.
pub fn listing() -> String {
    let mut out = String::from("Usage: /collegium <subcommand>\n");
    for s in SUBCOMMANDS {
        let seen = match s.answer {
            Answer::Ephemeral => "only you see the answer",
            Answer::Posts => "posts in the channel",
        };
        out.push_str(&format!(
            "- `/collegium {}` — {} ({seen})\n",
            s.usage(),
            s.help
        ));
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
    fn s8_4_a_pointer_names_only_a_declared_subcommand() {
        for s in SUBCOMMANDS {
            assert_eq!(pointer(s.name), Some(format!("/collegium {}", s.name)));
        }
        assert_eq!(pointer("rewind"), None, "no such subcommand");
    }

    #[test]
    fn s8_4_the_parser_the_listing_and_the_hint_all_read_the_one_declaration() {
        let listing = listing();
        let hint = hint();
        for s in SUBCOMMANDS {
            assert_eq!(parse(s.name), Some(s));
            assert_eq!(parse(&s.name.to_uppercase()), Some(s), "case-insensitive");
            let line = format!("- `/collegium {}` — {}", s.usage(), s.help);
            let line = listing
                .lines()
                .find(|l| l.starts_with(&line))
                .unwrap_or_else(|| panic!("{} missing from the listing", s.name));
            let seen = match s.answer {
                Answer::Ephemeral => "(only you see the answer)",
                Answer::Posts => "(posts in the channel)",
            };
            assert!(line.ends_with(seen), "{line}");
            assert!(hint.split(" | ").any(|h| h == s.usage()), "{}", s.name);
        }
        assert_eq!(parse("nonsense"), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("inspect").map(|s| s.answer), Some(Answer::Ephemeral));
        assert_eq!(parse("forget").map(|s| s.answer), Some(Answer::Posts));
    }
}
