//! The OpenAI Chat Completions wire (and OpenRouter's dialect of it, served
//! under `/api/v1`): `data:` lines of `chat.completion.chunk` objects, a
//! usage chunk with empty `choices` when asked for, then `data: [DONE]`.

use serde_json::{Value, json};

use crate::script::{Finish, Piece, Usage};

pub struct OpenAiWire {
    pub id: String,
    pub created: u64,
    pub model: String,
    pub include_usage: bool,
    /// OpenRouter: the upstream that served, and the cost to report.
    pub openrouter: Option<(String, f64)>,
}

impl OpenAiWire {
    fn chunk(&self, choices: Value, usage: Option<Value>) -> String {
        let mut chunk = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_model_sim",
            "choices": choices,
        });
        if let Some((upstream, _)) = &self.openrouter {
            chunk["provider"] = json!(upstream);
        }
        if let Some(usage) = usage {
            chunk["usage"] = usage;
        }
        format!("data: {chunk}\n\n")
    }

    fn delta(&self, delta: Value) -> String {
        self.chunk(
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]),
            None,
        )
    }

    pub fn start(&self) -> Vec<String> {
        vec![self.delta(json!({"role": "assistant", "content": ""}))]
    }

    pub fn piece(&self, piece: &Piece) -> Vec<String> {
        let delta = match piece {
            Piece::Reasoning(text) => {
                let mut delta = json!({"reasoning_content": text});
                if self.openrouter.is_some() {
                    delta["reasoning"] = json!(text);
                    delta["reasoning_details"] = json!([{"type": "reasoning.text", "text": text, "format": "unknown", "index": 0}]);
                }
                delta
            }
            Piece::Text(text) => json!({"content": text}),
            Piece::CallStart { index, id, name } => {
                let mut call =
                    json!({"index": index, "type": "function", "function": {"arguments": ""}});
                if let Some(id) = id {
                    call["id"] = json!(id);
                }
                if let Some(name) = name {
                    call["function"]["name"] = json!(name);
                }
                json!({"tool_calls": [call]})
            }
            Piece::CallArguments { index, fragment } => {
                json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
            }
        };
        vec![self.delta(delta)]
    }

    pub fn finish(&self, finish: Finish, usage: Usage) -> Vec<String> {
        let reason = match finish {
            Finish::Stop => "stop",
            Finish::ToolCalls => "tool_calls",
            Finish::Length => "length",
            Finish::Filtered => "content_filter",
        };
        let mut lines = vec![self.chunk(
            json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": reason}]),
            None,
        )];
        // OpenRouter always reports usage; OpenAI when the request asked.
        if self.include_usage || self.openrouter.is_some() {
            let mut usage = json!({
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            });
            if let Some((_, cost)) = &self.openrouter {
                usage["cost"] = json!(cost);
            }
            lines.push(self.chunk(json!([]), Some(usage)));
        }
        lines.push("data: [DONE]\n\n".to_string());
        lines
    }
}

/// An error body as OpenAI writes one.
pub fn error_body(status: u16, message: &str, code: Option<&str>) -> Value {
    let kind = match status {
        401 => "invalid_request_error",
        403 => "permission_error",
        404 => "invalid_request_error",
        429 => "rate_limit_exceeded",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    };
    let code = code.map(str::to_string).or_else(|| match status {
        401 => Some("invalid_api_key".to_string()),
        429 => Some("rate_limit_exceeded".to_string()),
        _ => None,
    });
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}
