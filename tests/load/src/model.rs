//! The model under load: it answers every turn after 0.2–3 s, one turn in
//! five first calling the fixture's ungated `read` (issue 21's load test).
//! Each choice follows from the request's content, so the same turn asked
//! again (a retry) is answered the same way.

use std::sync::Arc;

use model_sim::script::{Scripted, ScriptedCall};
use model_sim::{Responder, WireKind};
use serde_json::{Value, json};

use crate::rng::hash_text;

/// The reply every turn ends with: prose, addressing nobody (§4.5).
pub const REPLY: &str = "Noted, I will look into it.";

/// The slowest and quickest answers, in milliseconds.
const QUICKEST_MS: u64 = 200;
const SLOWEST_MS: u64 = 3_000;

pub fn responder() -> Responder {
    Arc::new(|wire: WireKind, request: &Value| Some(answer(wire, request)))
}

fn answer(wire: WireKind, request: &Value) -> Scripted {
    let empty = Vec::new();
    let messages = request["messages"].as_array().unwrap_or(&empty);
    let seed = hash_text(&request["messages"].to_string());
    let latency_ms = QUICKEST_MS + seed % (SLOWEST_MS - QUICKEST_MS + 1);
    let first_of_turn = wire != WireKind::Anthropic && !after_own_call(messages);
    if first_of_turn && seed.is_multiple_of(5) {
        return Scripted {
            tool_calls: vec![ScriptedCall {
                name: "fixture__read".into(),
                arguments: json!({"key": format!("item-{}", seed % 1_000)}),
                raw_arguments: None,
            }],
            latency_ms,
            ..Default::default()
        };
    }
    Scripted {
        text: Some(REPLY.into()),
        latency_ms,
        ..Default::default()
    }
}

/// Whether the request continues a turn whose last completion called a
/// tool: the newest assistant message carries calls and their results follow
/// it. A turn's first request ends on the people's posts instead.
fn after_own_call(messages: &[Value]) -> bool {
    let Some(last_assistant) = messages.iter().rposition(|m| m["role"] == "assistant") else {
        return false;
    };
    let calls = messages[last_assistant]["tool_calls"]
        .as_array()
        .is_some_and(|c| !c.is_empty());
    calls
        && messages[last_assistant..]
            .iter()
            .any(|m| m["role"] == "tool")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(messages: Value) -> Value {
        json!({"model": "demo-model", "messages": messages})
    }

    #[test]
    fn a_request_after_the_turns_own_call_is_answered_with_the_reply() {
        let asked = request(json!([
            {"role": "system", "content": "You help."},
            {"role": "user", "content": "@mira look at item 4"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "fixture__read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "value"},
            {"role": "user", "content": "framework message"}
        ]));
        let answer = answer(WireKind::Openai, &asked);
        assert_eq!(answer.text.as_deref(), Some(REPLY));
        assert!(answer.tool_calls.is_empty());
        assert!((QUICKEST_MS..=SLOWEST_MS).contains(&answer.latency_ms));
    }

    #[test]
    fn about_one_turn_in_five_starts_with_a_call() {
        let calls = (0..2_000)
            .filter(|n| {
                let asked = request(json!([
                    {"role": "system", "content": "You help."},
                    {"role": "assistant", "content": REPLY},
                    {"role": "user", "content": format!("@mira look at item {n}")}
                ]));
                !answer(WireKind::Openai, &asked).tool_calls.is_empty()
            })
            .count();
        assert!((300..500).contains(&calls), "{calls} of 2000 turns called");
    }
}
