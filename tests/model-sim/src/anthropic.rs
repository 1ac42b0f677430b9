//! The Anthropic Messages wire: `event:`/`data:` pairs from `message_start`
//! through content blocks (thinking with its signature, text, tool use) to
//! `message_delta` and `message_stop`.

use serde_json::{Value, json};

use crate::script::{Finish, Piece, Usage};

/// Which kind of block is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Thinking,
    Text,
    Tool(usize),
}

pub struct AnthropicWire {
    pub id: String,
    pub model: String,
    pub usage: Usage,
    /// The signature the thinking block closes with.
    pub signature: String,
    open: Option<(usize, Block)>,
    next_index: usize,
}

fn event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

impl AnthropicWire {
    pub fn new(id: String, model: String, usage: Usage, signature: String) -> Self {
        Self {
            id,
            model,
            usage,
            signature,
            open: None,
            next_index: 0,
        }
    }

    pub fn start(&self) -> Vec<String> {
        let message = json!({
            "type": "message_start",
            "message": {
                "id": self.id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                // Anthropic's input_tokens leaves out what the cache read or
                // wrote; the three add up to the whole prompt.
                "usage": {
                    "input_tokens": self.usage.prompt_tokens.saturating_sub(self.usage.cached_tokens + self.usage.cache_write_tokens),
                    "output_tokens": 1,
                    "cache_read_input_tokens": self.usage.cached_tokens,
                    "cache_creation_input_tokens": self.usage.cache_write_tokens,
                },
            },
        });
        vec![
            event("message_start", &message),
            event("ping", &json!({"type": "ping"})),
        ]
    }

    /// Closes the open block, if any.
    fn close(&mut self) -> Vec<String> {
        let Some((index, block)) = self.open.take() else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        if block == Block::Thinking {
            // Sent in two parts, as a long signature may be: the client must
            // join them.
            let half = self.signature.len() / 2;
            for part in [&self.signature[..half], &self.signature[half..]] {
                lines.push(event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": part}}),
                ));
            }
        }
        lines.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        lines
    }

    fn open(&mut self, block: Block, content_block: Value) -> Vec<String> {
        let mut lines = self.close();
        let index = self.next_index;
        self.next_index += 1;
        self.open = Some((index, block));
        lines.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": content_block}),
        ));
        lines
    }

    fn delta(&self, delta: Value) -> String {
        let index = self.open.map(|(i, _)| i).unwrap_or_default();
        event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        )
    }

    pub fn piece(&mut self, piece: &Piece) -> Vec<String> {
        let current = self.open.map(|(_, b)| b);
        let mut lines = Vec::new();
        match piece {
            Piece::Reasoning(text) => {
                if current != Some(Block::Thinking) {
                    lines.extend(self.open(
                        Block::Thinking,
                        json!({"type": "thinking", "thinking": "", "signature": ""}),
                    ));
                }
                lines.push(self.delta(json!({"type": "thinking_delta", "thinking": text})));
            }
            Piece::Text(text) => {
                if current != Some(Block::Text) {
                    lines.extend(self.open(Block::Text, json!({"type": "text", "text": ""})));
                }
                lines.push(self.delta(json!({"type": "text_delta", "text": text})));
            }
            Piece::CallStart { index, id, name } => {
                let mut block = json!({"type": "tool_use", "input": {}});
                if let Some(id) = id {
                    block["id"] = json!(id.replace("call_", "toolu_"));
                }
                if let Some(name) = name {
                    block["name"] = json!(name);
                }
                lines.extend(self.open(Block::Tool(*index), block));
            }
            Piece::CallArguments { fragment, .. } => {
                lines.push(
                    self.delta(json!({"type": "input_json_delta", "partial_json": fragment})),
                );
            }
        }
        lines
    }

    pub fn finish(&mut self, finish: Finish) -> Vec<String> {
        let mut lines = self.close();
        let reason = match finish {
            Finish::Stop => "end_turn",
            Finish::ToolCalls => "tool_use",
            Finish::Length => "max_tokens",
            Finish::Filtered => "refusal",
        };
        lines.push(event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": self.usage.completion_tokens}}),
        ));
        lines.push(event("message_stop", &json!({"type": "message_stop"})));
        lines
    }
}

/// An error body as Anthropic writes one.
pub fn error_body(status: u16, message: &str, code: Option<&str>) -> Value {
    let kind = code.map(str::to_string).unwrap_or_else(|| {
        match status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            402 => "billing_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            _ => "api_error",
        }
        .to_string()
    });
    json!({"type": "error", "error": {"type": kind, "message": message}})
}
