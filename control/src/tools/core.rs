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

/// Characters a shortened view keeps at the least; below it a result shows
/// only its size and its reference (§3.8).
pub const VIEW_FLOOR_CHARS: usize = 400;

/// One result the turn recorded whole.
#[derive(Debug, Clone)]
struct Kept {
    /// The call that returned it, so relief finds the whole result behind
    /// what the context shows of it (§3.8).
    call_id: String,
    /// Set once the result is shown in part or stood in for: only then does
    /// the model need a way back to it.
    reference: Option<String>,
    tool: String,
    text: String,
    recorded_at: i64,
}

/// The turn's results, whole, by call and by reference. A reference lasts
/// as long as the turn (§3.8).
#[derive(Debug, Default)]
pub struct ResultViews {
    kept: Vec<Kept>,
    references: usize,
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
    /// Keeps `text` whole and returns how it enters the context: whole when
    /// it fits `limit` characters, else its first part and the line that
    /// says where the rest is.
    pub fn enter(
        &mut self,
        call_id: &str,
        tool: &str,
        text: &str,
        recorded_at: i64,
        limit: usize,
        timezone: chrono_tz::Tz,
    ) -> View {
        self.kept.push(Kept {
            call_id: call_id.to_string(),
            reference: None,
            tool: tool.to_string(),
            text: text.to_string(),
            recorded_at,
        });
        let index = self.kept.len() - 1;
        self.view_of(index, limit, timezone)
    }

    /// The result of `call_id` shown in at most `limit` characters, with
    /// its reference where it does not fit; `None` for a call whose result
    /// was not kept.
    pub fn view(&mut self, call_id: &str, limit: usize, timezone: chrono_tz::Tz) -> Option<View> {
        let index = self.index_of(call_id)?;
        Some(self.view_of(index, limit, timezone))
    }

    /// The one line that stands in for a result the model has already read:
    /// its tool, size, when it was recorded and its reference (§3.8). A
    /// result the turn did not keep (a refusal, a denial) is kept now as
    /// the context shows it, so it too stays readable.
    pub fn stand_in(
        &mut self,
        call_id: &str,
        tool: &str,
        shown: &str,
        recorded_at: i64,
        timezone: chrono_tz::Tz,
    ) -> String {
        let index = self.index_of(call_id).unwrap_or_else(|| {
            self.kept.push(Kept {
                call_id: call_id.to_string(),
                reference: None,
                tool: tool.to_string(),
                text: shown.to_string(),
                recorded_at,
            });
            self.kept.len() - 1
        });
        let reference = self.reference_of(index);
        let kept = &self.kept[index];
        format!(
            "{STAND_IN_MARK} a result of {}, {} characters, recorded at {}, already read. \
             results::read with reference \"{reference}\" reads it again.]",
            kept.tool,
            kept.text.chars().count(),
            clock(kept.recorded_at, timezone),
        )
    }

    /// The reference the result of `call_id` was given, once it has one:
    /// what the trace names beside a view or a stand-in (§8.3).
    pub fn reference_of_call(&self, call_id: &str) -> Option<String> {
        self.index_of(call_id)
            .and_then(|index| self.kept[index].reference.clone())
    }

    /// Whether the result of `call_id` is kept whole.
    pub fn holds(&self, call_id: &str) -> bool {
        self.index_of(call_id).is_some()
    }

    fn index_of(&self, call_id: &str) -> Option<usize> {
        self.kept.iter().position(|k| k.call_id == call_id)
    }

    fn reference_of(&mut self, index: usize) -> String {
        if let Some(reference) = &self.kept[index].reference {
            return reference.clone();
        }
        self.references += 1;
        let reference = format!("r{}", self.references);
        self.kept[index].reference = Some(reference.clone());
        reference
    }

    /// A kept result in at most `limit` characters: whole, its first part
    /// and the line saying where the rest is, or below the floor only its
    /// size and its reference (§3.8).
    fn view_of(&mut self, index: usize, limit: usize, timezone: chrono_tz::Tz) -> View {
        let whole = self.kept[index].text.chars().count();
        if whole <= limit {
            return View {
                text: self.kept[index].text.clone(),
                reference: None,
                shown: whole,
                whole,
            };
        }
        let reference = self.reference_of(index);
        let kept = &self.kept[index];
        let when = clock(kept.recorded_at, timezone);
        if limit < VIEW_FLOOR_CHARS {
            return View {
                text: format!(
                    "[A result of {}, {whole} characters, recorded at {when}, not shown for want of room. \
                     results::read with reference \"{reference}\" reads it from any offset or finds phrases.]",
                    kept.tool
                ),
                reference: Some(reference),
                shown: 0,
                whole,
            };
        }
        let first: String = kept.text.chars().take(limit).collect();
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

    /// `results::read`: a refusal the model reads where the reference or
    /// the arguments do not fit.
    pub fn read(&self, arguments: &serde_json::Value) -> Result<String, String> {
        let args: ReadArguments = serde_json::from_value(arguments.clone())
            .map_err(|e| format!("the arguments were refused: {e}"))?;
        let Some(kept) = self
            .kept
            .iter()
            .find(|k| k.reference.as_deref() == Some(args.reference.as_str()))
        else {
            let known: Vec<&str> = self
                .kept
                .iter()
                .filter_map(|k| k.reference.as_deref())
                .collect();
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
            return Ok(find(&args.reference, kept, &args.find));
        }
        let chars: Vec<char> = kept.text.chars().collect();
        let whole = chars.len();
        let offset = args.offset.unwrap_or(0);
        if offset >= whole {
            return Err(format!(
                "The offset {offset} is past the end: \"{}\" holds {whole} characters.",
                args.reference
            ));
        }
        let length = args.length.unwrap_or(READ_DEFAULT_CHARS);
        let end = (offset + length).min(whole);
        let part: String = chars[offset..end].iter().collect();
        let mut out = format!(
            "[{} from {}: characters {offset} to {end} of {whole}",
            args.reference, kept.tool
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
            .find(|k| k.reference.as_deref() == Some(reference))
            .map(|k| k.recorded_at)
    }
}

/// How a stand-in opens, so relief knows a result it has already replaced.
pub const STAND_IN_MARK: &str = "[Stand-in:";

/// When a result was recorded, as a clock time in the operator's timezone.
fn clock(at: i64, timezone: chrono_tz::Tz) -> String {
    timezone
        .timestamp_millis_opt(at)
        .single()
        .map(|t| t.format("%H:%M:%S").to_string())
        .unwrap_or_default()
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
fn find(reference: &str, kept: &Kept, phrases: &[String]) -> String {
    let chars: Vec<char> = kept.text.chars().collect();
    let lowered: Vec<char> = chars
        .iter()
        .map(|c| c.to_lowercase().next().unwrap_or(*c))
        .collect();
    let mut out = format!(
        "[{} from {}: {} characters]\n",
        reference,
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
            "c1",
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
        views.enter("c1", "t::x", &"x".repeat(20), 0, 10, chrono_tz::Tz::UTC);
        let refused = views
            .read(&json!({"reference": "r9"}))
            .expect_err("refused");
        assert!(refused.contains("r1"), "{refused}");
        let short = views.enter("c2", "t::x", "short", 0, 10, chrono_tz::Tz::UTC);
        assert_eq!(short.reference, None, "a short result enters whole");
    }
}
