//! The demo mode's answers: replies and tool calls that show Collegium's
//! machinery to a person trying it, each saying plainly that it is scripted
//! and no language model wrote it.

use serde_json::{Value, json};

use crate::WireKind;
use crate::script::{Scripted, ScriptedCall};

/// The newest thing said to the model: a tool's result, or a person's words.
enum Last {
    ToolResult(String),
    Words(String),
}

fn last(wire: WireKind, request: &Value) -> Last {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let Some(message) = messages.last() else {
        return Last::Words(String::new());
    };
    let text_of = |content: &Value| match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str().or_else(|| b["content"].as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let is_tool_result = match wire {
        WireKind::Anthropic => message["content"]
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result")),
        _ => message["role"] == "tool",
    };
    if is_tool_result {
        Last::ToolResult(text_of(&message["content"]))
    } else {
        Last::Words(text_of(&message["content"]))
    }
}

/// The name of an offered tool ending in `suffix` (`builtins__now`).
fn offered(wire: WireKind, request: &Value, suffix: &str) -> Option<String> {
    request["tools"].as_array()?.iter().find_map(|tool| {
        let name = match wire {
            WireKind::Anthropic => tool["name"].as_str(),
            _ => tool["function"]["name"].as_str(),
        }?;
        name.ends_with(suffix).then(|| name.to_string())
    })
}

fn excerpt(text: &str, limit: usize) -> String {
    let words: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if words.chars().count() <= limit {
        words
    } else {
        format!("{}…", words.chars().take(limit).collect::<String>())
    }
}

pub fn answer(wire: WireKind, request: &Value) -> Scripted {
    let text = match last(wire, request) {
        Last::ToolResult(result) => format!(
            "(Scripted demo reply, not a language model.) The tool answered: {}. A real model would now use that to answer you.",
            excerpt(&result, 200)
        ),
        Last::Words(words) => {
            let asks_time = ["time", "date", "clock"]
                .iter()
                .any(|w| words.to_lowercase().contains(w));
            if let (true, Some(tool)) = (
                asks_time,
                offered(wire, request, "__now").or_else(|| offered(wire, request, "now")),
            ) {
                return Scripted {
                    text: Some("(Scripted demo.) Let me read the clock.".into()),
                    tool_calls: vec![ScriptedCall {
                        name: tool,
                        arguments: json!({}),
                        raw_arguments: None,
                    }],
                    ..Scripted::default()
                };
            }
            format!(
                "(Scripted demo reply, not a language model.) I received: \"{}\". Ask me the time to see a tool call and its status post.",
                excerpt(&words, 160)
            )
        }
    };
    Scripted {
        text: Some(text),
        ..Scripted::default()
    }
}
