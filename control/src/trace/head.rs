//! A trace's head (§8.3): the turn's own record, every item the section
//! lists, each said even where the store holds nothing for it, so no item
//! is silently left out.

use std::fmt::Write as _;

use chrono::TimeZone as _;
use collegium_web_page::thousands;

use super::{Reader, TurnTrace, fence};
use crate::store::{Millis, PostOfTurn};

/// How the named post belongs to the turn.
pub fn relation(relation: &PostOfTurn) -> String {
    match relation {
        PostOfTurn::Wrote => "it wrote the post".to_string(),
        PostOfTurn::Answered(how) => format!("it answered the post ({})", how_taken(how)),
    }
}

fn how_taken(how: &str) -> &'static str {
    match how {
        "start" => "the post that started it",
        "debounce" => "gathered while it debounced",
        "queue" => "taken from its queue",
        "fold" => "folded in mid-turn",
        "handoff" => "handed to it by a colleague's turn",
        _ => "taken some other way",
    }
}

/// A time to the second in the operator's timezone.
pub fn at(at: Millis, timezone: chrono_tz::Tz) -> String {
    match timezone.timestamp_millis_opt(at).single() {
        Some(time) => time.format("%Y-%m-%d %H:%M:%S %Z").to_string(),
        None => at.to_string(),
    }
}

/// A span in seconds, to the millisecond.
pub fn span(ms: Millis) -> String {
    format!("{}.{:03} s", ms / 1000, (ms % 1000).abs())
}

fn tokens(n: i64) -> String {
    thousands(usize::try_from(n).unwrap_or_default())
}

pub fn render(out: &mut String, post_id: &str, trace: &TurnTrace, reader: &Reader<'_>) {
    let h = &trace.head;
    let _ = writeln!(
        out,
        "**Trace of {}'s turn {}** ({}; {}) — {} {post_id}.",
        (reader.name)(&h.agent),
        h.id,
        h.model,
        match h.exit_kind.as_deref() {
            Some(exit) => format!("ended as {exit}"),
            None => "still running".to_string(),
        },
        relation(&trace.relation),
    );
    let _ = writeln!(out, "- Started by: {}", cause(trace));
    let _ = writeln!(out, "- Posts it answers: {}", answers(trace));
    let _ = writeln!(
        out,
        "- Drain began from: {}",
        match (h.cause.as_str(), &h.drain_from_post_id) {
            (_, Some(post)) => format!("post {post}"),
            ("drain", None) => "not recorded for this drain".to_string(),
            _ => "not a drain".to_string(),
        }
    );
    let steers = trace
        .events
        .iter()
        .filter(|e| e.kind == crate::store::TraceKind::Steer)
        .count();
    let _ = writeln!(
        out,
        "- Steered: {}",
        match (h.steered, steers) {
            (false, _) => "no steer reached it".to_string(),
            (true, 0) => "yes (the steer's event was not recorded)".to_string(),
            (true, n) => format!("yes, {n} steer{} (below)", plural(n)),
        }
    );
    let _ = writeln!(out, "- Owed reply (§3.15): {}", owed(trace));
    let _ = writeln!(
        out,
        "- Asked to end the turn at a unit post: {}",
        end_turn_asks(trace)
    );
    let _ = writeln!(out, "- Timing: {}", timing(trace, reader));
    let _ = writeln!(
        out,
        "- Actions: {} (chain depth {}, turn {} of the chain rooted at {})",
        h.action_count, h.depth, h.chain_length, h.chain_root
    );
    let _ = writeln!(out, "- Context last assembled: {}", context(trace, reader));
    let _ = writeln!(out, "- Tokens: {}", usage(trace));
    let _ = writeln!(
        out,
        "- Cost: {}",
        match h.cost_micro_usd {
            Some(micro) => format!(
                "${}.{:06} as the provider reported it",
                micro / 1_000_000,
                (micro % 1_000_000).abs()
            ),
            None => "the provider reported none".to_string(),
        }
    );
    parked(out, trace, reader);
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What started the turn, in §8.3's words, with the post it answers.
fn cause(trace: &TurnTrace) -> String {
    let h = &trace.head;
    let what = match h.cause.as_str() {
        "post" => "a post addressing an idle agent",
        "drain" => "its queue drained as its previous turn here ended",
        "handoff" => "a colleague's turn that addressed it ending or parking (§5.2)",
        "trigger" => "a trigger (§4.2)",
        "reconnect" => "posts a reconnect recovered",
        "sweep" => "the boot or resume sweep (§7.3)",
        other => other,
    };
    let mut line = what.to_string();
    if h.cause == "trigger" {
        // The row's trigger id where recorded, else the trigger whose
        // announcement the turn answers.
        let announced = trace.answered.iter().find_map(|a| a.announces_trigger);
        match (&h.trigger_id, announced) {
            (Some(id), _) => {
                let _ = write!(line, ", trigger {id}");
            }
            (None, Some(id)) => {
                let _ = write!(line, ", {}", crate::store::trigger_label(id));
            }
            (None, None) => {
                line.push_str(" (neither the turn's row nor the posts it answers name the trigger)")
            }
        }
    }
    match &h.answers_post_id {
        Some(post) => {
            let _ = write!(line, "; it answers post {post}");
        }
        None => line.push_str("; it answers no post"),
    }
    line
}

fn answers(trace: &TurnTrace) -> String {
    if trace.answered.is_empty() {
        return "none recorded".to_string();
    }
    trace
        .answered
        .iter()
        .map(|a| {
            let by = match (&a.author_name, a.announces_trigger) {
                (_, Some(id)) => {
                    format!(", the announcement of {}", crate::store::trigger_label(id))
                }
                (Some(name), _) => format!(", by {name}"),
                (None, _) => ", not in the store".to_string(),
            };
            format!("{} ({}{by})", a.post_id, how_taken(&a.how))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// §3.15: a turn that handed work on owes a reply where a post it answers
/// is a person's, a trigger's announcement, or a plain post of a colleague
/// other than the one its unit post addressed, or where a person steered it.
fn owed(trace: &TurnTrace) -> String {
    if trace.unit_posts.is_empty() {
        return "it handed no work on (it wrote no unit post), so the question does not arise"
            .to_string();
    }
    let addressed: Vec<String> = trace
        .unit_posts
        .iter()
        .flat_map(|(_, message)| mentions(message))
        .collect();
    let mut why = Vec::new();
    for a in &trace.answered {
        let name = a.author_name.clone().unwrap_or_default();
        match (a.author_kind.as_deref(), a.role.as_deref()) {
            _ if a.announces_trigger.is_some() => {
                why.push(format!("post {} announces a trigger", a.post_id))
            }
            (Some("person"), _) => why.push(format!("post {} is {name}'s, a person's", a.post_id)),
            (Some("agent"), Some("post" | "reply"))
                if !addressed.contains(&name.to_lowercase()) =>
            {
                why.push(format!(
                    "post {} is a plain post of {name}, whom its unit post did not address",
                    a.post_id
                ));
            }
            _ => {}
        }
    }
    if trace.head.steered {
        why.push("a person steered it".to_string());
    }
    if why.is_empty() {
        "it handed work on and owed no reply".to_string()
    } else {
        format!("it handed work on and owed a reply: {}", why.join("; "))
    }
}

/// The `endTurn` asks of the turn's unit posts as the runner's gate
/// recorded them, each granted or refused with the reason the model read
/// (§3.15, `turns/runner/units.rs`).
fn end_turn_asks(trace: &TurnTrace) -> String {
    let asks: Vec<String> = trace
        .events
        .iter()
        .filter(|e| e.kind == crate::store::TraceKind::Note)
        .filter_map(|e| {
            let detail: serde_json::Value = serde_json::from_str(e.detail.as_deref()?).ok()?;
            let call = e.call_id.as_deref().unwrap_or("a call");
            match detail.get("end_turn")?.as_str()? {
                "granted" => Some(format!("granted at {call}")),
                _ => Some(format!(
                    "refused at {call}: {}",
                    detail
                        .get("reason")
                        .and_then(|r| r.as_str())
                        .unwrap_or("no reason recorded")
                )),
            }
        })
        .collect();
    if asks.is_empty() {
        "none was made".to_string()
    } else {
        asks.join("; ")
    }
}

/// The usernames a message names with `@`, lowercased.
fn mentions(message: &str) -> Vec<String> {
    message
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '@' | '.' | '_' | '-')))
        .filter_map(|w| w.strip_prefix('@'))
        .map(|w| w.trim_end_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn timing(trace: &TurnTrace, reader: &Reader<'_>) -> String {
    let h = &trace.head;
    let started = at(h.started_at, reader.timezone);
    match h.ended_at {
        Some(end) => {
            let by = h
                .ended_by
                .as_deref()
                .map(|p| format!(" at @{p}'s command"))
                .unwrap_or_default();
            format!(
                "started {started}, ran {}, ended {}{by}",
                span(end - h.started_at),
                at(end, reader.timezone)
            )
        }
        None => format!(
            "started {started}, running for {} so far",
            span(reader.now - h.started_at)
        ),
    }
}

fn context(trace: &TurnTrace, reader: &Reader<'_>) -> String {
    let h = &trace.head;
    let Some(when) = h.context_assembled_at else {
        return "never: the turn assembled no context".to_string();
    };
    let reach = match (&h.context_reach_post_id, trace.reach_at) {
        (Some(post), Some(written)) => format!(
            "the window reached back to post {post}, written {}",
            at(written, reader.timezone)
        ),
        (Some(post), None) => {
            format!("the window reached back to post {post} (no longer in the store)")
        }
        (None, _) => "the window held no post".to_string(),
    };
    let charged = match h.context_charged_tokens {
        Some(n) => format!("the budget charged {} tokens for it (§3.8)", tokens(n)),
        None => "what the budget charged was not recorded".to_string(),
    };
    format!("{}; {reach}; {charged}", at(when, reader.timezone))
}

fn usage(trace: &TurnTrace) -> String {
    let h = &trace.head;
    let share = if h.prompt_tokens > 0 {
        format!(
            "{}%",
            h.cached_prompt_tokens.saturating_mul(100) / h.prompt_tokens
        )
    } else {
        "none".to_string()
    };
    format!(
        "prompt {}, of which the provider's cache served {} ({share}) and {} were written to it; completion {}, of which {} reasoning (counted, never shown: §3.12)",
        tokens(h.prompt_tokens),
        tokens(h.cached_prompt_tokens),
        tokens(h.cache_write_tokens),
        tokens(h.completion_tokens),
        tokens(h.reasoning_tokens),
    )
}

/// A turn waiting on a person says on what, since when, and its prompt
/// (§8.4).
fn parked(out: &mut String, trace: &TurnTrace, reader: &Reader<'_>) {
    for (decision, since) in &trace.parked {
        let on = match (decision.kind.as_str(), decision.tool.as_deref()) {
            ("ask", _) => "an answer to its question".to_string(),
            ("extension", _) => "a decision on extending its action budget".to_string(),
            (_, Some(tool)) => format!("a decision on its approval prompt for `{tool}`"),
            _ => "a person's decision on its prompt".to_string(),
        };
        let post = decision
            .prompt_post_id
            .as_deref()
            .map_or_else(|| "not yet posted".to_string(), |p| format!("post {p}"));
        let _ = writeln!(
            out,
            "- Parked: waiting on {on} since {} (prompt {post}); the prompt as the person was shown it:\n{}",
            at(*since, reader.timezone),
            fence(&decision.payload)
        );
    }
}
