//! What `/collegium approvals` shows (§8.4): every approval and question
//! still waiting on a person in the channels the invoker is in, oldest
//! first, each naming the agent, the action or the head of the question's
//! words, its age and its prompt. It decides nothing; the buttons on the
//! prompt post remain the only way to answer.

use std::fmt::Write as _;

use crate::store::Millis;

/// The most characters of a question's words an entry shows.
pub const QUESTION_HEAD_CHARS: usize = 80;

/// What a prompt waits on a person for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Awaiting {
    /// Consent to a call of this tool (§3.7), or to more actions.
    Approval { tool: Option<String> },
    /// An answer to these words (§3.7a).
    Question { words: String },
}

/// One prompt still waiting, as the list names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The agent by display name (§3.1).
    pub agent: String,
    /// Where: `~name`, or a direct message named by who is in it.
    pub place: String,
    pub awaiting: Awaiting,
    pub requested_at: Millis,
    /// The local time it was asked, as the deployment's timezone reads it.
    pub requested_local: String,
    pub prompt_post_id: Option<String>,
}

/// The ephemeral answer, for `waiting` already filtered to the invoker's
/// channels and sorted oldest first.
pub fn render(waiting: &[Waiting], now: Millis) -> String {
    if waiting.is_empty() {
        return "No approval or question is waiting on a person in the channels you are in."
            .to_string();
    }
    let mut out = format!(
        "{} waiting on a person in the channels you are in, oldest first:",
        waiting.len()
    );
    for entry in waiting {
        let what = match &entry.awaiting {
            Awaiting::Approval { tool } => {
                format!("approval of {}", tool.as_deref().unwrap_or("more actions"))
            }
            Awaiting::Question { words } => format!("a question, “{}”", head(words)),
        };
        let _ = write!(
            out,
            "\n- {} in {}: {what}, waiting {} (since {}); prompt post {}",
            entry.agent,
            entry.place,
            age(now - entry.requested_at),
            entry.requested_local,
            entry.prompt_post_id.as_deref().unwrap_or("not posted yet"),
        );
    }
    out
}

/// The head of a question's words: whitespace flattened onto one line and
/// cut at `QUESTION_HEAD_CHARS` with an ellipsis, so one entry stays one line.
pub fn head(words: &str) -> String {
    let flat = words.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= QUESTION_HEAD_CHARS {
        flat
    } else {
        format!(
            "{}…",
            flat.chars().take(QUESTION_HEAD_CHARS).collect::<String>()
        )
    }
}

/// How long something has waited, in the two largest units that say it: a
/// prompt may wait for days (§3.7), so minutes alone would not read.
pub fn age(elapsed: Millis) -> String {
    let minutes = elapsed.max(0) / 60_000;
    let (days, hours, minutes) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => "under a minute".to_string(),
        (0, 0, m) => plural(m, "minute"),
        (0, h, 0) => plural(h, "hour"),
        (0, h, m) => format!("{} {}", plural(h, "hour"), plural(m, "minute")),
        (d, 0, _) => plural(d, "day"),
        (d, h, _) => format!("{} {}", plural(d, "day"), plural(h, "hour")),
    }
}

fn plural(n: i64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Millis = 60_000;

    #[test]
    fn s8_4_an_age_reads_in_its_two_largest_units() {
        assert_eq!(age(30_000), "under a minute");
        assert_eq!(age(MINUTE), "1 minute");
        assert_eq!(age(59 * MINUTE), "59 minutes");
        assert_eq!(age(60 * MINUTE), "1 hour");
        assert_eq!(age(125 * MINUTE), "2 hours 5 minutes");
        assert_eq!(age(24 * 60 * MINUTE + 5), "1 day");
        assert_eq!(
            age((3 * 24 + 4) * 60 * MINUTE + 7 * MINUTE),
            "3 days 4 hours"
        );
        assert_eq!(age(-5), "under a minute", "a clock step back is no age");
    }

    #[test]
    fn s8_4_each_entry_gives_its_age_and_a_question_the_head_of_its_words() {
        let long = format!("Which venue\n  for the {} offsite?", "very ".repeat(30));
        let waiting = [
            Waiting {
                agent: "Mira".into(),
                place: "~research".into(),
                awaiting: Awaiting::Approval {
                    tool: Some("fixture::write".into()),
                },
                requested_at: 0,
                requested_local: "2026-01-01 09:00".into(),
                prompt_post_id: Some("p1".into()),
            },
            Waiting {
                agent: "Theo the Operator".into(),
                place: "a direct message (ana, theo)".into(),
                awaiting: Awaiting::Question { words: long },
                requested_at: 90 * MINUTE,
                requested_local: "2026-01-01 10:30".into(),
                prompt_post_id: None,
            },
        ];
        let text = render(&waiting, 3 * 60 * MINUTE);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "2 waiting on a person in the channels you are in, oldest first:"
        );
        assert_eq!(
            lines[1],
            "- Mira in ~research: approval of fixture::write, waiting 3 hours (since 2026-01-01 09:00); prompt post p1"
        );
        let head = format!("Which venue for the {}", "very ".repeat(30))
            .chars()
            .take(QUESTION_HEAD_CHARS)
            .collect::<String>();
        assert_eq!(
            lines[2],
            format!(
                "- Theo the Operator in a direct message (ana, theo): a question, “{head}…”, waiting 1 hour 30 minutes (since 2026-01-01 10:30); prompt post not posted yet"
            )
        );
        assert_eq!(
            render(&[], 0),
            "No approval or question is waiting on a person in the channels you are in."
        );
    }
}
