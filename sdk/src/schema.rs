//! JSON Schemas generated from the plugin's own types (schemars), as sent
//! in `Describe`: one declaration, stated once in the type (§3.14).

use schemars::JsonSchema;
use serde_json::Value;

/// The schema of `T` as a JSON value, without the `$schema` and `title`
/// annotations, which say nothing the daemon or the model reads.
pub fn of<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T))
        .unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// The address.
        url: String,
        note: Option<String>,
    }

    #[test]
    fn s3_14_a_tools_schema_is_generated_from_its_argument_type() {
        let schema = of::<Args>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["url"]["type"], "string");
        assert_eq!(schema["properties"]["url"]["description"], "The address.");
        assert_eq!(schema["required"], serde_json::json!(["url"]));
        assert!(schema.get("$schema").is_none());
        assert!(schema.get("title").is_none());
    }
}
