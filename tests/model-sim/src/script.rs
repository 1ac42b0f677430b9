//! What tests script: a queue of responses per model, each consumed by the
//! next request it matches, and standing responses that answer whatever no
//! queued one does (the boot probe).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One scripted response.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scripted {
    pub text: Option<String>,
    pub reasoning: Option<String>,
    pub tool_calls: Vec<ScriptedCall>,
    pub usage: Option<Usage>,
    /// Milliseconds between chunks.
    pub delay_ms: u64,
    /// Milliseconds before the first chunk: the provider's time to first
    /// token, which a load driver spreads over a range.
    pub latency_ms: u64,
    /// A substring the request's system prompt must contain.
    #[serde(rename = "match")]
    pub matches: Option<String>,
    pub fail: Option<Failure>,
    /// Answers every request no queued response matches, and is not consumed.
    pub standing: bool,
    /// Hold the completion before its first chunk until the test releases
    /// this name (`POST /_sim/release`).
    pub hold: Option<String>,
    /// The upstream an OpenRouter-style answer says served it.
    pub upstream: Option<String>,
    /// The cost an OpenRouter-style answer reports, in US dollars.
    pub cost: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptedCall {
    pub name: String,
    /// The arguments as a JSON object.
    pub arguments: Value,
    /// Send these raw argument bytes instead (a call whose arguments do not
    /// parse).
    pub raw_arguments: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub cache_write_tokens: u64,
    pub reasoning_tokens: u64,
}

/// A failure to inject instead of (or in the middle of) the response.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Failure {
    /// Answer with this HTTP status and the wire's error body.
    pub status: Option<u16>,
    /// `Retry-After`, in seconds, with a status.
    pub retry_after: Option<u64>,
    /// The error's message; a default per status otherwise.
    pub message: Option<String>,
    /// The wire's error type or code (`insufficient_quota`,
    /// `context_length_exceeded`, `overloaded_error`, …).
    pub code: Option<String>,
    /// Send this many chunks, then go quiet for `stall_ms`.
    pub stall_after_chunks: Option<usize>,
    pub stall_ms: u64,
    /// Send this many chunks, then end the stream without its end marker.
    pub cut_after_chunks: Option<usize>,
    /// Send this many chunks, then one that is not JSON.
    pub malformed_after_chunks: Option<usize>,
    /// The provider filtered the output (`content_filter` / `refusal`).
    pub filtered: bool,
    /// The output stopped at its token limit (`length` / `max_tokens`).
    pub length: bool,
    /// Tool calls arrive with no id.
    pub drop_call_id: bool,
    /// Tool calls arrive with no name.
    pub drop_call_name: bool,
}

/// Whether a response may answer a request whose system prompt is `system`.
fn fits(response: &Scripted, system: &str) -> bool {
    response
        .matches
        .as_deref()
        .is_none_or(|m| system.contains(m))
}

/// Every model's queue and standing responses.
#[derive(Debug, Default)]
pub struct Scripts {
    queues: HashMap<String, Vec<Scripted>>,
    standing: HashMap<String, Vec<Scripted>>,
}

impl Scripts {
    pub fn add(&mut self, model: &str, responses: Vec<Scripted>) {
        for response in responses {
            if response.standing {
                self.standing
                    .entry(model.to_string())
                    .or_default()
                    .push(response);
            } else {
                self.queues
                    .entry(model.to_string())
                    .or_default()
                    .push(response);
            }
        }
    }

    /// The next response for a request to `model` whose system prompt is
    /// `system`: the first queued one it matches, else a standing one.
    pub fn take(&mut self, model: &str, system: &str) -> Option<Scripted> {
        self.take_queued(model, system)
            .or_else(|| self.take_standing(model, system))
    }

    /// The first queued response the request matches, consumed.
    pub fn take_queued(&mut self, model: &str, system: &str) -> Option<Scripted> {
        let queue = self.queues.get_mut(model)?;
        let index = queue.iter().position(|r| fits(r, system))?;
        Some(queue.remove(index))
    }

    /// The first standing response the request matches.
    pub fn take_standing(&self, model: &str, system: &str) -> Option<Scripted> {
        self.standing
            .get(model)
            .and_then(|s| s.iter().find(|r| fits(r, system)).cloned())
    }

    /// How many queued responses are still waiting, per model.
    pub fn pending(&self) -> HashMap<String, usize> {
        self.queues
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(m, q)| (m.clone(), q.len()))
            .collect()
    }

    pub fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = self
            .queues
            .keys()
            .chain(self.standing.keys())
            .cloned()
            .collect();
        models.sort();
        models.dedup();
        models
    }

    pub fn clear(&mut self) {
        self.queues.clear();
        self.standing.clear();
    }
}

/// One piece of a streamed completion, before a wire renders it.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Reasoning(String),
    Text(String),
    CallStart {
        index: usize,
        id: Option<String>,
        name: Option<String>,
    },
    CallArguments {
        index: usize,
        fragment: String,
    },
}

/// How a completion ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    Stop,
    ToolCalls,
    Length,
    Filtered,
}

/// Splits text into chunks of about `size` characters, on character
/// boundaries.
pub fn chunks(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

impl Scripted {
    /// The pieces to stream, in order: reasoning, text, then each call.
    pub fn pieces(&self) -> Vec<Piece> {
        let mut pieces = Vec::new();
        if let Some(reasoning) = &self.reasoning {
            pieces.extend(chunks(reasoning, 16).into_iter().map(Piece::Reasoning));
        }
        if let Some(text) = &self.text {
            pieces.extend(chunks(text, 16).into_iter().map(Piece::Text));
        }
        let dropping = |flag: fn(&Failure) -> bool| self.fail.as_ref().is_some_and(flag);
        for (index, call) in self.tool_calls.iter().enumerate() {
            pieces.push(Piece::CallStart {
                index,
                id: (!dropping(|f| f.drop_call_id))
                    .then(|| format!("call_sim_{index}_{}", short_hash(&call.name))),
                name: (!dropping(|f| f.drop_call_name)).then(|| call.name.clone()),
            });
            let arguments = call
                .raw_arguments
                .clone()
                .unwrap_or_else(|| call.arguments.to_string());
            pieces.extend(
                chunks(&arguments, 12)
                    .into_iter()
                    .map(|fragment| Piece::CallArguments { index, fragment }),
            );
        }
        pieces
    }

    pub fn finish(&self) -> Finish {
        match &self.fail {
            Some(f) if f.filtered => Finish::Filtered,
            Some(f) if f.length => Finish::Length,
            _ if !self.tool_calls.is_empty() => Finish::ToolCalls,
            _ => Finish::Stop,
        }
    }

    /// The usage to report: as scripted, else estimated from the text.
    pub fn usage(&self, prompt_chars: usize) -> Usage {
        self.usage.unwrap_or_else(|| {
            let output: usize = self.text.as_ref().map_or(0, |t| t.chars().count())
                + self
                    .tool_calls
                    .iter()
                    .map(|c| c.arguments.to_string().len())
                    .sum::<usize>();
            Usage {
                prompt_tokens: (prompt_chars / 4) as u64,
                completion_tokens: (output / 4).max(1) as u64,
                ..Usage::default()
            }
        })
    }
}

fn short_hash(text: &str) -> u32 {
    text.bytes().fold(2166136261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16777619)
    })
}
