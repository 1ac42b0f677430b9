//! One call of `collegium audit show` as a readable line, or as the JSON
//! object `--json` prints for log shippers (field names documented in
//! docs/audit.md and held by a test: renaming one breaks a shipper).

use chrono::{DateTime, Utc};
use collegium_worker_kit::audit::Line;
use serde_json::{Value, json};

use super::filter::outcome_name;
use super::join::{Approval, ApprovalLookup, ArgumentsLookup};
use super::site::Site;
use crate::store::{ChannelKind, Millis};

/// How many characters of the arguments a readable line carries; the rest
/// is counted where it is cut, and `--json` carries them whole.
pub const SUMMARY_CHARS: usize = 80;

/// A verified line with what the store adds to it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub line: Line,
    pub approval: ApprovalLookup,
    pub arguments: ArgumentsLookup,
}

fn utc(at: Millis) -> Option<DateTime<Utc>> {
    DateTime::<Utc>::from_timestamp_millis(at)
}

fn rfc3339(at: Millis) -> Value {
    utc(at).map_or(Value::Null, |t| {
        Value::from(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    })
}

/// Control characters written as escapes: one call is one line, whatever a
/// model or a worker put in a field.
fn plain(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// The arguments compacted to one line, cut at [`SUMMARY_CHARS`] with the
/// number of characters left out said.
pub fn summary(text: &str) -> String {
    let compact = serde_json::from_str::<Value>(text)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| plain(text));
    let total = compact.chars().count();
    if total <= SUMMARY_CHARS {
        return compact;
    }
    let kept: String = compact.chars().take(SUMMARY_CHARS).collect();
    format!("{kept}…(+{} chars)", total - SUMMARY_CHARS)
}

/// `~name` for a channel with a handle, the display name of a direct or
/// group message, the id of one the store never observed.
fn channel_words(approval: &Approval) -> String {
    match &approval.channel {
        Some(c) if !c.name.is_empty() => format!("~{}", c.name),
        Some(c) if matches!(c.kind, ChannelKind::Direct | ChannelKind::Group) => {
            format!("the message “{}”", plain(&c.display_name))
        }
        _ => format!("channel {}", approval.channel_id),
    }
}

fn approval_words(lookup: &ApprovalLookup, line: &Line, site: &Site) -> String {
    let id = plain(&line.record.decision);
    match lookup {
        ApprovalLookup::Ungated => "ungated".into(),
        ApprovalLookup::StoreNotGiven => format!("decision {id} (--store says who approved it)"),
        ApprovalLookup::NotInStore => format!("decision {id} is not in the store"),
        ApprovalLookup::Found(approval) => {
            let what = match (&approval.outcome, &approval.decided_by) {
                (Some(outcome), Some(by)) => {
                    format!("{} by @{}", outcome.replace('_', " "), plain(by))
                }
                (Some(outcome), None) => outcome.replace('_', " "),
                (None, _) => "still undecided".into(),
            };
            let when = approval
                .decided_at
                .and_then(utc)
                .map(|at| format!(" at {}", site.local(at)))
                .unwrap_or_default();
            let link = approval
                .prompt_post_id
                .as_deref()
                .map(|post| format!(" {}", site.permalink(post)))
                .unwrap_or_else(|| " (no prompt post recorded)".into());
            let kind = if approval.kind == "approval" {
                String::new()
            } else {
                format!(" ({})", approval.kind)
            };
            format!("{what}{when} in {}{kind}{link}", channel_words(approval))
        }
    }
}

fn arguments_words(lookup: &ArgumentsLookup, line: &Line) -> String {
    match lookup {
        ArgumentsLookup::StoreNotGiven => {
            let sha = &line.record.arguments_sha256;
            format!(
                "arguments sha256:{}",
                plain(sha.get(..12).unwrap_or(sha.as_str()))
            )
        }
        ArgumentsLookup::NotInStore => "arguments not in the store".into(),
        ArgumentsLookup::Found { text, matches } => {
            let flag = if *matches {
                ""
            } else {
                " [these do not hash to the log's arguments_sha256]"
            };
            format!("{}{flag}", summary(text))
        }
    }
}

/// `#seq  time  agent  tool  outcome  duration  arguments  approval
/// [— detail]`.
pub fn text(entry: &Entry, site: &Site) -> String {
    let line = &entry.line;
    let record = &line.record;
    let time = DateTime::parse_from_rfc3339(&line.time).map_or_else(
        |_| format!("{} (as written)", plain(&line.time)),
        |t| site.local(t.with_timezone(&Utc)),
    );
    let detail = if record.detail.is_empty() {
        String::new()
    } else {
        format!("  — {}", plain(&record.detail))
    };
    format!(
        "#{}  {time}  {}  {}  {}  {} ms  {}  {}{detail}",
        line.seq,
        plain(&record.agent),
        plain(&record.tool),
        outcome_name(record.outcome),
        record.duration_ms,
        arguments_words(&entry.arguments, line),
        approval_words(&entry.approval, line, site),
    )
}

/// The `--json` object: the log's own fields as the worker wrote them, then
/// what the store added.
pub fn json(entry: &Entry, site: &Site) -> Value {
    let line = &entry.line;
    let record = &line.record;
    let (arguments, arguments_match) = match &entry.arguments {
        ArgumentsLookup::Found { text, matches } => {
            (Value::from(text.as_str()), Value::from(*matches))
        }
        _ => (Value::Null, Value::Null),
    };
    let approval = match &entry.approval {
        ApprovalLookup::Found(a) => json!({
            "kind": a.kind,
            "outcome": a.outcome,
            "decided_by": a.decided_by,
            "requested_at": rfc3339(a.requested_at),
            "decided_at": a.decided_at.map_or(Value::Null, rfc3339),
            "channel_id": a.channel_id,
            "channel_name": a.channel.as_ref().map(|c| c.name.clone()),
            "channel_display_name": a.channel.as_ref().map(|c| c.display_name.clone()),
            "prompt_post_id": a.prompt_post_id,
            "permalink": a.prompt_post_id.as_deref().map(|p| site.permalink(p)),
        }),
        _ => Value::Null,
    };
    json!({
        "seq": line.seq,
        "time": line.time,
        "worker": line.worker,
        "agent": record.agent,
        "turn": record.turn,
        "call": record.call,
        "tool": record.tool,
        "outcome": outcome_name(record.outcome),
        "duration_ms": record.duration_ms,
        "detail": record.detail,
        "arguments_sha256": record.arguments_sha256,
        "arguments_lookup": entry.arguments.name(),
        "arguments": arguments,
        "arguments_match": arguments_match,
        "decision": (!record.decision.is_empty()).then_some(record.decision.as_str()),
        "approval_lookup": entry.approval.name(),
        "approval": approval,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i21_7_a_long_summary_says_how_much_it_left_out() {
        let long = format!("{{\"body\":\"{}\"}}", "x".repeat(200));
        let cut = summary(&long);
        assert!(cut.ends_with("…(+131 chars)"), "{cut}");
        assert_eq!(summary("{ \"to\" : \"ana\" }"), "{\"to\":\"ana\"}");
        assert_eq!(summary("not json\nat all"), "not json\\nat all");
    }
}
