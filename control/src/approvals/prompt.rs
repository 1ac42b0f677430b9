//! The approval prompt (§3.7, §6.2): one framework-authored line of facts
//! the payload cannot say, then the full payload, fenced so that no payload
//! can close its own fence, with control, zero-width and bidirectional
//! characters shown escaped, since the approver must see the exact bytes.
//! Every word of the line comes from the turn record; nothing a tool
//! returned ever reaches it.

use serde_json::{Value, json};

/// The facts above the payload.
pub struct PromptFacts<'a> {
    pub tool: &'a str,
    pub line: Provenance,
    /// A reasoned denial of the same tool earlier in this turn: (who, what
    /// they said). The approver reads what was refused before.
    pub earlier_denial: Option<(String, String)>,
    /// The payload the approver reads: the arguments as the tool will
    /// receive them, or a plugin's own rendering of them (§3.14).
    pub payload: &'a str,
    pub form: PayloadForm,
    /// Why a plugin's own rendering is missing, where one was asked for
    /// and the arguments are shown in its place: framework words only.
    pub unrendered: Option<&'a str>,
}

/// What the payload is, which decides how it is fenced and whether it may
/// be cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadForm {
    /// The call's arguments, as JSON.
    Arguments,
    /// A plugin's rendering, as text (§3.4).
    Rendered,
    /// A plugin's rendering of a command: shown whole or not at all (§6.2).
    Command,
}

impl PayloadForm {
    fn language(self) -> &'static str {
        match self {
            Self::Arguments => "json",
            Self::Rendered | Self::Command => "text",
        }
    }

    /// The extension of the file a payload too long for a post is
    /// attached as.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Arguments => "json",
            Self::Rendered | Self::Command => "txt",
        }
    }
}

/// What the framework-authored line says of a call (§3.7): which action of
/// the budget it is and who the work descends from. Every word comes from
/// the turn record; nothing a tool returned ever reaches it.
pub struct Provenance {
    /// Which attempt of the turn's budget this call is, and the budget.
    pub action: u32,
    pub budget: u32,
    /// Who asked for the work; none for a turn no one asked for.
    pub asked_by: Option<AskedBy>,
}

#[derive(Debug, Clone)]
pub enum AskedBy {
    /// A person, by username, with their words (the newest fragment where
    /// folds happened).
    Person { username: String, words: String },
    /// A colleague, by display name, beside the person its chain descends
    /// from and that person's words, where one does: a colleague's own
    /// words are never quoted as a request (§3.7).
    Colleague {
        display_name: String,
        person: Option<Requester>,
    },
    /// A trigger's announcement (§4.2): `what` names it — the schedule, or
    /// the arrival and its sender — in the framework's words.
    Trigger { what: String, schedule: bool },
    /// The system bot's post that was no trigger's announcement.
    SystemBot,
}

/// A person a chain of work descends from, and what they asked.
#[derive(Debug, Clone)]
pub struct Requester {
    pub username: String,
    pub words: String,
}

/// The longest excerpt of the asker's words the line quotes.
pub const EXCERPT_CHARS: usize = 160;

impl Provenance {
    /// The line's facts, without its heading: "action 2 of 10 in this turn;
    /// asked by @ana: “…”". A person it names is tagged (§3.7a).
    pub fn describe(&self) -> String {
        let asked = match &self.asked_by {
            Some(AskedBy::Person { username, words }) => {
                format!("asked by @{username}: “{}”", excerpt(words))
            }
            Some(AskedBy::Colleague {
                display_name,
                person: Some(person),
            }) => format!(
                "asked by the colleague {display_name}, working for @{}: “{}”",
                person.username,
                excerpt(&person.words)
            ),
            Some(AskedBy::Colleague {
                display_name,
                person: None,
            }) => format!("asked by the colleague {display_name}; no person asked for this chain"),
            Some(AskedBy::Trigger {
                what,
                schedule: true,
            }) => format!("started by {what}; no person asked for this turn"),
            Some(AskedBy::Trigger {
                what,
                schedule: false,
            }) => format!(
                "started by {what}; no person asked for this turn, and acting on the item waits for a person here to ask for it (§4.2)"
            ),
            Some(AskedBy::SystemBot) | None => "no person asked for this turn".to_string(),
        };
        format!(
            "action {} of {} in this turn; {asked}",
            self.action, self.budget
        )
    }
}

/// The prompt's text.
pub fn render(facts: &PromptFacts<'_>) -> String {
    let denial = facts
        .earlier_denial
        .as_ref()
        .map(|(by, reason)| {
            format!(
                "\nEarlier in this turn @{by} denied `{}` and said: “{}”",
                facts.tool,
                escaped(&excerpt(reason))
            )
        })
        .unwrap_or_default();
    let unrendered = facts
        .unrendered
        .map(|why| {
            format!(
                "\n⚠ The plugin's own rendering of this call is unavailable ({why}); its arguments are shown exactly as the tool will receive them."
            )
        })
        .unwrap_or_default();
    let payload = escaped(facts.payload);
    let fence = fence_for(&payload);
    format!(
        "🔐 **Approval needed** for `{tool}` — {line}.{denial}{unrendered}\n{fence}{language}\n{payload}\n{fence}",
        tool = facts.tool,
        line = facts.line.describe(),
        language = facts.form.language(),
    )
}

/// The prompt as it can be posted under `limit` characters (§3.7): whole
/// where it fits; else a bounded prefix of the payload inline, saying how
/// much is shown, with the whole payload to be attached as `file`. None
/// where not even the line and a note fit.
pub fn render_bounded(facts: &PromptFacts<'_>, limit: usize, file: &str) -> Bounded {
    let whole = render(facts);
    if whole.chars().count() <= limit {
        return Bounded::Whole(whole);
    }
    // A person approves the very bytes a command runs: never a prefix.
    if NEVER_CUT.contains(&facts.tool) || facts.form == PayloadForm::Command {
        return Bounded::NeverCut;
    }
    let total = facts.payload.chars().count();
    let with = |shown: &str| {
        let mut text = render(&PromptFacts {
            payload: shown,
            earlier_denial: facts.earlier_denial.clone(),
            line: Provenance {
                action: facts.line.action,
                budget: facts.line.budget,
                asked_by: facts.line.asked_by.clone(),
            },
            ..*facts
        });
        text.push_str(&format!(
            "\n⚠ The payload is {total} characters; the first {} are shown above, and the whole of it is attached as `{file}`. Read the attachment before you decide.",
            shown.chars().count()
        ));
        text
    };
    let overhead = with("").chars().count();
    // The escaped prefix may be longer than the bytes it shows, and the
    // fence may grow with it: shrink until it fits.
    let mut room = limit.saturating_sub(overhead);
    while room > 0 {
        let shown: String = facts.payload.chars().take(room).collect();
        let text = with(&shown);
        if text.chars().count() <= limit {
            return Bounded::Attached(text);
        }
        room = room.saturating_sub((text.chars().count() - limit).max(1));
    }
    Bounded::TooLong
}

/// A prompt fitted to the post limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bounded {
    Whole(String),
    /// A prefix inline; the whole payload goes as an attached file.
    Attached(String),
    /// Not even the line fits.
    TooLong,
    /// Too long to show whole, and its tool's payload is never cut or
    /// attached.
    NeverCut,
}

/// Tools whose payload a prompt shows whole or not at all.
pub const NEVER_CUT: &[&str] = &["shell::run"];

/// The buttons (contract §C.1): Approve, Deny, Deny with reason, each
/// calling the decision route with the approval's id and its own signature
/// under `key` (§6.4).
pub fn attachments(url: &str, approval: &str, key: &str) -> Value {
    let action = |id: &str, name: &str, style: &str| {
        let signature = super::sign::sign(key, &super::sign::button(approval, id, None));
        json!({
            "id": id,
            "name": name,
            "style": style,
            "integration": {"url": url, "context": {"action": id, "approval": approval, "signature": signature}}
        })
    };
    json!([{
        "fallback": "An approval is waiting; open Mattermost to decide.",
        "actions": [
            action("approve", "Approve", "primary"),
            action("deny", "Deny", "danger"),
            action("reason", "Deny with reason", "default"),
        ]
    }])
}

/// The prompt once decided: its text with the outcome, and no buttons.
/// Only an approval's heading changes, since only an approval's heading is
/// sure to come first (a question is led by the agent's own words).
pub fn terminal(prompt: &str, outcome: &str) -> String {
    match prompt.strip_prefix("🔐 **Approval needed**") {
        Some(rest) => format!("**Approval decided**{rest}\n{outcome}"),
        None => format!("{prompt}\n{outcome}"),
    }
}

/// The words, whitespace flattened, cut at `EXCERPT_CHARS` with an ellipsis.
pub fn excerpt(words: &str) -> String {
    let flat: String = words.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= EXCERPT_CHARS {
        flat
    } else {
        format!("{}…", flat.chars().take(EXCERPT_CHARS).collect::<String>())
    }
}

/// A fence one backtick longer than the longest run inside, so the payload
/// cannot close it.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Control, zero-width and bidirectional characters as `\u{…}`: the
/// approver sees every byte the tool would get, not what a renderer makes
/// of them. Newlines and tabs stay, since they render as themselves.
pub fn escaped(text: &str) -> String {
    text.chars()
        .map(|c| {
            let hidden = (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{00AD}');
            if hidden {
                format!("\\u{{{:04X}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_2_the_payload_cannot_close_its_fence_and_hidden_characters_show() {
        let payload = "a ``` b ```` c\u{202E}evil\u{200B}\u{7}";
        let text = render(&PromptFacts {
            tool: "mail::send",
            line: Provenance {
                action: 3,
                budget: 10,
                asked_by: Some(AskedBy::Person {
                    username: "ana".into(),
                    words: "please send it".into(),
                }),
            },
            earlier_denial: None,
            payload,
            form: PayloadForm::Arguments,
            unrendered: None,
        });
        assert!(
            text.contains("`````json\n"),
            "a fence longer than any run inside: {text}"
        );
        assert!(text.contains("\\u{202E}evil\\u{200B}\\u{0007}"), "{text}");
        assert!(text.contains("action 3 of 10 in this turn; asked by @ana: “please send it”"));
    }

    #[test]
    fn s3_7_a_payload_over_the_limit_shows_a_prefix_and_says_the_rest_is_attached() {
        let payload = format!("{{\"body\": \"{}\"}}", "x".repeat(5_000));
        let facts = PromptFacts {
            tool: "mail::send",
            line: Provenance {
                action: 1,
                budget: 10,
                asked_by: None,
            },
            earlier_denial: None,
            payload: &payload,
            form: PayloadForm::Arguments,
            unrendered: None,
        };
        let Bounded::Attached(text) = render_bounded(&facts, 1_000, "payload.json") else {
            panic!("a prefix and an attachment");
        };
        assert!(text.chars().count() <= 1_000, "{}", text.chars().count());
        assert!(
            text.contains("The payload is 5012 characters; the first"),
            "{text}"
        );
        assert!(text.contains("attached as `payload.json`"));
        assert!(text.starts_with("🔐 **Approval needed** for `mail::send`"));
        assert_eq!(
            render_bounded(&facts, 100_000, "payload.json"),
            Bounded::Whole(render(&facts))
        );
        assert_eq!(render_bounded(&facts, 50, "payload.json"), Bounded::TooLong);
    }

    #[test]
    fn s3_7_a_shell_command_too_long_to_show_is_never_cut_or_attached() {
        let command = format!("{{\"command\": \"{}\"}}", "echo x; ".repeat(500));
        let facts = PromptFacts {
            tool: "shell::run",
            line: Provenance {
                action: 1,
                budget: 10,
                asked_by: None,
            },
            earlier_denial: None,
            payload: &command,
            form: PayloadForm::Arguments,
            unrendered: None,
        };
        assert_eq!(render_bounded(&facts, 1_000, "p.json"), Bounded::NeverCut);
        assert!(matches!(
            render_bounded(&facts, 100_000, "p.json"),
            Bounded::Whole(_)
        ));
    }

    #[test]
    fn s3_14_a_plugins_rendering_is_shown_as_text_and_a_rendered_command_is_never_cut() {
        let line = || Provenance {
            action: 1,
            budget: 10,
            asked_by: None,
        };
        let rendered = "Send to ana@example.com:\n```\nHello\u{202E}";
        let text = render(&PromptFacts {
            tool: "crm::send",
            line: line(),
            earlier_denial: None,
            payload: rendered,
            form: PayloadForm::Rendered,
            unrendered: None,
        });
        assert!(
            text.contains("````text\nSend to ana@example.com:\n```\nHello\\u{202E}\n````"),
            "fenced as text, its own fence and hidden characters shown: {text}"
        );
        assert!(!text.contains("unavailable"), "{text}");
        let long = "rm -rf x; ".repeat(500);
        let command = PromptFacts {
            tool: "ops::run",
            line: line(),
            earlier_denial: None,
            payload: &long,
            form: PayloadForm::Command,
            unrendered: None,
        };
        assert_eq!(render_bounded(&command, 1_000, "p.txt"), Bounded::NeverCut);
    }

    #[test]
    fn s3_14_an_unavailable_rendering_shows_the_arguments_and_says_so() {
        let text = render(&PromptFacts {
            tool: "crm::send",
            line: Provenance {
                action: 1,
                budget: 10,
                asked_by: None,
            },
            earlier_denial: None,
            payload: "{\n  \"to\": \"ana@example.com\"\n}",
            form: PayloadForm::Arguments,
            unrendered: Some("it did not answer within 10 s"),
        });
        assert!(
            text.contains(
                "⚠ The plugin's own rendering of this call is unavailable (it did not answer within 10 s); its arguments are shown exactly as the tool will receive them.\n```json\n{\n  \"to\": \"ana@example.com\"\n}\n```"
            ),
            "{text}"
        );
    }

    #[test]
    fn s3_7_a_long_request_is_excerpted() {
        let words = "word ".repeat(100);
        let text = render(&PromptFacts {
            tool: "t::x",
            line: Provenance {
                action: 1,
                budget: 2,
                asked_by: Some(AskedBy::Colleague {
                    display_name: "Theo".into(),
                    person: Some(Requester {
                        username: "ana".into(),
                        words,
                    }),
                }),
            },
            earlier_denial: Some(("bo".into(), "not to \u{202E}them".into())),
            payload: "{}",
            form: PayloadForm::Arguments,
            unrendered: None,
        });
        assert!(
            text.contains("asked by the colleague Theo, working for @ana: “word word"),
            "{text}"
        );
        assert!(text.contains("…”"));
        assert!(
            text.contains(
                "Earlier in this turn @bo denied `t::x` and said: “not to \\u{202E}them”"
            ),
            "{text}"
        );
    }
}
