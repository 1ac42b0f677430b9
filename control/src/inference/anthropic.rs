//! The Anthropic Messages wire: streaming with tools; `cache_control`
//! breakpoints after the system prompt and tools and at the window's stable
//! prefix (§3.8); thinking blocks kept with their signatures and handed back
//! unaltered for the rounds of the turn in progress, never earlier turns
//! (§3.12); usage with cache reads and writes.

use serde_json::{Value, json};

use super::assemble::Assembler;
use super::failure::{Failure, TransportCause};
use super::openai::{Broken, Step, says_too_long};
use super::request::{CompletionRequest, Message, ReasoningReplay};
use super::sse::SseEvent;
use super::{FinishReason, StreamEvent, Usage};

/// The Messages API version this adapter speaks.
pub const API_VERSION: &str = "2023-06-01";

/// Anthropic requires `max_tokens`; this is used where nothing sets it.
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// At most four breakpoints per request; one goes to the system prompt.
const MAX_MESSAGE_BREAKPOINTS: usize = 3;

#[derive(Default)]
pub struct AnthropicWire {
    /// The thinking block being streamed, to keep whole for handback.
    thinking: Option<Value>,
    usage: Usage,
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

impl AnthropicWire {
    pub fn body(
        &self,
        model: &str,
        request: &CompletionRequest,
        max_output_tokens: Option<u32>,
        reasoning_effort: Option<&str>,
    ) -> Value {
        let mut body = json!({
            "model": model,
            "max_tokens": request.max_output_tokens.or(max_output_tokens).unwrap_or(DEFAULT_MAX_TOKENS),
            "stream": true,
            // The tools and the system prompt change only with the deployment:
            // one breakpoint here caches both (tools precede the system).
            "system": [{"type": "text", "text": request.system, "cache_control": ephemeral()}],
            "messages": messages(request),
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
        }
        // Anthropic's vocabulary for reasoning effort is a thinking budget.
        if let Some(budget) = reasoning_effort.and_then(|e| e.parse::<u32>().ok()) {
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
            // The thinking budget is spent inside max_tokens, which must
            // exceed it: the output ceiling is kept on top of the budget.
            let output = body["max_tokens"]
                .as_u64()
                .unwrap_or(u64::from(DEFAULT_MAX_TOKENS));
            if output <= u64::from(budget) {
                body["max_tokens"] = json!(output + u64::from(budget));
            }
        }
        body
    }

    /// Reads one SSE event into stream events.
    pub fn parse(
        &mut self,
        event: &SseEvent,
        assembler: &mut Assembler,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Step, Broken> {
        let data: Value = serde_json::from_str(event.data.trim()).map_err(|_| Broken::Malformed)?;
        let kind = data["type"]
            .as_str()
            .unwrap_or_else(|| event.event.as_deref().unwrap_or_default());
        match kind {
            "message_start" => {
                let usage = &data["message"]["usage"];
                self.usage.cached_prompt_tokens = usage["cache_read_input_tokens"]
                    .as_u64()
                    .unwrap_or_default();
                self.usage.cache_write_tokens = usage["cache_creation_input_tokens"]
                    .as_u64()
                    .unwrap_or_default();
                // input_tokens leaves out the cache's reads and writes; the
                // prompt is all three (§8.2 records the prompt and its cached share).
                self.usage.prompt_tokens = usage["input_tokens"].as_u64().unwrap_or_default()
                    + self.usage.cached_prompt_tokens
                    + self.usage.cache_write_tokens;
            }
            "content_block_start" => {
                let block = &data["content_block"];
                match block["type"].as_str() {
                    Some("thinking") => {
                        self.thinking =
                            Some(json!({"type": "thinking", "thinking": "", "signature": ""}))
                    }
                    // Redacted reasoning carries nothing readable; it is handed
                    // back as it came.
                    Some("redacted_thinking") => assembler.add_thinking_block(block.clone()),
                    Some("tool_use") => out.push(StreamEvent::ToolCallDelta {
                        index: index_of(&data),
                        id: block["id"].as_str().map(str::to_string),
                        name: block["name"].as_str().map(str::to_string),
                        arguments: String::new(),
                    }),
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => out.push(StreamEvent::Text(
                        delta["text"].as_str().unwrap_or_default().to_string(),
                    )),
                    Some("thinking_delta") => {
                        let text = delta["thinking"].as_str().unwrap_or_default();
                        if let Some(block) = self.thinking.as_mut() {
                            block["thinking"] = json!(format!(
                                "{}{text}",
                                block["thinking"].as_str().unwrap_or_default()
                            ));
                        }
                        out.push(StreamEvent::Reasoning(text.to_string()));
                    }
                    Some("signature_delta") => {
                        if let Some(block) = self.thinking.as_mut() {
                            let signature = delta["signature"].as_str().unwrap_or_default();
                            block["signature"] = json!(format!(
                                "{}{signature}",
                                block["signature"].as_str().unwrap_or_default()
                            ));
                        }
                    }
                    Some("input_json_delta") => out.push(StreamEvent::ToolCallDelta {
                        index: index_of(&data),
                        id: None,
                        name: None,
                        arguments: delta["partial_json"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                    }),
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(block) = self.thinking.take() {
                    assembler.add_thinking_block(block);
                }
            }
            "message_delta" => {
                self.usage.completion_tokens =
                    data["usage"]["output_tokens"].as_u64().unwrap_or_default();
                out.push(StreamEvent::Usage(self.usage));
                match data["delta"]["stop_reason"].as_str() {
                    Some("refusal") => return Err(Broken::Failed(Failure::Filtered)),
                    Some(reason) => out.push(StreamEvent::Finish(finish(reason))),
                    None => {}
                }
            }
            "message_stop" => return Ok(Step::Done),
            "error" => {
                let status = match data["error"]["type"].as_str() {
                    Some("overloaded_error") => 529,
                    Some("rate_limit_error") => {
                        return Err(Broken::Retry(TransportCause::RateLimited(None)));
                    }
                    _ => 500,
                };
                return Err(Broken::Retry(TransportCause::ServerError(status)));
            }
            _ => {}
        }
        Ok(Step::Continue)
    }
}

fn index_of(data: &Value) -> usize {
    data["index"]
        .as_u64()
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or_default()
}

fn finish(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        other => FinishReason::Other(other.to_string()),
    }
}

/// The conversation as Anthropic content blocks: consecutive user-role
/// messages (a round's results, the message after the window) merged into
/// one, results first as Anthropic requires; a breakpoint on the last block
/// of each message the request marks, tagged on that block itself, so a
/// message merged in after it does not move the breakpoint (§3.8).
fn messages(request: &CompletionRequest) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut marks: Vec<(usize, usize)> = Vec::new();
    for (index, message) in request.messages.iter().enumerate() {
        let (role, blocks) = blocks_of(message);
        match out.last_mut() {
            Some((last_role, content)) if *last_role == role => content.extend(blocks),
            _ => out.push((role, blocks)),
        }
        if request.cache_breakpoints.contains(&index)
            && let Some((_, content)) = out.last()
            && !content.is_empty()
        {
            marks.push((out.len() - 1, content.len() - 1));
        }
    }
    let keep = marks.len().saturating_sub(MAX_MESSAGE_BREAKPOINTS);
    for (message, block) in marks.into_iter().skip(keep) {
        out[message].1[block]["cache_control"] = ephemeral();
    }
    out.into_iter()
        .map(|(role, mut content)| {
            if role == "user" {
                // A stable sort: results keep their order, and so do the rest.
                content.sort_by_key(|b| b["type"] != "tool_result");
            }
            json!({"role": role, "content": content})
        })
        .collect()
}

fn blocks_of(message: &Message) -> (&'static str, Vec<Value>) {
    match message {
        Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
        Message::ToolResult {
            call_id, content, ..
        } => (
            "user",
            vec![json!({"type": "tool_result", "tool_use_id": call_id, "content": content})],
        ),
        Message::Assistant(assistant) => {
            let mut blocks = Vec::new();
            if let Some(reasoning) = &assistant.reasoning
                && let ReasoningReplay::ThinkingBlocks(kept) = &reasoning.replay
            {
                blocks.extend(kept.iter().cloned());
            }
            if !assistant.text.is_empty() {
                blocks.push(json!({"type": "text", "text": assistant.text}));
            }
            for call in &assistant.tool_calls {
                let input: Value =
                    serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
                blocks.push(
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                );
            }
            ("assistant", blocks)
        }
    }
}

/// An HTTP error from Anthropic, classed (§7.1).
pub fn classify(status: u16, body: &str) -> Result<TransportCause, Failure> {
    let kind = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["type"].as_str().map(str::to_string))
        .unwrap_or_default();
    match status {
        401 => Err(Failure::Credential),
        402 => Err(Failure::Balance),
        403 => Err(Failure::Refused),
        413 => Err(Failure::ContextExhausted),
        400 if says_too_long(body) => Err(Failure::ContextExhausted),
        400 if body.to_lowercase().contains("credit balance") => Err(Failure::Balance),
        429 => Ok(TransportCause::RateLimited(None)),
        _ if kind == "overloaded_error" => Ok(TransportCause::ServerError(status)),
        408 | 500..=599 => Ok(TransportCause::ServerError(status)),
        other => Err(Failure::Status(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::request::{AssistantMessage, ToolCall};

    #[test]
    fn a_breakpoint_stays_on_its_block_when_the_next_user_message_merges_in() {
        let request = CompletionRequest {
            messages: vec![
                Message::User("the window's last post".into()),
                Message::User("the framework's message after the window".into()),
            ],
            cache_breakpoints: vec![0],
            ..CompletionRequest::default()
        };
        let out = messages(&request);
        assert_eq!(out.len(), 1, "two user messages merge");
        assert_eq!(out[0]["content"][0]["cache_control"], ephemeral());
        assert!(
            out[0]["content"][1].get("cache_control").is_none(),
            "the changing part is not cached"
        );
    }

    #[test]
    fn tool_results_come_first_in_a_merged_user_message() {
        let request = CompletionRequest {
            messages: vec![
                Message::Assistant(AssistantMessage {
                    tool_calls: vec![ToolCall {
                        id: "t1".into(),
                        name: "web__fetch".into(),
                        arguments: "{}".into(),
                    }],
                    ..AssistantMessage::default()
                }),
                Message::User("a steer from ada".into()),
                Message::ToolResult {
                    call_id: "t1".into(),
                    name: "web__fetch".into(),
                    content: "page".into(),
                },
            ],
            ..CompletionRequest::default()
        };
        let out = messages(&request);
        assert_eq!(out[1]["content"][0]["type"], "tool_result");
        assert_eq!(out[1]["content"][1]["type"], "text");
    }

    #[test]
    fn at_most_three_message_breakpoints_the_newest_kept() {
        let request = CompletionRequest {
            messages: (0..5)
                .flat_map(|i| {
                    [
                        Message::User(format!("u{i}")),
                        Message::Assistant(AssistantMessage {
                            text: format!("a{i}"),
                            ..AssistantMessage::default()
                        }),
                    ]
                })
                .collect(),
            cache_breakpoints: vec![1, 3, 5, 7, 9],
            ..CompletionRequest::default()
        };
        let out = messages(&request);
        let marked: Vec<usize> = out
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m["content"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|b| b.get("cache_control").is_some()))
            })
            .map(|(i, _)| i)
            .collect();
        assert_eq!(marked, vec![5, 7, 9]);
    }
}
