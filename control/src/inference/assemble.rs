//! Folds a stream's events into a completion, and judges what arrived:
//! a call with no id or no name is a malformed delivery (§7.2).

use std::collections::HashMap;

use serde_json::Value;

use super::leaked;
use super::request::{Reasoning, ReasoningReplay, ToolCall};
use super::{Completion, FinishReason, StreamEvent, Usage};

/// One call being streamed.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

#[derive(Debug, Default)]
pub struct Assembler {
    text: String,
    reasoning: String,
    replay: Option<ReasoningReplay>,
    calls: Vec<PartialCall>,
    /// The wire's call index to the call it currently streams. Some servers
    /// give every parallel call the same index, told apart only by its id.
    by_index: HashMap<usize, usize>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    upstream: Option<String>,
}

/// Why an assembled stream is not a completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    CallWithoutId,
    CallWithoutName,
    /// A finished completion carrying neither text nor a call: a delivery
    /// the provider got wrong, retried as transport (§7.2).
    Empty,
}

impl Assembler {
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Text(text) => self.text.push_str(text),
            StreamEvent::Reasoning(text) => self.reasoning.push_str(text),
            StreamEvent::ToolCallDelta {
                index,
                id,
                name,
                arguments,
            } => self.call_delta(*index, id.as_deref(), name.as_deref(), arguments),
            StreamEvent::Usage(usage) => self.usage = Some(*usage),
            StreamEvent::Upstream(upstream) => self.upstream = Some(upstream.clone()),
            StreamEvent::Finish(finish) => self.finish = Some(finish.clone()),
            StreamEvent::Restart => {}
        }
    }

    fn call_delta(&mut self, index: usize, id: Option<&str>, name: Option<&str>, arguments: &str) {
        let id = id.filter(|i| !i.is_empty());
        let current = self.by_index.get(&index).copied();
        let starts_new = match (current, id) {
            (None, _) => true,
            // A new id at a used index is another call, not this one renamed.
            (Some(slot), Some(id)) => self.calls[slot]
                .id
                .as_deref()
                .is_some_and(|known| known != id),
            (Some(_), None) => false,
        };
        let slot = if starts_new {
            self.calls.push(PartialCall::default());
            let slot = self.calls.len() - 1;
            self.by_index.insert(index, slot);
            slot
        } else {
            current.unwrap_or_default()
        };
        let call = &mut self.calls[slot];
        if let Some(id) = id {
            call.id = Some(id.to_string());
        }
        // A name is set, never appended: a server that repeats it in every
        // delta would otherwise double it.
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            call.name = Some(name.to_string());
        }
        call.arguments.push_str(arguments);
    }

    /// OpenRouter's `reasoning_details`, streamed as fragments: kept whole by
    /// merging consecutive fragments of one detail (same type and index), as
    /// OpenRouter wants them handed back.
    pub fn add_reasoning_details(&mut self, details: &[Value]) {
        let kept = match &mut self.replay {
            Some(ReasoningReplay::Details(kept)) => kept,
            _ => {
                self.replay = Some(ReasoningReplay::Details(Vec::new()));
                match &mut self.replay {
                    Some(ReasoningReplay::Details(kept)) => kept,
                    _ => return,
                }
            }
        };
        for detail in details {
            let same = kept.last_mut().filter(|last| {
                detail.get("index").is_some()
                    && last.get("index") == detail.get("index")
                    && last.get("type") == detail.get("type")
            });
            match same {
                Some(last) => merge_detail(last, detail),
                None => kept.push(detail.clone()),
            }
        }
    }

    /// An Anthropic thinking block, kept exactly as received.
    pub fn add_thinking_block(&mut self, block: Value) {
        match &mut self.replay {
            Some(ReasoningReplay::ThinkingBlocks(kept)) => kept.push(block),
            _ => self.replay = Some(ReasoningReplay::ThinkingBlocks(vec![block])),
        }
    }

    /// A rough count of what has streamed, for a completion cut short or a
    /// provider that reported nothing (§7.2): four characters a token.
    pub fn estimate(&self) -> Usage {
        let chars = self.text.chars().count()
            + self.reasoning.chars().count()
            + self
                .calls
                .iter()
                .map(|c| c.name.as_ref().map_or(0, String::len) + c.arguments.len())
                .sum::<usize>();
        Usage {
            completion_tokens: u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX),
            ..Usage::default()
        }
    }

    pub fn finish(self) -> Result<Completion, Malformed> {
        let estimate = self.estimate();
        let mut tool_calls = Vec::new();
        for call in self.calls {
            tool_calls.push(ToolCall {
                id: call.id.ok_or(Malformed::CallWithoutId)?,
                name: call.name.ok_or(Malformed::CallWithoutName)?,
                arguments: call.arguments,
            });
        }
        let leaked = if tool_calls.is_empty() {
            leaked::recognise(&self.text)
        } else {
            None
        };
        // No report is not a report of nothing: estimate, and say so.
        let (usage, usage_estimated) = match self.usage {
            Some(usage) => (usage, false),
            None => (estimate, true),
        };
        let kept_blocks = matches!(&self.replay, Some(ReasoningReplay::ThinkingBlocks(b) | ReasoningReplay::Details(b)) if !b.is_empty());
        let reasoning = (!self.reasoning.is_empty() || kept_blocks).then(|| Reasoning {
            text: self.reasoning,
            replay: self.replay.unwrap_or(ReasoningReplay::Content),
        });
        let finish = self.finish.unwrap_or(if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        let completion = Completion {
            text: self.text,
            tool_calls,
            reasoning,
            usage,
            usage_estimated,
            finish,
            upstream: self.upstream,
            leaked,
            retries: 0,
        };
        // A completion a limit cut is no delivery fault: it is fed back as
        // a cut, which says when it kept nothing (§7.1).
        let cut = matches!(
            completion.finish,
            FinishReason::Length | FinishReason::TimeLimit
        );
        if completion.is_empty() && !cut {
            return Err(Malformed::Empty);
        }
        Ok(completion)
    }
}

/// Folds a later fragment of one reasoning detail into the earlier: text is
/// concatenated, anything else (a signature, an id, a format) taken as it
/// finally arrived.
fn merge_detail(into: &mut Value, fragment: &Value) {
    let (Some(into), Some(fragment)) = (into.as_object_mut(), fragment.as_object()) else {
        return;
    };
    for (key, value) in fragment {
        match (key.as_str(), into.get_mut(key), value) {
            ("text" | "summary" | "data", Some(Value::String(kept)), Value::String(more)) => {
                kept.push_str(more)
            }
            (_, _, Value::Null) => {}
            _ => {
                into.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(index: usize, id: Option<&str>, name: Option<&str>, arguments: &str) -> StreamEvent {
        StreamEvent::ToolCallDelta {
            index,
            id: id.map(str::to_string),
            name: name.map(str::to_string),
            arguments: arguments.to_string(),
        }
    }

    #[test]
    fn parallel_calls_interleaved_by_index_stay_apart() {
        let mut a = Assembler::default();
        for e in [
            delta(0, Some("c1"), Some("web__fetch"), ""),
            delta(1, Some("c2"), Some("web__search"), ""),
            delta(0, None, None, "{\"url\":"),
            delta(1, None, None, "{\"q\":\"x\"}"),
            delta(0, None, None, "\"a\"}"),
        ] {
            a.push(&e);
        }
        let calls = a.finish().expect("calls").tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].arguments.as_str()),
            ("c1", "{\"url\":\"a\"}")
        );
        assert_eq!(
            (calls[1].name.as_str(), calls[1].arguments.as_str()),
            ("web__search", "{\"q\":\"x\"}")
        );
    }

    #[test]
    fn calls_sharing_an_index_are_told_apart_by_id_and_names_are_not_doubled() {
        let mut a = Assembler::default();
        for e in [
            delta(0, Some("c1"), Some("web__fetch"), "{}"),
            delta(0, Some("c2"), Some("web__fetch"), "{\"u\":1}"),
            delta(0, Some("c2"), Some("web__fetch"), ""),
        ] {
            a.push(&e);
        }
        let calls = a.finish().expect("calls").tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].name, "web__fetch");
        assert_eq!(calls[1].arguments, "{\"u\":1}");
    }

    #[test]
    fn missing_usage_is_estimated_and_marked() {
        let mut a = Assembler::default();
        a.push(&StreamEvent::Text("twelve chars".into()));
        let completion = a.finish().expect("completion");
        assert!(completion.usage_estimated);
        assert_eq!(completion.usage.completion_tokens, 3);
    }

    #[test]
    fn reasoning_detail_fragments_are_merged_into_whole_details() {
        let mut a = Assembler::default();
        a.add_reasoning_details(&[
            serde_json::json!({"type": "reasoning.text", "text": "Weigh ", "index": 0}),
        ]);
        a.add_reasoning_details(&[
            serde_json::json!({"type": "reasoning.text", "text": "it.", "index": 0}),
        ]);
        a.add_reasoning_details(&[
            serde_json::json!({"type": "reasoning.text", "signature": "sig", "index": 0}),
        ]);
        a.add_reasoning_details(&[
            serde_json::json!({"type": "reasoning.encrypted", "data": "x", "index": 1}),
        ]);
        a.push(&StreamEvent::Reasoning("Weigh it.".into()));
        a.push(&StreamEvent::Text("Weighed.".into()));
        let Some(Reasoning {
            replay: ReasoningReplay::Details(details),
            ..
        }) = a.finish().expect("done").reasoning
        else {
            panic!("details expected");
        };
        assert_eq!(details.len(), 2);
        assert_eq!(
            details[0],
            serde_json::json!({"type": "reasoning.text", "text": "Weigh it.", "index": 0, "signature": "sig"})
        );
    }

    #[test]
    fn s7_2_a_completion_with_neither_text_nor_a_call_is_malformed() {
        let mut a = Assembler::default();
        a.push(&StreamEvent::Reasoning(
            "Thought, then said nothing.".into(),
        ));
        a.push(&StreamEvent::Text("  \n".into()));
        a.push(&StreamEvent::Finish(FinishReason::Stop));
        assert_eq!(a.finish().err(), Some(Malformed::Empty));
        // A cut that kept nothing is a cut, fed back as one (§7.1).
        let mut cut = Assembler::default();
        cut.push(&StreamEvent::Finish(FinishReason::Length));
        assert!(cut.finish().is_ok_and(|c| c.is_empty()));
    }
}
