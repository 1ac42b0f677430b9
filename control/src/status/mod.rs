//! The status post's body (§8.1): one line per call, naming what it did and
//! its disposition where it was not plain success; identical runs collapsed
//! with a count; the oldest lines giving way behind one line that says how
//! many when the post would outgrow the limit; a closing line with how long
//! the turn ran and who ended it where a person did. Posting and editing it
//! land with the turn runner.

/// The longest line a call renders; the whole arguments are in the turn's
/// trace.
pub const LINE_CAP: usize = 200;

/// How a call came out.
/// Where a turn's status post id lives, shared by the turn and the stall
/// sweep; held across a creation so two never race to create one each.
pub type StatusSlot = std::sync::Arc<tokio::sync::Mutex<Option<String>>>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disposition {
    /// Ran, and what it came to needs no note.
    Done,
    /// Ran; what it came to, where that is not plain success (the page a
    /// click landed on, a status that was not success, a search that matched
    /// nothing), or how much of its result the model was shown.
    Came(String),
    /// A person denied it.
    Denied { by: String },
    /// The domain or the framework refused it; it did not run.
    Refused { reason: String },
    /// It ran past its deadline and whether it finished is unknown.
    TimedOut,
    /// A command or a halt cancelled it before it ran (§7.5).
    Cancelled { by: String },
    /// Still running when a person killed the turn; it may complete.
    Abandoned { by: String },
    /// It failed.
    Failed { reason: String },
}

/// One call, as its tool summarised it (the URL, the path, the command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallLine {
    pub summary: String,
    pub disposition: Disposition,
}

/// How the turn ended, for the closing line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Completed,
    /// `/collegium stop` or `kill` by this person, or a denial by them.
    EndedBy {
        person: String,
        how: String,
    },
    /// Any other end, in the fixed words of its §7.1 row.
    Other(String),
}

/// One call's line. A call that did not run states its subject and nothing
/// it would have come to.
pub fn render_call(call: &CallLine) -> String {
    let summary = capped(&call.summary);
    match &call.disposition {
        Disposition::Done => format!("• {summary}"),
        Disposition::Came(note) => format!("• {summary} — {note}"),
        Disposition::Denied { by } => format!("🚫 {summary} — denied by @{by}"),
        Disposition::Refused { reason } => format!("⛔ {summary} — refused: {reason}"),
        Disposition::TimedOut => {
            format!("⏱ {summary} — timed out; whether it completed cannot be confirmed")
        }
        Disposition::Cancelled { by } => format!("✋ {summary} — cancelled by {by}"),
        Disposition::Abandoned { by } => {
            format!("⏹ {summary} — still running when {by} killed the turn; it may yet complete")
        }
        Disposition::Failed { reason } => format!("⚠ {summary} — failed: {reason}"),
    }
}

/// The closing line.
pub fn render_ending(ending: &Ending, duration: std::time::Duration) -> String {
    let took = human_duration(duration);
    match ending {
        Ending::Completed => format!("Done in {took}."),
        Ending::EndedBy { person, how } => format!("{how} by @{person} after {took}."),
        Ending::Other(words) => format!("{words} after {took}."),
    }
}

/// The body under `limit` characters: identical consecutive lines as one
/// with a count, then the oldest lines behind one line that says how many.
pub fn render_body(lines: &[String], closing: Option<&str>, limit: usize) -> String {
    let mut collapsed: Vec<String> = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let run = lines[index..]
            .iter()
            .take_while(|l| **l == lines[index])
            .count();
        collapsed.push(if run > 1 {
            format!("{} (×{run})", lines[index])
        } else {
            lines[index].clone()
        });
        index += run;
    }
    // Each line costs its characters and a newline; the oldest give way
    // until the rest, under the line that counts them, fits.
    let cost = |line: &str| line.chars().count() + 1;
    let mut total: usize =
        collapsed.iter().map(|l| cost(l)).sum::<usize>() + closing.map_or(0, cost);
    let mut dropped = 0;
    while dropped < collapsed.len()
        && total.saturating_sub(1) + earlier_lines(dropped).map_or(0, |h| cost(&h)) > limit
    {
        total -= cost(&collapsed[dropped]);
        dropped += 1;
    }
    earlier_lines(dropped)
        .into_iter()
        .chain(collapsed.into_iter().skip(dropped))
        .chain(closing.map(str::to_string))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The line that stands for the `dropped` oldest lines; none for none.
fn earlier_lines(dropped: usize) -> Option<String> {
    (dropped > 0).then(|| {
        let whole = crate::commands::pointer("trace")
            .map(|trace| format!("; all are in {trace}"))
            .unwrap_or_default();
        format!(
            "… {dropped} earlier line{} not shown{whole}",
            if dropped == 1 { "" } else { "s" }
        )
    })
}

fn capped(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let count = line.chars().count();
    if count <= LINE_CAP && line.len() == text.len() {
        return line.to_string();
    }
    let kept: String = line.chars().take(LINE_CAP - 1).collect();
    format!("{kept}…")
}

fn human_duration(duration: std::time::Duration) -> String {
    let secs = duration.as_secs();
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m {}s", secs / 60, secs % 60),
        _ => format!("{}h {}m", secs / 3600, (secs % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn call(summary: &str, disposition: Disposition) -> String {
        render_call(&CallLine {
            summary: summary.into(),
            disposition,
        })
    }

    #[test]
    fn s8_1_a_line_names_what_the_call_did_and_its_disposition() {
        assert_eq!(
            call("fetched https://example.com", Disposition::Done),
            "• fetched https://example.com"
        );
        assert_eq!(
            call("wrote notes.md", Disposition::Denied { by: "ana".into() }),
            "🚫 wrote notes.md — denied by @ana"
        );
        assert_eq!(
            call(
                "searched for \"q3 revenue\"",
                Disposition::Came("matched nothing".into())
            ),
            "• searched for \"q3 revenue\" — matched nothing"
        );
        assert_eq!(
            call("sent the draft to bo@example.com", Disposition::TimedOut),
            "⏱ sent the draft to bo@example.com — timed out; whether it completed cannot be confirmed"
        );
    }

    #[test]
    fn s8_1_a_long_summary_is_capped_visibly() {
        let line = call(&"x".repeat(500), Disposition::Done);
        assert_eq!(line.chars().count(), 2 + LINE_CAP);
        assert!(line.ends_with('…'));
        let multi = call("first line\nsecond", Disposition::Done);
        assert_eq!(multi, "• first line…");
    }

    #[test]
    fn s8_1_identical_runs_are_one_line_with_a_count() {
        let lines = vec![
            "• a".to_string(),
            "• b".into(),
            "• b".into(),
            "• b".into(),
            "• a".into(),
        ];
        assert_eq!(render_body(&lines, None, 1000), "• a\n• b (×3)\n• a");
    }

    #[test]
    fn s8_1_the_oldest_lines_give_way_behind_a_count() {
        let lines: Vec<String> = (1..=10).map(|n| format!("• step {n}")).collect();
        let body = render_body(&lines, Some("Done in 4s."), 80);
        assert!(body.chars().count() <= 80, "{body}");
        assert!(body.starts_with("… "), "{body}");
        assert!(body.ends_with("• step 10\nDone in 4s."), "{body}");
        let dropped: usize = body[4..]
            .split(' ')
            .next()
            .unwrap_or("0")
            .parse()
            .unwrap_or(0);
        let shown = body.lines().filter(|l| l.starts_with("• step")).count();
        assert_eq!(dropped + shown, 10, "{body}");
    }

    #[test]
    fn s8_1_the_closing_line_says_how_long_and_who_ended_it() {
        assert_eq!(
            render_ending(&Ending::Completed, Duration::from_secs(133)),
            "Done in 2m 13s."
        );
        assert_eq!(
            render_ending(
                &Ending::EndedBy {
                    person: "ana".into(),
                    how: "Stopped".into()
                },
                Duration::from_secs(45)
            ),
            "Stopped by @ana after 45s."
        );
    }

    #[test]
    fn s8_1_a_long_status_post_points_only_at_a_declared_command() {
        let lines: Vec<String> = (0..50).map(|i| format!("• call {i}")).collect();
        let body = render_body(&lines, None, 200);
        assert!(body.contains("earlier lines not shown"), "{body}");
        for (at, _) in body.match_indices("/collegium ") {
            let name: String = body[at + "/collegium ".len()..]
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect();
            assert!(crate::commands::parse(&name).is_some(), "{body}");
        }
    }
}
