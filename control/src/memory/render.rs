//! Every text memory shows the model (§3.6): the listing after the window,
//! a body read back with its ages, and the disclosure a write or revision
//! returns. The listing holds no age and no date, so it reads the same a day
//! later and the prompt changes only when the entries do.

use std::fmt::Write as _;

use chrono::TimeZone;

use crate::store::{ListedMemory, MemoryEntry, Millis};

use super::Caps;
use super::edit::{Fault, Passage};
use collegium_web_page::thousands;

/// How long ago `then` was, in the largest whole unit that fits.
pub fn age(now: Millis, then: Millis) -> String {
    let minutes = (now - then).max(0) / 60_000;
    let plural = |n: i64, unit: &str| format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" });
    match minutes {
        0 => "less than a minute ago".into(),
        1..=59 => plural(minutes, "minute"),
        60..=2_879 => plural(minutes / 60, "hour"),
        _ => plural(minutes / 1_440, "day"),
    }
}

/// The day `at` fell on, in the operator's timezone.
pub fn date(at: Millis, timezone: chrono_tz::Tz) -> String {
    timezone
        .timestamp_millis_opt(at)
        .single()
        .map(|t| t.format("%A %-d %B %Y").to_string())
        .unwrap_or_default()
}

/// A body's size against its cap.
pub fn body_size(body: &str, caps: &Caps) -> String {
    format!(
        "Body: {} of {} characters.",
        thousands(body.chars().count()),
        thousands(caps.max_body_chars)
    )
}

/// The listing in the framework's message (§3.6, §3.8): a count against
/// the cap, then each description by its reference, in the order written.
pub fn listing(entries: &[ListedMemory], caps: &Caps) -> String {
    let mut out = format!(
        "Your memories: {} of at most {}.",
        entries.len(),
        caps.max_entries
    );
    if entries.is_empty() {
        out.push_str(" You keep none yet.");
    }
    for entry in entries {
        let _ = write!(out, "\n- {}: {}", entry.reference(), entry.description);
    }
    out
}

/// A body read back: its ages and written-at date above the text (§3.6).
pub fn body_view(entry: &MemoryEntry, now: Millis, timezone: chrono_tz::Tz, caps: &Caps) -> String {
    let mut out = format!(
        "Memory {} — {}\nWritten {}, on {}.",
        entry.reference(),
        entry.description,
        age(now, entry.written_at),
        date(entry.written_at, timezone)
    );
    if let Some(revised) = entry.last_revised_at {
        let _ = write!(
            out,
            " Revised {} (last {}); this is revision {}.",
            times(entry.revisions()),
            age(now, revised),
            entry.revision
        );
    }
    let _ = write!(out, "\n{}\n\n{}", body_size(&entry.body, caps), entry.body);
    out
}

fn times(n: i64) -> String {
    match n {
        1 => "once".into(),
        2 => "twice".into(),
        n => format!("{n} times"),
    }
}

/// A quoted text for a disclosure, delimited so its lines cannot be read as
/// the framework's.
fn quoted(label: &str, text: &str) -> String {
    format!("{label}:\n<<<\n{text}\n>>>")
}

/// The result of a write: the disclosure (§3.6), the body against its cap,
/// the count against its cap, and what it evicted.
pub fn written(entry: &MemoryEntry, evicted: &[MemoryEntry], count: u64, caps: &Caps) -> String {
    let mut out = format!(
        "Kept memory {} — {}\n{} Memories: {count} of at most {}.",
        entry.reference(),
        entry.description,
        body_size(&entry.body, caps),
        caps.max_entries
    );
    for gone in evicted {
        let _ = write!(
            out,
            "\nAt the cap, this write evicted {} — {} — the memory read longest ago.\n{}",
            gone.reference(),
            gone.description,
            quoted("Its body was", &gone.body)
        );
    }
    let _ = write!(out, "\n{}", quoted("Body", &entry.body));
    out
}

/// The line later turns read in place of a write's result (§3.8): what was
/// kept and what it evicted.
pub fn written_line(entry: &MemoryEntry, evicted: &[MemoryEntry]) -> String {
    let mut line = format!("[kept memory {} — {}", entry.reference(), entry.description);
    for gone in evicted {
        let _ = write!(
            line,
            "; evicted {} — {}",
            gone.reference(),
            gone.description
        );
    }
    line.push(']');
    line
}

/// What a revision replaced, for the disclosure and the trace (§3.6).
pub enum Superseded<'a> {
    Appended(&'a str),
    Passages(&'a [Passage]),
    WholeBody(&'a str),
}

/// The result of a revision: its count, what it replaced, the body against
/// its cap, and the body as it now stands.
pub fn revised(
    entry: &MemoryEntry,
    before: &MemoryEntry,
    superseded: &Superseded<'_>,
    caps: &Caps,
) -> String {
    let mut out = format!(
        "Revised memory {} — revision {}, its {} revision.",
        entry.reference(),
        entry.revision,
        ordinal(entry.revisions())
    );
    match superseded {
        Superseded::Appended(text) => {
            let _ = write!(out, "\n{}", quoted("Appended", text));
        }
        Superseded::Passages(passages) => {
            for (n, passage) in passages.iter().enumerate() {
                let _ = write!(
                    out,
                    "\n{}\n{}",
                    quoted(&format!("Passage {} replaced", n + 1), &passage.find),
                    quoted("With", &passage.replace)
                );
            }
        }
        Superseded::WholeBody(old) => {
            let _ = write!(out, "\n{}", quoted("The whole body it replaced", old));
        }
    }
    if entry.description != before.description {
        let _ = write!(
            out,
            "\nDescription replaced: was “{}”, now “{}”.",
            before.description, entry.description
        );
    }
    let _ = write!(
        out,
        "\n{}\n{}",
        body_size(&entry.body, caps),
        quoted("Body", &entry.body)
    );
    out
}

/// The line later turns read in place of a revision's result.
pub fn revised_line(tool: &str, entry: &MemoryEntry) -> String {
    format!(
        "[{tool} revised memory {} — {} (revision {})]",
        entry.reference(),
        entry.description,
        entry.revision
    )
}

fn ordinal(n: i64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// A reference that names none of the agent's entries (§3.6).
pub fn gone(reference: &str) -> String {
    format!(
        "{reference} names no memory of yours. It may have been deleted. Memories are private: another agent's are never reachable. The framework's message lists the memories you hold."
    )
}

/// A reference that matches two or more entries: never a guess (§3.6).
pub fn ambiguous(reference: &str, found: &[MemoryEntry]) -> String {
    let listed: Vec<String> = found
        .iter()
        .map(|e| format!("m{} — {}", e.key, e.description))
        .collect();
    format!(
        "{reference} matches {} memories, so nothing was done: {}. Call again with one of these longer references.",
        found.len(),
        listed.join("; ")
    )
}

/// A description or body over its cap: refused with its size, never cut.
pub fn over_cap(what: &str, chars: usize, cap: usize) -> String {
    format!(
        "Nothing was stored: the {what} is {} characters, over the cap of {}. Nothing was cut. Make it shorter and call again.",
        thousands(chars),
        thousands(cap)
    )
}

/// A revision refused at the body cap: what the entry holds and what the
/// change would make it, since the room is made in this entry (§3.6).
pub fn revision_over_cap(entry: &MemoryEntry, would_be: usize, caps: &Caps) -> String {
    format!(
        "Nothing was changed: memory {} holds {} characters, and this change would make it {}, over the cap of {}. Make room in this memory — replace passages with shorter ones or rewrite it shorter — rather than keep a second memory beside it.",
        entry.reference(),
        thousands(entry.body.chars().count()),
        thousands(would_be),
        thousands(caps.max_body_chars)
    )
}

/// Why a replace applied nothing: first, where the turn has not read the
/// revision it quoted from, that it has not (§3.6); then each passage.
pub fn replace_refused(
    entry: &MemoryEntry,
    seen: Option<i64>,
    passages: &[Passage],
    faults: &[Fault],
) -> String {
    let mut out = String::new();
    if seen != Some(entry.revision) {
        let _ = write!(out, "{} ", not_seen(entry, seen));
    }
    out.push_str(
        "Nothing was changed: none of this call's edits applied, since a replace is all or none.",
    );
    for fault in faults {
        let line = match fault {
            Fault::Found { index, times: 0 } => format!(
                "Passage {} (“{}”) is not in the body.",
                index + 1,
                passages[*index].find
            ),
            Fault::Found { index, times } => format!(
                "Passage {} (“{}”) is in the body {times} times; quote more of it so it names one place.",
                index + 1,
                passages[*index].find
            ),
            Fault::Overlaps { index, earlier } => format!(
                "Passage {} overlaps passage {}; quote them as one passage.",
                index + 1,
                earlier + 1
            ),
        };
        let _ = write!(out, "\n{line}");
    }
    out
}

/// That the turn has not seen the entry's current revision.
pub fn not_seen(entry: &MemoryEntry, seen: Option<i64>) -> String {
    match seen {
        None => format!(
            "This turn has not read memory {}, now at revision {}.",
            entry.reference(),
            entry.revision
        ),
        Some(seen) => format!(
            "Memory {} was revised since this turn saw it: you saw revision {seen}, and it is now at revision {}.",
            entry.reference(),
            entry.revision
        ),
    }
}

/// A delete or rewrite of an entry the turn has not seen as it stands
/// (§3.6): it names the read to make.
pub fn unseen_refusal(action: &str, entry: &MemoryEntry, seen: Option<i64>, reads: bool) -> String {
    let remedy = if reads {
        format!(
            "memory::read {} first, then {action} it if that is still right.",
            entry.reference()
        )
    } else {
        format!("Only a turn that has seen its current revision may {action} it.")
    };
    format!(
        "Nothing was changed: {} A {action} would discard what you have not read. {remedy}",
        not_seen(entry, seen)
    )
}

/// The result of a delete, naming what it discarded.
pub fn deleted(entry: &MemoryEntry) -> String {
    format!(
        "Deleted memory {} — {}\n{}",
        entry.reference(),
        entry.description,
        quoted("Its body was", &entry.body)
    )
}
