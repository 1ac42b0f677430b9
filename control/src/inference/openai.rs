//! The OpenAI-compatible chat completions wire, and OpenRouter on the same
//! adapter: streaming with tools, reasoning effort, usage with cached and
//! reasoning tokens, reasoning handed back on the rounds of the turn in
//! progress (§3.12), and OpenRouter's upstream order, served upstream and
//! reported cost (§3.8).

use serde_json::{Value, json};

use super::assemble::Assembler;
use super::failure::{Failure, TransportCause};
use super::request::{CompletionRequest, Message, ReasoningReplay};
use super::sse::SseEvent;
use super::{FinishReason, StreamEvent, Usage};

/// What one SSE event did to the stream.
pub enum Step {
    Continue,
    Done,
}

/// A chunk that does not parse, or that carries an error mid-stream.
pub enum Broken {
    Malformed,
    Failed(Failure),
    Retry(TransportCause),
}

pub struct OpenAiWire {
    pub openrouter: bool,
    /// The provider is api.openai.com itself.
    pub openai_itself: bool,
}

impl OpenAiWire {
    pub fn for_provider(config: &super::provider::ProviderConfig) -> Self {
        let host = url::Url::parse(&config.base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string));
        Self {
            openrouter: config.kind == crate::config::model::ProviderKind::Openrouter,
            openai_itself: host.as_deref() == Some("api.openai.com"),
        }
    }

    pub fn body(
        &self,
        model: &str,
        request: &CompletionRequest,
        max_output_tokens: Option<u32>,
        reasoning_effort: Option<&str>,
    ) -> Value {
        let mut messages = vec![json!({"role": "system", "content": request.system})];
        messages.extend(request.messages.iter().map(|m| self.message(m)));
        let mut body = json!({
            "model": model,
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": messages,
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
                .collect();
        }
        if let Some(max) = request.max_output_tokens.or(max_output_tokens) {
            // OpenAI's own API refuses `max_tokens` for its reasoning models;
            // other OpenAI-compatible servers know only `max_tokens`.
            let key = if self.openai_itself {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body[key] = json!(max);
        }
        if let Some(effort) = reasoning_effort {
            if self.openrouter {
                body["reasoning"] = json!({"effort": effort});
            } else {
                body["reasoning_effort"] = json!(effort);
            }
        }
        if self.openrouter {
            // Usage accounting brings the cost; the order keeps one upstream's
            // prompt cache warm (§3.8).
            body["usage"] = json!({"include": true});
            if !request.preferred_upstreams.is_empty() {
                body["provider"] =
                    json!({"order": request.preferred_upstreams, "allow_fallbacks": true});
            }
        }
        body
    }

    fn message(&self, message: &Message) -> Value {
        match message {
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::ToolResult {
                call_id, content, ..
            } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
            Message::Assistant(assistant) => {
                let mut m = json!({"role": "assistant", "content": if assistant.text.is_empty() { Value::Null } else { json!(assistant.text) }});
                if !assistant.tool_calls.is_empty() {
                    m["tool_calls"] = assistant
                        .tool_calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                        .collect();
                }
                // Reasoning is handed back unaltered, in the form it came in.
                match assistant.reasoning.as_ref().map(|r| (&r.text, &r.replay)) {
                    // OpenRouter takes plain reasoning back as `reasoning`.
                    Some((text, ReasoningReplay::Content)) if self.openrouter => {
                        m["reasoning"] = json!(text);
                    }
                    Some((text, ReasoningReplay::Content)) => m["reasoning_content"] = json!(text),
                    Some((text, ReasoningReplay::Details(details))) => {
                        m["reasoning"] = json!(text);
                        m["reasoning_details"] = json!(details);
                    }
                    _ => {}
                }
                m
            }
        }
    }

    /// Reads one SSE event into stream events.
    pub fn parse(
        &self,
        event: &SseEvent,
        assembler: &mut Assembler,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Step, Broken> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(Step::Done);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|_| Broken::Malformed)?;
        if let Some(error) = chunk.get("error") {
            // OpenRouter reports an upstream failing mid-stream in-band, with
            // the status it would have answered: classed like one.
            let status = error["code"]
                .as_u64()
                .and_then(|c| u16::try_from(c).ok())
                .unwrap_or(502);
            return Err(match classify(status, &chunk.to_string()) {
                Ok(cause) => Broken::Retry(cause),
                Err(failure) => Broken::Failed(failure),
            });
        }
        if let Some(upstream) = chunk["provider"].as_str() {
            out.push(StreamEvent::Upstream(upstream.to_string()));
        }
        if let Some(choice) = chunk["choices"].get(0) {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                out.push(StreamEvent::Text(text.to_string()));
            }
            let reasoning = delta["reasoning_content"]
                .as_str()
                .or_else(|| delta["reasoning"].as_str());
            if let Some(text) = reasoning.filter(|t| !t.is_empty()) {
                out.push(StreamEvent::Reasoning(text.to_string()));
            }
            if let Some(details) = delta["reasoning_details"].as_array() {
                assembler.add_reasoning_details(details);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                out.push(StreamEvent::ToolCallDelta {
                    index: call["index"]
                        .as_u64()
                        .and_then(|i| usize::try_from(i).ok())
                        .unwrap_or(0),
                    id: call["id"].as_str().map(str::to_string),
                    name: call["function"]["name"].as_str().map(str::to_string),
                    arguments: call["function"]["arguments"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                });
            }
            match choice["finish_reason"].as_str() {
                Some("content_filter") => return Err(Broken::Failed(Failure::Filtered)),
                // The upstream failed mid-completion: a transport failure.
                Some("error") => return Err(Broken::Retry(TransportCause::Cut)),
                Some(reason) => out.push(StreamEvent::Finish(finish(reason))),
                None => {}
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            out.push(StreamEvent::Usage(Usage {
                prompt_tokens: usage["prompt_tokens"].as_u64().unwrap_or_default(),
                cached_prompt_tokens: usage["prompt_tokens_details"]["cached_tokens"]
                    .as_u64()
                    .unwrap_or_default(),
                cache_write_tokens: 0,
                completion_tokens: usage["completion_tokens"].as_u64().unwrap_or_default(),
                reasoning_tokens: usage["completion_tokens_details"]["reasoning_tokens"]
                    .as_u64()
                    .unwrap_or_default(),
                cost_micro_usd: usage["cost"]
                    .as_f64()
                    .map(|c| (c * 1_000_000.0).round() as i64),
            }));
        }
        Ok(Step::Continue)
    }
}

fn finish(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        other => FinishReason::Other(other.to_string()),
    }
}

/// Whether an error body says the request was too long for the window.
pub fn says_too_long(body: &str) -> bool {
    let lower = body.to_lowercase();
    [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "too many tokens",
        "context window",
        "exceed context limit",
        "maximum number of tokens allowed",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// An HTTP error from an OpenAI-compatible provider, classed (§7.1).
pub fn classify(status: u16, body: &str) -> Result<TransportCause, Failure> {
    let code = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_string))
        .unwrap_or_default();
    match status {
        401 => Err(Failure::Credential),
        402 => Err(Failure::Balance),
        403 => Err(Failure::Refused),
        413 => Err(Failure::ContextExhausted),
        429 if code == "insufficient_quota" => Err(Failure::Balance),
        429 => Ok(TransportCause::RateLimited(None)),
        400 if says_too_long(body) => Err(Failure::ContextExhausted),
        408 | 500..=599 => Ok(TransportCause::ServerError(status)),
        other => Err(Failure::Status(other)),
    }
}
