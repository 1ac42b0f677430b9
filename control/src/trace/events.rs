//! A trace's events (§8.3), each at its offset from the turn's start: a
//! completion with what the provider reported beside it, a result whole
//! with its mark and how the model read it, a rejected post with its
//! reason. The reasoning column is never read, so it cannot be shown
//! (§3.12).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::TurnTrace;
use super::head::span;
use crate::store::{TraceKind, TurnEvent};

/// `text` in a code block whose fence no run of backticks inside it can
/// close, so a result is shown whole and verbatim.
pub fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let ticks = "`".repeat((longest + 1).max(3));
    format!("{ticks}\n{text}\n{ticks}")
}

pub fn render(out: &mut String, trace: &TurnTrace) {
    let _ = writeln!(out, "\n**Events** ({}):", trace.events.len());
    if trace.events.is_empty() {
        out.push_str("none recorded.\n");
    }
    let relieved = relieved(&trace.events);
    for event in &trace.events {
        let offset = format!("+{}", span(event.at - trace.head.started_at));
        let detail: Value = event
            .detail
            .as_deref()
            .and_then(|d| serde_json::from_str(d).ok())
            .unwrap_or(Value::Null);
        let _ = match event.kind {
            TraceKind::Completion => completion(out, &offset, event, &detail),
            TraceKind::Result => result(out, &offset, event, &detail, &relieved),
            TraceKind::RejectedPost => writeln!(
                out,
                "{offset} · post rejected (§4.5), the model told why and asked again: {}\n{}",
                text_of(&detail["reason"]),
                fence(event.content.as_deref().unwrap_or_default())
            ),
            TraceKind::Steer => writeln!(
                out,
                "{offset} · steer from @{}{}: “{}”",
                detail["by"].as_str().unwrap_or("someone"),
                aborted(&detail),
                event.content.as_deref().unwrap_or_default()
            ),
            TraceKind::Fold => writeln!(
                out,
                "{offset} · started over to fold in posts by {}{}",
                event.content.as_deref().unwrap_or_default(),
                aborted(&detail)
            ),
            TraceKind::Call => writeln!(
                out,
                "{offset} · call {} `{}` with {}",
                event.call_id.as_deref().unwrap_or("?"),
                event.tool.as_deref().unwrap_or("?"),
                event.arguments.as_deref().unwrap_or("no arguments")
            ),
            TraceKind::Note => writeln!(
                out,
                "{offset} · note: {}",
                event.content.as_deref().unwrap_or_default()
            ),
        };
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "not recorded".to_string(),
        other => other.to_string(),
    }
}

/// An aborted completion's estimate, beside the event that cut it; no
/// total counts it (§8.2).
fn aborted(detail: &Value) -> String {
    let usage = &detail["aborted_completion"];
    if usage.is_null() {
        return String::new();
    }
    format!(
        " (it cut a completion in flight: an estimated {} prompt and {} completion tokens, in no total)",
        usage["prompt_tokens"], usage["completion_tokens"]
    )
}

fn completion(
    out: &mut String,
    offset: &str,
    event: &TurnEvent,
    detail: &Value,
) -> std::fmt::Result {
    let usage = &detail["usage"];
    let reported = if usage.is_null() {
        "no usage recorded".to_string()
    } else if usage["estimated"].as_bool() == Some(true) {
        format!(
            "nothing reported; estimated {} prompt and {} completion tokens, in no total",
            usage["prompt_tokens"], usage["completion_tokens"]
        )
    } else {
        let mut line = format!(
            "reported prompt {} ({} cached), completion {}",
            usage["prompt_tokens"], usage["cached_prompt_tokens"], usage["completion_tokens"]
        );
        if let Some(reasoning) = usage["reasoning_tokens"].as_u64() {
            let _ = write!(line, " ({reasoning} reasoning)");
        }
        if let Some(cost) = usage["cost_micro_usd"].as_i64() {
            let _ = write!(line, ", cost {cost} µUSD");
        }
        line
    };
    let upstream = detail["upstream"].as_str().map_or_else(
        || "no upstream named".to_string(),
        |u| format!("upstream {u}"),
    );
    let relief = relief(&detail["relief"]);
    let finish = detail["finish"].as_str().unwrap_or("finish not recorded");
    writeln!(
        out,
        "{offset} · completion ({finish}) · {reported} · {upstream} · {relief}"
    )?;
    if let Some(text) = event.content.as_deref().filter(|t| !t.is_empty()) {
        writeln!(out, "  wrote: {}", text.replace('\n', "\n  "))?;
    }
    for call in detail["calls"].as_array().into_iter().flatten() {
        writeln!(
            out,
            "  called {} `{}` with {}",
            call["id"].as_str().unwrap_or("?"),
            call["name"].as_str().unwrap_or("?"),
            call["arguments"].as_str().unwrap_or("{}")
        )?;
    }
    Ok(())
}

/// Whether relief edited the prompt since the completion before (§3.8).
fn relief(relief: &Value) -> String {
    let count = |key: &str| relief[key].as_object().map_or(0, serde_json::Map::len);
    if relief.is_null() {
        return "relief: not recorded for this completion".to_string();
    }
    match (count("stood_in"), count("shortened")) {
        (0, 0) => "relief: none since the completion before".to_string(),
        (stood, short) => format!(
            "relief edited the prompt since the completion before: {stood} result{} replaced by {}line, {short} shortened",
            if stood == 1 { "" } else { "s" },
            if stood == 1 { "its " } else { "their " },
        ),
    }
}

/// What relief did to each result, by call id, read once from every
/// completion's event: the first edit names it (§3.8).
fn relieved(events: &[TurnEvent]) -> HashMap<String, String> {
    let mut relieved = HashMap::new();
    for event in events.iter().filter(|e| e.kind == TraceKind::Completion) {
        let Some(detail) = event.detail.as_deref() else {
            continue;
        };
        let Ok(detail) = serde_json::from_str::<Value>(detail) else {
            continue;
        };
        for (key, how) in [
            ("stood_in", "replaced by its line once read"),
            ("shortened", "shortened by relief"),
        ] {
            for (call, reference) in detail["relief"][key].as_object().into_iter().flatten() {
                relieved.entry(call.clone()).or_insert_with(|| {
                    format!(
                        "{how} (reference {}), whole below",
                        reference.as_str().unwrap_or("not recorded")
                    )
                });
            }
        }
    }
    relieved
}

fn result(
    out: &mut String,
    offset: &str,
    event: &TurnEvent,
    detail: &Value,
    relieved: &HashMap<String, String>,
) -> std::fmt::Result {
    let call = event.call_id.as_deref().unwrap_or("?");
    let mark = detail["action"]
        .as_str()
        .map_or_else(|| "its line was not recorded".to_string(), str::to_string);
    writeln!(
        out,
        "{offset} · result of {call} `{}` with {} · {mark} · {}",
        event.tool.as_deref().unwrap_or("?"),
        event.arguments.as_deref().unwrap_or("no arguments"),
        read_how(detail, relieved.get(call))
    )?;
    writeln!(
        out,
        "{}",
        fence(event.content.as_deref().unwrap_or_default())
    )
}

/// How the model read a result: whole, as a view of its first part, or
/// replaced by its line once read (§3.8), with the reference it was given.
fn read_how(detail: &Value, after: Option<&String>) -> String {
    let view = detail["reference"]
        .as_str()
        .map(|r| format!("the model read a view of its first part (reference {r}), whole below"));
    match (view, after) {
        (Some(view), Some(after)) => format!("{view}; later {after}"),
        (Some(view), None) => view,
        (None, Some(after)) => format!("the model read it whole, then it was {after}"),
        (None, None) if detail["action"].is_null() => {
            "recorded before views were kept: as the model read it, cut as it was then".to_string()
        }
        (None, None) => "the model read it whole".to_string(),
    }
}
