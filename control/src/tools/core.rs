//! The core tools this daemon runs itself (§3.4, §3.8): `builtins::now`,
//! because a time stated as a turn starts is stale within minutes, and
//! `results::read`, which reads on in a result the turn was shown only in
//! part. A long result enters the turn's context as a view — its first part
//! and a line with its whole size, when it was recorded and its reference —
//! and the turn keeps the whole text, so nothing is cut silently (A4).

use std::fmt::Write as _;

use chrono::TimeZone;
use serde::Deserialize;

/// The most characters a result view shows before the rest is by reference.
pub const VIEW_MAX_CHARS: usize = 16_000;
/// What `results::read` returns when no length is asked.
pub const READ_DEFAULT_CHARS: usize = 8_000;
/// Matches listed per phrase.
const MATCHES_PER_PHRASE: usize = 20;
/// Characters shown either side of a match.
const MATCH_CONTEXT: usize = 60;

/// One result the turn recorded whole.
#[derive(Debug, Clone)]
struct Kept {
    reference: String,
    tool: String,
    text: String,
    recorded_at: i64,
}

/// The turn's results, whole, by reference. A reference lasts as long as
/// the turn (§3.8).
#[derive(Debug, Default)]
pub struct ResultViews {
    kept: Vec<Kept>,
}

/// How a result enters the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub text: String,
    /// Set when the result was shown in part.
    pub reference: Option<String>,
    /// Characters shown, and the whole.
    pub shown: usize,
    pub whole: usize,
}

impl ResultViews {
    /// Keeps `text` and returns how it enters the context: whole when it
    /// fits `limit` characters, else its first part and the line that says
    /// where the rest is.
    pub fn enter(
        &mut self,
        tool: &str,
        text: &str,
        recorded_at: i64,
        limit: usize,
        timezone: chrono_tz::Tz,
    ) -> View {
        let whole = text.chars().count();
        if whole <= limit {
            return View {
                text: text.to_string(),
                reference: None,
                shown: whole,
                whole,
            };
        }
        let reference = format!("r{}", self.kept.len() + 1);
        self.kept.push(Kept {
            reference: reference.clone(),
            tool: tool.to_string(),
            text: text.to_string(),
            recorded_at,
        });
        let first: String = text.chars().take(limit).collect();
        let when = timezone
            .timestamp_millis_opt(recorded_at)
            .single()
            .map(|t| t.format("%H:%M:%S").to_string())
            .unwrap_or_default();
        View {
            text: format!(
                "{first}\n[Shown: the first {limit} of {whole} characters, recorded at {when}. \
                 results::read with reference \"{reference}\" reads on from any offset or finds phrases.]"
            ),
            reference: Some(reference),
            shown: limit,
            whole,
        }
    }

    /// Keeps a result already in context whole, so relief under pressure
    /// can replace it with a line and it stays readable (§3.8).
    pub fn keep(&mut self, tool: &str, text: &str, recorded_at: i64) -> String {
        if let Some(found) = self.kept.iter().find(|k| k.text == text && k.tool == tool) {
            return found.reference.clone();
        }
        let reference = format!("r{}", self.kept.len() + 1);
        self.kept.push(Kept {
            reference: reference.clone(),
            tool: tool.to_string(),
            text: text.to_string(),
            recorded_at,
        });
        reference
    }

    /// `results::read`: a refusal the model reads where the reference or
    /// the arguments do not fit.
    pub fn read(&self, arguments: &serde_json::Value) -> Result<String, String> {
        let args: ReadArguments = serde_json::from_value(arguments.clone())
            .map_err(|e| format!("the arguments were refused: {e}"))?;
        let Some(kept) = self.kept.iter().find(|k| k.reference == args.reference) else {
            let known: Vec<&str> = self.kept.iter().map(|k| k.reference.as_str()).collect();
            return Err(if known.is_empty() {
                format!(
                    "There is no result \"{}\" in this turn: no result of this turn was shown in part.",
                    args.reference
                )
            } else {
                format!(
                    "There is no result \"{}\" in this turn. The references this turn holds are: {}.",
                    args.reference,
                    known.join(", ")
                )
            });
        };
        if !args.find.is_empty() {
            return Ok(find(kept, &args.find));
        }
        let chars: Vec<char> = kept.text.chars().collect();
        let whole = chars.len();
        let offset = args.offset.unwrap_or(0);
        if offset >= whole {
            return Err(format!(
                "The offset {offset} is past the end: \"{}\" holds {whole} characters.",
                kept.reference
            ));
        }
        let length = args.length.unwrap_or(READ_DEFAULT_CHARS);
        let end = (offset + length).min(whole);
        let part: String = chars[offset..end].iter().collect();
        let mut out = format!(
            "[{} from {}: characters {offset} to {end} of {whole}",
            kept.reference, kept.tool
        );
        if end < whole {
            let _ = write!(out, "; read on from offset {end}");
        }
        out.push_str("]\n");
        out.push_str(&part);
        Ok(out)
    }

    pub fn recorded_at(&self, reference: &str) -> Option<i64> {
        self.kept
            .iter()
            .find(|k| k.reference == reference)
            .map(|k| k.recorded_at)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArguments {
    reference: String,
    offset: Option<usize>,
    length: Option<usize>,
    #[serde(default)]
    find: Vec<String>,
}

/// Each phrase with the character offsets it occurs at, case-insensitively,
/// and a little text around each.
fn find(kept: &Kept, phrases: &[String]) -> String {
    let chars: Vec<char> = kept.text.chars().collect();
    let lowered: Vec<char> = chars
        .iter()
        .map(|c| c.to_lowercase().next().unwrap_or(*c))
        .collect();
    let mut out = format!(
        "[{} from {}: {} characters]\n",
        kept.reference,
        kept.tool,
        chars.len()
    );
    for phrase in phrases {
        let needle: Vec<char> = phrase
            .chars()
            .map(|c| c.to_lowercase().next().unwrap_or(c))
            .collect();
        let offsets: Vec<usize> = lowered
            .windows(needle.len().max(1))
            .enumerate()
            .filter(|(_, w)| *w == needle.as_slice())
            .map(|(i, _)| i)
            .collect();
        if offsets.is_empty() {
            let _ = writeln!(out, "\"{phrase}\": not found.");
            continue;
        }
        let listed = offsets.len().min(MATCHES_PER_PHRASE);
        let _ = writeln!(
            out,
            "\"{phrase}\": {} matches{}",
            offsets.len(),
            if listed < offsets.len() {
                format!(", the first {listed} listed")
            } else {
                String::new()
            }
        );
        for offset in offsets.iter().take(listed) {
            let from = offset.saturating_sub(MATCH_CONTEXT);
            let to = (offset + needle.len() + MATCH_CONTEXT).min(chars.len());
            let around: String = chars[from..to].iter().collect();
            let _ = writeln!(out, "- at offset {offset}: …{}…", around.replace('\n', " "));
        }
    }
    out
}

/// `builtins::now`: the date and time in the operator's timezone.
pub fn now(at: i64, timezone: chrono_tz::Tz, timezone_name: &str) -> String {
    match timezone.timestamp_millis_opt(at).single() {
        Some(time) => format!(
            "{} ({timezone_name})",
            time.format("%A %-d %B %Y, %H:%M:%S %Z")
        ),
        None => format!("{at} ms since the epoch"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn big() -> String {
        (0..20_000)
            .map(|i| format!("line {i:05} of the report\n"))
            .collect::<String>()
    }

    #[test]
    fn s3_8_a_200_kb_result_enters_as_a_view_and_reads_on_exactly() {
        let text = big();
        assert!(text.len() > 200_000);
        let mut views = ResultViews::default();
        let view = views.enter(
            "fixture::read",
            &text,
            0,
            VIEW_MAX_CHARS,
            chrono_tz::Tz::UTC,
        );
        assert_eq!(view.reference.as_deref(), Some("r1"));
        assert_eq!(view.shown, VIEW_MAX_CHARS);
        assert!(
            view.text
                .contains(&format!("of {} characters", text.chars().count()))
        );
        let read = views
            .read(&json!({"reference": "r1", "offset": 123_456, "length": 50}))
            .expect("read");
        let body = read.split_once('\n').expect("header").1;
        assert_eq!(
            body,
            &text[123_456..123_506],
            "the exact bytes at the offset"
        );
        let found = views
            .read(&json!({"reference": "r1", "find": ["LINE 19999", "absent phrase"]}))
            .expect("find");
        let expected = text.find("line 19999").expect("present");
        assert!(found.contains(&format!("at offset {expected}")), "{found}");
        assert!(found.contains("\"absent phrase\": not found."));
    }

    #[test]
    fn s3_8_an_unknown_reference_names_the_ones_held() {
        let mut views = ResultViews::default();
        views.enter("t::x", &"x".repeat(20), 0, 10, chrono_tz::Tz::UTC);
        let refused = views
            .read(&json!({"reference": "r9"}))
            .expect_err("refused");
        assert!(refused.contains("r1"), "{refused}");
        let short = views.enter("t::x", "short", 0, 10, chrono_tz::Tz::UTC);
        assert_eq!(short.reference, None, "a short result enters whole");
    }
}
