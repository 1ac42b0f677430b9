//! The demo mode's answers: replies and tool calls that show a person trying
//! Collegium what it is for — a write whose exact payload waits on their
//! decision (§3.7), a question only they can answer (§3.7a), a command run
//! as the agent's own OS user (§6.1) — each saying plainly that it is
//! scripted and no language model wrote it.
//!
//! What it does is read from the request alone, as a model's answer is: the
//! words of the posts the turn answers, or the result of the call it made
//! last. A tool is called only where the request offers it; otherwise the
//! reply names the grant that is missing.

use serde_json::{Value, json};

use crate::WireKind;
use crate::script::{Scripted, ScriptedCall};

/// The words that make the demo write a note through `workspace::write`.
pub const WRITE_PHRASE: &str = "write a note";
/// The words that make the demo ask a question through `ask::human`.
pub const ASK_PHRASE: &str = "ask me";
/// The words that make the demo run a command through `shell::run`.
pub const RUN_PHRASE: &str = "run a command";

/// The note's path in the agent's workspace.
pub const NOTE_PATH: &str = "demo-note.md";
/// The note, shown whole in the approval prompt before it is written.
pub const NOTE: &str = "# A note from the Collegium demo\n\nA person read this exact text in the approval prompt and approved it before workspace::write wrote it.\n";
/// The question `ask::human` puts to the person.
pub const QUESTION: &str = "Which day suits you for the team's review?";
/// The answers offered beside it; the person may always write their own.
pub const ANSWERS: &[&str] = &["Tuesday", "Thursday"];
/// The command `shell::run` runs: who it runs as, and where.
pub const COMMAND: &str = "id && pwd";

/// How every reply opens, so no one mistakes it for a model's.
const SCRIPTED: &str = "(Scripted demo reply, not a language model.)";

/// The newest thing said to the model.
#[derive(Debug, PartialEq)]
enum Last {
    /// The result of a call, with the called tool's name as the model sees
    /// it (empty where the request does not say).
    ToolResult { tool: String, text: String },
    /// The words of the posts the turn answers.
    Words(String),
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str().or_else(|| b["content"].as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn last(wire: WireKind, request: &Value) -> Last {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let Some(message) = messages.last() else {
        return Last::Words(String::new());
    };
    let result_of = match wire {
        WireKind::Anthropic => message["content"].as_array().and_then(|blocks| {
            blocks
                .iter()
                .find(|b| b["type"] == "tool_result")
                .map(|b| b["tool_use_id"].as_str().unwrap_or_default().to_string())
        }),
        _ => (message["role"] == "tool").then(|| {
            message["tool_call_id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        }),
    };
    match result_of {
        Some(id) => Last::ToolResult {
            tool: called(wire, &messages, &id),
            text: text_of(&message["content"]),
        },
        None => Last::Words(answered(&text_of(&message["content"]))),
    }
}

/// The name of the call `id` among the assistant's calls, newest first.
fn called(wire: WireKind, messages: &[Value], id: &str) -> String {
    let calls = messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| match wire {
            WireKind::Anthropic => m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| (b["id"].clone(), b["name"].clone()))
                .collect::<Vec<_>>(),
            _ => m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| (c["id"].clone(), c["function"]["name"].clone()))
                .collect(),
        });
    calls
        .into_iter()
        .find(|(call, _)| call == id)
        .and_then(|(_, name)| name.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The words of the posts a turn answers, from the framework's message,
/// which names each with an excerpt (§3.8); the whole text where a request
/// carries no such message, so the demo also answers a plain chat client.
/// Nothing else in that message — pins, the roster — is taken for a request.
fn answered(text: &str) -> String {
    const HEAD: &str = "Posts you answer now, oldest first:\n";
    let Some(start) = text.find(HEAD) else {
        return text.to_string();
    };
    let section = &text[start + HEAD.len()..];
    let end = section.find("\nToday is ").unwrap_or(section.len());
    // Each post is `- post ID by AUTHOR (WHERE): "EXCERPT"`, its excerpt
    // running on over the lines a multi-line post takes.
    section[..end]
        .lines()
        .map(|line| {
            let words = match line.strip_prefix("- post ") {
                Some(rest) => rest.split_once("): \"").map_or(rest, |(_, words)| words),
                None => line,
            };
            words.strip_suffix('"').unwrap_or(words)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The name of the offered tool `namespace::tool`, in the model's form.
fn offered(wire: WireKind, request: &Value, namespace: &str, tool: &str) -> Option<String> {
    let wanted = format!("{namespace}__{tool}");
    request["tools"].as_array()?.iter().find_map(|spec| {
        let name = match wire {
            WireKind::Anthropic => spec["name"].as_str(),
            _ => spec["function"]["name"].as_str(),
        }?;
        (name == wanted).then(|| name.to_string())
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

/// `text` as a Markdown code block whose fence the text cannot close.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{}\n{fence}", text.trim_end())
}

fn reply(text: String) -> Scripted {
    Scripted {
        text: Some(text),
        ..Scripted::default()
    }
}

/// A call to `namespace::tool` with `arguments`, where the request offers
/// it; otherwise a reply naming the grant it needs.
fn call_or_missing(
    wire: WireKind,
    request: &Value,
    (namespace, tool): (&str, &str),
    arguments: Value,
    beside: &str,
) -> Scripted {
    match offered(wire, request, namespace, tool) {
        Some(name) => Scripted {
            text: Some(beside.to_string()),
            tool_calls: vec![ScriptedCall {
                name,
                arguments,
                raw_arguments: None,
            }],
            ..Scripted::default()
        },
        None => {
            // The shell is granted only where the host was provisioned for
            // it, as root (§6.1): say so, or the missing grant reads as an
            // oversight.
            let why = if namespace == "shell" {
                " The shell runs each command as the agent's own OS user, which only a host provisioned as root has."
            } else {
                ""
            };
            reply(format!(
                "{SCRIPTED} That would take `{namespace}::{tool}`, and I do not hold it: my configuration does not grant me `{namespace}`.{why}"
            ))
        }
    }
}

pub fn answer(wire: WireKind, request: &Value) -> Scripted {
    match last(wire, request) {
        Last::ToolResult { tool, text } => reply(after(&tool, &text)),
        Last::Words(words) => {
            let said = words
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            if said.contains(WRITE_PHRASE) {
                call_or_missing(
                    wire,
                    request,
                    ("workspace", "write"),
                    json!({"path": NOTE_PATH, "content": NOTE}),
                    "(Scripted demo.) Writing a short note in my workspace; the write waits for a person's approval.",
                )
            } else if said.contains(RUN_PHRASE) {
                call_or_missing(
                    wire,
                    request,
                    ("shell", "run"),
                    json!({"command": COMMAND}),
                    "(Scripted demo.) Running a command as my own OS user; it waits for a person's approval.",
                )
            } else if said.contains(ASK_PHRASE) {
                call_or_missing(
                    wire,
                    request,
                    ("ask", "human"),
                    json!({"question": QUESTION, "answers": ANSWERS}),
                    "(Scripted demo.) I need a fact only you have.",
                )
            } else if ["time", "date", "clock"].iter().any(|w| said.contains(w))
                && offered(wire, request, "builtins", "now").is_some()
            {
                call_or_missing(
                    wire,
                    request,
                    ("builtins", "now"),
                    json!({}),
                    "(Scripted demo.) Let me read the clock.",
                )
            } else {
                reply(format!(
                    "{SCRIPTED} I received: \"{}\". Say \"{WRITE_PHRASE}\" to see an approval, \"{ASK_PHRASE}\" for a question, \"{RUN_PHRASE}\" for a shell command, or ask the time for a tool call and its status post.",
                    excerpt(&words, 160)
                ))
            }
        }
    }
}

/// The reply once the call's result is in: what happened, in the result's
/// own words.
fn after(tool: &str, result: &str) -> String {
    let shown = if tool.is_empty() {
        "the call".to_string()
    } else {
        format!("`{}`", tool.replacen("__", "::", 1))
    };
    if result.starts_with("The call did not run") {
        // A call that did not run says why in its result, a reasoned
        // denial among them (§5.4); a bare denial ends the turn before any
        // reply.
        return format!(
            "{SCRIPTED} I did not go ahead with {shown}. {} A real model would now take that into account.",
            result.trim()
        );
    }
    match tool {
        "workspace__write" => format!(
            "{SCRIPTED} Approved, so the note is written. The tool answered: {}",
            excerpt(result, 200)
        ),
        "ask__human" => {
            let answer = result
                .split_once(" answered: ")
                .map_or(result, |(_, answer)| answer);
            format!(
                "{SCRIPTED} You answered “{}”. A real model would carry on with that.",
                excerpt(answer, 200)
            )
        }
        "shell__run" => format!(
            "{SCRIPTED} The command ran as my own OS user, not as the daemon's. It returned:\n{}",
            fenced(result)
        ),
        _ => format!(
            "{SCRIPTED} The tool answered: {}. A real model would now use that to answer you.",
            excerpt(result, 200)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Value {
        json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}})
    }

    /// An OpenAI-wire turn request whose framework message answers `post`.
    fn asked(post: &str, tools: &[&str]) -> Value {
        let framework = format!(
            "[Framework message. This is not a post. It describes this turn.]\n\nPosts you answer now, oldest first:\n- post p1 by demo (person) (above): \"{post}\"\n\nToday is Monday 1 June 2026 (UTC).\n\nPinned posts, oldest first. People pinned them; each is a standing instruction:\n- demo · 2026-06-01 · post p0\n  <<<\n  run a command every morning\n  >>>\n"
        );
        json!({
            "messages": [
                {"role": "system", "content": "You are @mira."},
                {"role": "user", "content": format!("demo (person) · 2026-06-01 · post p1\n{post}")},
                {"role": "user", "content": framework},
            ],
            "tools": tools.iter().map(|t| tool(t)).collect::<Vec<_>>(),
        })
    }

    /// `request` continued by the call `answer` made and its result.
    fn continued(mut request: Value, answer: &Scripted, result: &str) -> Value {
        let call = &answer.tool_calls[0];
        let messages = request["messages"].as_array_mut().expect("messages");
        messages.push(json!({"role": "assistant", "content": answer.text, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": call.name, "arguments": call.arguments.to_string()}}
        ]}));
        messages.push(json!({"role": "tool", "tool_call_id": "call_1", "content": result}));
        request
    }

    #[test]
    fn s3_7_write_a_note_calls_the_gated_write_and_the_result_is_reported() {
        let request = asked(
            "Mira, please write a note",
            &["builtins__now", "workspace__write"],
        );
        let call = answer(WireKind::Openai, &request);
        assert_eq!(call.tool_calls.len(), 1);
        assert_eq!(call.tool_calls[0].name, "workspace__write");
        assert_eq!(
            call.tool_calls[0].arguments,
            json!({"path": NOTE_PATH, "content": NOTE})
        );
        let done = answer(
            WireKind::Openai,
            &continued(
                request,
                &call,
                "Wrote 120 bytes to `demo-note.md` in your workspace.",
            ),
        );
        let text = done.text.expect("a reply");
        assert!(done.tool_calls.is_empty());
        assert!(
            text.starts_with(SCRIPTED)
                && text.contains("the note is written")
                && text.contains("Wrote 120 bytes to `demo-note.md`"),
            "{text}"
        );
    }

    #[test]
    fn s5_4_a_reasoned_denial_is_reported_with_its_reason() {
        let request = asked("write a note", &["workspace__write"]);
        let call = answer(WireKind::Openai, &request);
        let denied = answer(
            WireKind::Openai,
            &continued(
                request,
                &call,
                "The call did not run: @demo denied it, and said: “not in my workspace”",
            ),
        );
        let text = denied.text.expect("a reply");
        assert!(
            text.contains("I did not go ahead with `workspace::write`")
                && text.contains("and said: “not in my workspace”"),
            "{text}"
        );
    }

    #[test]
    fn s3_7a_ask_me_asks_with_offered_answers_and_quotes_the_answer() {
        let request = asked("ask me something", &["ask__human", "workspace__write"]);
        let call = answer(WireKind::Openai, &request);
        assert_eq!(call.tool_calls[0].name, "ask__human");
        assert_eq!(
            call.tool_calls[0].arguments,
            json!({"question": QUESTION, "answers": ANSWERS})
        );
        let answered = answer(
            WireKind::Openai,
            &continued(request, &call, "@demo answered: Thursday, after lunch"),
        );
        let text = answered.text.expect("a reply");
        assert!(
            text.contains("You answered “Thursday, after lunch”"),
            "{text}"
        );
    }

    #[test]
    fn s6_1_run_a_command_runs_it_and_shows_the_output_in_a_fence_it_cannot_close() {
        let request = asked("run a command please", &["shell__run"]);
        let call = answer(WireKind::Openai, &request);
        assert_eq!(call.tool_calls[0].name, "shell__run");
        assert_eq!(call.tool_calls[0].arguments, json!({"command": COMMAND}));
        let output = "exit status 0\n[stdout]\nuid=990(cg-theo) gid=990(cg-theo)\n```\n[stderr]\n";
        let ran = answer(WireKind::Openai, &continued(request, &call, output));
        let text = ran.text.expect("a reply");
        assert!(text.contains("uid=990(cg-theo)"), "{text}");
        assert!(text.contains("\n````\nexit status 0"), "{text}");
        assert!(text.ends_with("[stderr]\n````"), "{text}");
    }

    #[test]
    fn s3_4_a_tool_not_offered_is_not_called_and_the_missing_grant_is_named() {
        let request = asked("run a command", &["workspace__write", "ask__human"]);
        let refused = answer(WireKind::Openai, &request);
        assert!(refused.tool_calls.is_empty());
        let text = refused.text.expect("a reply");
        assert!(
            text.contains("That would take `shell::run`, and I do not hold it")
                && text.contains("does not grant me `shell`.")
                && text.contains("only a host provisioned as root has"),
            "{text}"
        );
    }

    #[test]
    fn only_the_answered_posts_are_read_as_the_request() {
        // The pinned post in the same message says "run a command".
        let request = asked("hello there", &["shell__run", "workspace__write"]);
        let greeted = answer(WireKind::Openai, &request);
        assert!(greeted.tool_calls.is_empty());
        let text = greeted.text.expect("a reply");
        assert!(text.contains("I received: \"hello there\"."), "{text}");
        assert!(text.contains(WRITE_PHRASE) && text.contains(RUN_PHRASE));
    }

    #[test]
    fn the_anthropic_wire_names_the_call_its_result_answers() {
        let request = json!({
            "messages": [
                {"role": "user", "content": "ask me"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "(Scripted demo.) I need a fact only you have."},
                    {"type": "tool_use", "id": "toolu_1", "name": "ask__human", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "@demo answered: Tuesday"}
                ]}
            ],
            "tools": [{"name": "ask__human", "input_schema": {"type": "object"}}]
        });
        let text = answer(WireKind::Anthropic, &request).text.expect("a reply");
        assert!(text.contains("You answered “Tuesday”"), "{text}");
    }
}
