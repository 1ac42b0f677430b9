//! Tool calls a provider left in the text instead of structuring them (§4.5):
//! DeepSeek's DSML and tool-call tokens, stray `invoke`/`parameter` tags, a
//! `<tool_call>` wrapper, or a bare call object as the whole reply. Which
//! markup leaks is the provider's own, so it is recognised here, behind the
//! vendor seam, and the turn is handed a leaked call rather than text.

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeakForm {
    /// DeepSeek's DSML (`<｜DSML｜…>`) or tool-call tokens (`<｜tool▁call▁begin｜>`).
    DeepSeek,
    /// `<function_calls>`, `<invoke name=…>`, `<parameter name=…>`.
    InvokeTags,
    /// `<tool_call>{…}</tool_call>`.
    ToolCallWrapper,
    /// The whole reply is a call object (`{"name": …, "arguments": …}`).
    BareObject,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakedCall {
    pub form: LeakForm,
    /// The tool it names, where the markup says.
    pub name: Option<String>,
}

const DEEPSEEK_MARKERS: &[&str] = &[
    "<｜DSML｜",
    "<|DSML|",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<|tool_calls_begin|>",
    "<|tool_call_begin|>",
];

/// The keys a call object is made of; an object with any other key is data.
const CALL_KEYS: &[&str] = &[
    "id",
    "type",
    "name",
    "arguments",
    "parameters",
    "input",
    "args",
    "function",
];

/// The leaked call `text` carries, if it carries one.
pub fn recognise(text: &str) -> Option<LeakedCall> {
    // DeepSeek's tokens never appear in prose, not even quoted.
    if DEEPSEEK_MARKERS.iter().any(|m| text.contains(m)) {
        let name = attribute(text, "name=\"")
            .or_else(|| after(text, "tool▁sep｜>"))
            .or_else(|| after(text, "tool_sep|>"));
        return Some(LeakedCall {
            form: LeakForm::DeepSeek,
            name,
        });
    }
    // Markup quoted as code is an answer about markup, not a call.
    let prose = without_code(text);
    let invoke = prose.contains("<function_calls>")
        || (prose.contains("<invoke name=\"") && prose.contains("</invoke>"));
    if invoke {
        let name = prose
            .find("invoke name=\"")
            .and_then(|i| attribute(&prose[i..], "name=\""));
        return Some(LeakedCall {
            form: LeakForm::InvokeTags,
            name,
        });
    }
    if let Some(start) = prose.find("<tool_call>") {
        let inner = prose[start + "<tool_call>".len()..].trim_start();
        if inner.starts_with('{') || inner.starts_with("<function=") {
            let inner = inner.split("</tool_call>").next().unwrap_or(inner);
            let name = serde_json::from_str::<Value>(inner.trim())
                .ok()
                .and_then(|v| call_name(&v))
                .or_else(|| {
                    inner
                        .strip_prefix("<function=")
                        .and_then(|r| r.split('>').next())
                        .map(str::to_string)
                });
            return Some(LeakedCall {
                form: LeakForm::ToolCallWrapper,
                name,
            });
        }
    }
    bare_call(text)
}

/// A call object as the whole reply, in a fence, or closing the reply after
/// some prose.
fn bare_call(text: &str) -> Option<LeakedCall> {
    let trimmed = text.trim();
    let mut candidates = vec![strip_fence(trimmed)];
    if let Some(open) = trimmed
        .rfind("```")
        .and_then(|close| trimmed[..close].rfind("```"))
    {
        candidates.push(strip_fence(&trimmed[open..]));
    }
    if let Some(brace) = trimmed.rfind("\n{") {
        candidates.push(trimmed[brace..].trim());
    }
    candidates.into_iter().find_map(|candidate| {
        let value: Value = serde_json::from_str(candidate).ok()?;
        let first = match &value {
            Value::Array(items) => items.first()?.clone(),
            other => other.clone(),
        };
        looks_like_call(&first).then(|| LeakedCall {
            form: LeakForm::BareObject,
            name: call_name(&first),
        })
    })
}

/// A JSON value shaped exactly like a tool call.
fn looks_like_call(value: &Value) -> bool {
    let Some(object) = value.as_object() else {
        return false;
    };
    if object.contains_key("tool_calls") {
        return object
            .keys()
            .all(|k| matches!(k.as_str(), "tool_calls" | "role" | "content"))
            && object["tool_calls"].as_array().is_some_and(|calls| {
                !calls.is_empty()
                    && calls.iter().all(|c| {
                        c.get("function")
                            .and_then(|f| f.get("name"))
                            .is_some_and(Value::is_string)
                    })
            });
    }
    if !object.keys().all(|k| CALL_KEYS.contains(&k.as_str())) {
        return false;
    }
    let arguments_shaped = ["arguments", "parameters", "input", "args"]
        .iter()
        .filter_map(|k| object.get(*k))
        .any(|a| a.is_object() || a.is_string());
    let named = object.get("name").is_some_and(Value::is_string) && arguments_shaped;
    let wrapped = object
        .get("function")
        .is_some_and(|f| f.get("name").is_some_and(Value::is_string));
    named || wrapped
}

/// `text` with fenced code blocks and inline code spans blanked out.
fn without_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            out.push('\n');
            continue;
        }
        if in_fence {
            out.push('\n');
            continue;
        }
        let mut in_span = false;
        for c in line.chars() {
            if c == '`' {
                in_span = !in_span;
            } else if !in_span {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

fn call_name(value: &Value) -> Option<String> {
    value
        .get("name")
        .or_else(|| value.get("function").and_then(|f| f.get("name")))
        .or_else(|| {
            value
                .get("tool_calls")
                .and_then(|c| c.get(0))
                .and_then(|c| c.get("function"))
                .and_then(|f| f.get("name"))
        })
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.split_once('\n').map_or(rest, |(_, body)| body);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

/// The value of the first `key"…"` attribute.
fn attribute(text: &str, key: &str) -> Option<String> {
    let start = text.find(key)? + key.len();
    let end = text[start..].find('"')?;
    Some(text[start..start + end].to_string())
}

/// The word after a marker, up to the end of its line.
fn after(text: &str, marker: &str) -> Option<String> {
    let start = text.find(marker)? + marker.len();
    let name: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '<')
        .collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_leak_is_recognised_with_its_tool() {
        let dsml = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"web__fetch\">\n<｜DSML｜parameter name=\"url\" string=\"true\">https://x</｜DSML｜parameter>";
        assert_eq!(
            recognise(dsml),
            Some(LeakedCall {
                form: LeakForm::DeepSeek,
                name: Some("web__fetch".into())
            })
        );
        let tokens = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{}\n```";
        assert_eq!(recognise(tokens).map(|l| l.form), Some(LeakForm::DeepSeek));
        let invoke = "I will look.\n<function_calls>\n<invoke name=\"web__search\">\n<parameter name=\"q\">x</parameter>\n</invoke>";
        assert_eq!(
            recognise(invoke),
            Some(LeakedCall {
                form: LeakForm::InvokeTags,
                name: Some("web__search".into())
            })
        );
        let wrapper = "<tool_call>{\"name\": \"memory__write\", \"arguments\": {}}</tool_call>";
        assert_eq!(
            recognise(wrapper),
            Some(LeakedCall {
                form: LeakForm::ToolCallWrapper,
                name: Some("memory__write".into())
            })
        );
        let bare = "```json\n{\"name\": \"mail__send\", \"arguments\": {\"to\": \"a@b\"}}\n```";
        assert_eq!(
            recognise(bare),
            Some(LeakedCall {
                form: LeakForm::BareObject,
                name: Some("mail__send".into())
            })
        );
    }

    #[test]
    fn prose_and_ordinary_json_are_not_leaks() {
        assert_eq!(recognise("The weather in Paris is mild."), None);
        assert_eq!(
            recognise("{\"city\": \"Paris\", \"temperature\": 12}"),
            None
        );
        assert_eq!(recognise("Use `name` and `arguments` fields."), None);
    }
}
