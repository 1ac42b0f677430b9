//! A call's arguments against its tool's schema (§7.2). Arguments the schema
//! refuses are answered with one result naming what was refused; an argument
//! the tool does not declare is ignored and the result says so, unless the
//! schema refuses undeclared keys; a refused size states the size received.
//! Size bounds are stated in the parameter's description for the provider
//! and enforced here, never sent as schema bounds: a provider that enforces
//! one while decoding cuts the value to fit, and the cut value then passes
//! (A4).

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::{Map, Value};

/// Keywords that bound a value's size, moved into its description for the
/// provider. A number's `maximum` is one too: a length or a count asked
/// for, which a decoder held to it would lower to fit, and the lowered
/// value would then pass (§7.2).
const SIZE_BOUNDS: [(&str, &str); 5] = [
    ("maxLength", "characters"),
    ("maxItems", "items"),
    ("maxProperties", "entries"),
    ("maximum", ""),
    ("exclusiveMaximum", ""),
];

/// Arguments the tool may run with.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub value: Value,
    /// Undeclared arguments dropped, which the result mentions.
    pub ignored: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// The text is not JSON at all: forgiven once, then the turn ends (§7.1).
    /// The provider's raw text is never read back to the model.
    #[error("the arguments are not valid JSON")]
    Unparseable,
    /// The schema refused them: a result the model reads, costing an attempt.
    #[error("the arguments were refused: {}", .0.join("; "))]
    Refused(Vec<String>),
}

/// Parses and checks `arguments` against `schema`.
pub fn accept(schema: &Value, arguments: &str) -> Result<Accepted, ArgumentError> {
    let mut value: Value =
        serde_json::from_str(arguments).map_err(|_| ArgumentError::Unparseable)?;
    let mut ignored = Vec::new();
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    if let (Value::Object(given), Some(Value::Object(declared))) =
        (&mut value, schema.get("properties"))
        && !closed
    {
        ignored = given
            .keys()
            .filter(|k| !declared.contains_key(*k))
            .cloned()
            .collect();
        for key in &ignored {
            given.remove(key);
        }
    }
    let validator = jsonschema::validator_for(schema).map_err(|e| {
        ArgumentError::Refused(vec![format!("the tool's schema is malformed: {e}")])
    })?;
    let problems: Vec<String> = validator.iter_errors(&value).map(|e| render(&e)).collect();
    if problems.is_empty() {
        Ok(Accepted { value, ignored })
    } else {
        Err(ArgumentError::Refused(problems))
    }
}

fn render(error: &jsonschema::ValidationError<'_>) -> String {
    let path: Vec<String> = error
        .instance_path()
        .segments()
        .map(|segment| match segment {
            LocationSegment::Property(key) => key.to_string(),
            LocationSegment::Index(index) => index.to_string(),
        })
        .collect();
    let at = if path.is_empty() {
        "the arguments".to_string()
    } else {
        format!("`{}`", path.join("."))
    };
    match error.kind() {
        ValidationErrorKind::MaxLength { limit } => format!(
            "{at} is {} characters long; at most {limit} are accepted",
            error.instance().as_str().map_or(0, |s| s.chars().count())
        ),
        ValidationErrorKind::MaxItems { limit } => format!(
            "{at} has {} items; at most {limit} are accepted",
            error.instance().as_array().map_or(0, Vec::len)
        ),
        ValidationErrorKind::MaxProperties { limit } => format!(
            "{at} has {} entries; at most {limit} are accepted",
            error.instance().as_object().map_or(0, Map::len)
        ),
        ValidationErrorKind::Maximum { limit } => {
            format!("{at} is {}; at most {limit} is accepted", error.instance())
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!(
                "{at} is {}; less than {limit} is accepted",
                error.instance()
            )
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            if path.is_empty() {
                format!("`{name}` is required")
            } else {
                format!("{at}.{name} is required")
            }
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => format!(
            "{} not accepted by this tool",
            unexpected
                .iter()
                .map(|k| format!("`{k}` is"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!("{at}: {error}"),
    }
}

/// The schema as the provider sees it: every size bound moved into the
/// description of the value it bounds.
pub fn provider_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            let mut stated = Vec::new();
            for (key, value) in map {
                match SIZE_BOUNDS.iter().find(|(bound, _)| bound == key) {
                    Some((bound, unit)) => stated.push(stated_bound(bound, value, unit)),
                    // A map of property names to schemas: a property may be
                    // called `maxLength` without being a bound.
                    None if key == "properties" => {
                        out.insert(key.clone(), named_schemas(value));
                    }
                    None => {
                        out.insert(key.clone(), provider_schema(value));
                    }
                }
            }
            if !stated.is_empty() {
                let description = out
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|d| format!("{d} {}", stated.join(" ")))
                    .unwrap_or_else(|| stated.join(" "));
                out.insert("description".into(), Value::String(description));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(provider_schema).collect()),
        other => other.clone(),
    }
}

/// A size bound as the description states it.
fn stated_bound(bound: &str, value: &Value, unit: &str) -> String {
    match (bound, unit) {
        ("exclusiveMaximum", _) => format!("Less than {value}."),
        (_, "") => format!("At most {value}."),
        _ => format!("At most {value} {unit}."),
    }
}

fn named_schemas(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(name, schema)| (name.clone(), provider_schema(schema)))
                .collect(),
        ),
        other => provider_schema(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Registry, ToolRef};

    /// Every key in `schema` that would bind the provider's decoding to a
    /// size, wherever it sits (a property may be named like one).
    fn bounds_in(schema: &Value, found: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                for (key, value) in map {
                    if key == "properties" {
                        if let Value::Object(properties) = value {
                            properties.values().for_each(|p| bounds_in(p, found));
                        }
                        continue;
                    }
                    if SIZE_BOUNDS.iter().any(|(bound, _)| bound == key) {
                        found.push(key.clone());
                    }
                    bounds_in(value, found);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| bounds_in(i, found)),
            _ => {}
        }
    }

    #[test]
    fn s7_2_no_size_bound_reaches_the_provider_as_a_schema_bound() {
        let registry = Registry::framework();
        for toolset in registry.toolsets() {
            for tool in &toolset.tools {
                let Some(schema) = &tool.parameters else {
                    continue;
                };
                let mut found = Vec::new();
                bounds_in(&provider_schema(schema), &mut found);
                assert!(
                    found.is_empty(),
                    "{}::{} sends {found:?}",
                    toolset.namespace,
                    tool.name
                );
            }
        }
        let read = registry
            .tool(&ToolRef::new("results", "read"))
            .and_then(|t| t.parameters.clone())
            .expect("results::read is declared with parameters");
        let sent = provider_schema(&read);
        let length = sent["properties"]["length"]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(length.contains("At most 20000."), "{length}");
    }

    #[test]
    fn s7_2_a_length_over_its_bound_is_refused_stating_the_length_received() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"length": {"type": "integer", "maximum": 20000}}
        });
        let refused = accept(&schema, r#"{"length": 50000}"#).expect_err("refused");
        assert_eq!(
            refused,
            ArgumentError::Refused(vec![
                "`length` is 50000; at most 20000 is accepted".to_string()
            ])
        );
    }
}
