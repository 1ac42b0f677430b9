//! The file's JSON Schema, generated from the typed configuration, and the
//! structural pass that checks a parsed file against it so that every
//! misplaced, mistyped or unknown key is reported at once.

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::Value;

use super::model::Config;
use super::problems::{KeyPath, Problem};

/// The JSON Schema of a whole configuration file, for editors and for the
/// structural check.
pub fn config_schema() -> Value {
    let schema = schemars::schema_for!(Config);
    schema.to_value()
}

/// Checks `instance` against `schema`, returning one problem per violation,
/// each rooted at `base`.
pub fn structural_problems(schema: &Value, instance: &Value, base: &KeyPath) -> Vec<Problem> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(validator) => validator,
        Err(error) => {
            return vec![Problem::new(
                base.clone(),
                format!("the schema this is checked against is malformed: {error}"),
            )];
        }
    };
    let mut problems = Vec::new();
    for error in validator.iter_errors(instance) {
        render(&error, base, &mut problems);
    }
    problems
}

fn render(error: &jsonschema::ValidationError<'_>, base: &KeyPath, problems: &mut Vec<Problem>) {
    let mut path = base.clone();
    for segment in error.instance_path().segments() {
        path = match segment {
            LocationSegment::Property(key) => path.key(&key),
            LocationSegment::Index(index) => path.index(index),
        };
    }
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            for key in unexpected {
                problems.push(Problem::new(
                    path.key(key),
                    "unknown key (a misspelt option is never ignored)",
                ));
            }
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            problems.push(Problem::new(path.key(name), "missing; it is required"));
        }
        ValidationErrorKind::Type { .. } => {
            problems.push(Problem::new(
                path,
                format!("{}, but {}", describe(error.instance()), expectation(error)),
            ));
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            // An optional value is `anyOf [its schema, null]`: where only one
            // branch is not the null one, its own problems say what is wrong.
            let real: Vec<_> = context
                .iter()
                .filter(|branch| !only_wants_null(branch))
                .collect();
            match real.as_slice() {
                [branch] => {
                    for inner in *branch {
                        render(inner, base, problems);
                    }
                }
                _ => problems.push(Problem::new(
                    path,
                    format!(
                        "{} matches none of the accepted forms",
                        describe(error.instance())
                    ),
                )),
            }
        }
        ValidationErrorKind::Enum { options } => {
            let accepted: Vec<String> = options
                .as_array()
                .map(|values| values.iter().map(ToString::to_string).collect())
                .unwrap_or_default();
            problems.push(Problem::new(
                path,
                format!(
                    "{} is not one of the accepted values: {}",
                    describe(error.instance()),
                    accepted.join(", ")
                ),
            ));
        }
        _ => problems.push(Problem::new(path, error.to_string())),
    }
}

fn only_wants_null(branch: &[jsonschema::ValidationError<'_>]) -> bool {
    use jsonschema::error::TypeKind;
    use jsonschema::types::JsonType;
    !branch.is_empty()
        && branch.iter().all(|e| {
            matches!(
                e.kind(),
                ValidationErrorKind::Type {
                    kind: TypeKind::Single(JsonType::Null)
                }
            )
        })
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "no value".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a table".into(),
    }
}

fn expectation(error: &jsonschema::ValidationError<'_>) -> String {
    // The library's own sentence names the expected type; keep only that part.
    let sentence = error.to_string();
    match sentence.split_once(" is not of type ") {
        Some((_, expected)) => format!("it must be of type {expected}"),
        None => sentence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_structural_problem_is_reported_with_its_path() {
        let schema = config_schema();
        let instance = json!({
            "deployment": {"operator_timezone": "UTC", "main_chanel": "x"},
            "mattermost": {"url": "http://x", "team": "t"},
            "agents": [{"username": "a", "model": "m", "grants": ["web", 3]}],
        });
        let problems = structural_problems(&schema, &instance, &KeyPath::root());
        let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(
            rendered.contains(
                &"deployment.main_chanel: unknown key (a misspelt option is never ignored)"
                    .to_string()
            ),
            "{rendered:#?}"
        );
        assert!(
            rendered.contains(&"deployment.main_channel: missing; it is required".to_string()),
            "{rendered:#?}"
        );
        assert!(
            rendered
                .iter()
                .any(|p| p.starts_with("agents[0].grants[1]: the number 3, but it must be of type")),
            "{rendered:#?}"
        );
        assert_eq!(problems.len(), 3, "{rendered:#?}");
    }
}
