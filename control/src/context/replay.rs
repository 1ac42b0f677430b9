//! What a tool result costs in the window (§3.8). A later turn reads a
//! result as what it was, not what it said: the line its tool returned, or —
//! for a result over 2,000 characters with no line — the tool's name and the
//! result's size; a shorter one stays as it was, being cheaper to keep than
//! to describe. Within a turn, a result byte-identical to one still shown
//! costs one line naming it; one identical to a result since replaced is
//! shown again, naming the earlier one.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::status::{CallLine, Disposition, render_call};
use crate::tools::ToolRef;
use collegium_web_page::thousands;

/// The longest result a later turn reads whole when its tool gave no line.
pub const KEEP_WHOLE_CHARS: usize = 2000;

/// What a later turn reads in place of a result.
pub fn replay_line(tool: &ToolRef, text: &str, tool_line: Option<&str>) -> String {
    if let Some(line) = tool_line {
        return line.to_string();
    }
    let size = text.chars().count();
    if size > KEEP_WHOLE_CHARS {
        format!("[{tool} returned {} characters]", thousands(size))
    } else {
        text.to_string()
    }
}

/// What an earlier action says (§3.8): what the agent did — the call as
/// its tool summarised it (the tool and the gist of its arguments) — and
/// what it came to. A result that ran is named by the line its tool gave,
/// else by its size: never by what it said.
pub fn action_line(call: &CallLine, tool_line: Option<&str>, result_chars: usize) -> String {
    let came_to = || {
        tool_line.map_or_else(
            || format!("returned {} characters", thousands(result_chars)),
            str::to_string,
        )
    };
    match &call.disposition {
        Disposition::Done => render_call(&CallLine {
            summary: call.summary.clone(),
            disposition: Disposition::Came(came_to()),
        }),
        Disposition::Came(note) => render_call(&CallLine {
            summary: call.summary.clone(),
            disposition: Disposition::Came(format!("{note}; {}", came_to())),
        }),
        _ => render_call(call),
    }
}

/// An earlier action recorded before its line was kept: the tool and the
/// result's size, since its arguments' gist was not recorded.
pub fn action_line_unrecorded(tool: &str, tool_line: Option<&str>, result_chars: usize) -> String {
    render_call(&CallLine {
        summary: tool.to_string(),
        disposition: Disposition::Came(tool_line.map_or_else(
            || format!("returned {} characters", thousands(result_chars)),
            str::to_string,
        )),
    })
}

/// A result seen before in this turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repeat {
    /// Not seen before: shown as it arrived.
    New,
    /// Identical to a result the turn still shows: one line names it.
    StillShown { earlier_call: String, line: String },
    /// Identical to a result since replaced by its line: shown again, and
    /// the earlier one is named.
    ShownAgain { earlier_call: String },
}

/// The results a turn has read, by the digest of their content.
#[derive(Debug, Default)]
pub struct TurnResults {
    by_content: HashMap<[u8; 32], Seen>,
    by_call: HashMap<String, [u8; 32]>,
}

#[derive(Debug)]
struct Seen {
    call: String,
    replaced: bool,
}

impl TurnResults {
    /// Records the result of `call` and says whether it repeats one.
    /// `content` is the result's content: its whole text, or for a
    /// supersedable tool the part it names as content (a page's body,
    /// whatever address served it).
    pub fn record(&mut self, call: &str, tool: &ToolRef, content: &str) -> Repeat {
        let digest: [u8; 32] = Sha256::digest(content.as_bytes()).into();
        let repeat = match self.by_content.get(&digest) {
            None => Repeat::New,
            Some(seen) if !seen.replaced => Repeat::StillShown {
                earlier_call: seen.call.clone(),
                line: format!(
                    "[{tool}: the same result as call {}, still shown above]",
                    seen.call
                ),
            },
            Some(seen) => Repeat::ShownAgain {
                earlier_call: seen.call.clone(),
            },
        };
        if !matches!(repeat, Repeat::StillShown { .. }) {
            self.by_content.insert(
                digest,
                Seen {
                    call: call.to_string(),
                    replaced: false,
                },
            );
        }
        self.by_call.insert(call.to_string(), digest);
        repeat
    }

    /// Relief under pressure replaced `call`'s result with its line (§3.8).
    pub fn replaced(&mut self, call: &str) {
        if let Some(digest) = self.by_call.get(call)
            && let Some(seen) = self.by_content.get_mut(digest)
            && seen.call == call
        {
            seen.replaced = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetch() -> ToolRef {
        ToolRef::new("web", "fetch")
    }

    #[test]
    fn s3_8_a_tools_own_line_replays_it() {
        assert_eq!(
            replay_line(
                &fetch(),
                "long page",
                Some("[read https://example.com, 9 KB]")
            ),
            "[read https://example.com, 9 KB]"
        );
    }

    #[test]
    fn s3_8_a_long_result_without_a_line_replays_as_its_tool_and_size() {
        let text = "x".repeat(12_345);
        assert_eq!(
            replay_line(&fetch(), &text, None),
            "[web::fetch returned 12,345 characters]"
        );
        let short = "y".repeat(KEEP_WHOLE_CHARS);
        assert_eq!(
            replay_line(&fetch(), &short, None),
            short,
            "2,000 is kept whole"
        );
    }

    #[test]
    fn s3_8_an_identical_result_still_shown_costs_one_line() {
        let mut results = TurnResults::default();
        assert_eq!(results.record("c1", &fetch(), "body"), Repeat::New);
        assert_eq!(
            results.record("c2", &fetch(), "body"),
            Repeat::StillShown {
                earlier_call: "c1".into(),
                line: "[web::fetch: the same result as call c1, still shown above]".into()
            }
        );
        assert_eq!(results.record("c3", &fetch(), "other"), Repeat::New);
    }

    #[test]
    fn s3_8_an_identical_result_since_replaced_is_shown_again_naming_the_earlier() {
        let mut results = TurnResults::default();
        results.record("c1", &fetch(), "body");
        results.replaced("c1");
        assert_eq!(
            results.record("c2", &fetch(), "body"),
            Repeat::ShownAgain {
                earlier_call: "c1".into()
            }
        );
        // c2 is now the one shown: a third read names c2.
        assert_eq!(
            results.record("c3", &fetch(), "body"),
            Repeat::StillShown {
                earlier_call: "c2".into(),
                line: "[web::fetch: the same result as call c2, still shown above]".into()
            }
        );
    }
}
