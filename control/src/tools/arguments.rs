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
/// provider.
const SIZE_BOUNDS: [(&str, &str); 3] = [
    ("maxLength", "characters"),
    ("maxItems", "items"),
    ("maxProperties", "entries"),
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
                    Some((_, unit)) => stated.push(format!("At most {value} {unit}.")),
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
