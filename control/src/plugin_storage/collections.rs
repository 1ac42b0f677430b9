//! The collections a plugin declares in its `Describe` answer (§3.14), each
//! compiled once at boot: a JSON Schema that is an object of top-level
//! fields, every field typed for the query grammar. What does not compile is
//! refused naming the plugin and the collection, never left out (§3.14:
//! refused, never skipped).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use collegium_proto::toolset::v1::StorageCollection;
use serde_json::Value;

use super::records::STAMPED_FIELDS;

/// A JSON scalar type a top-level field may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ScalarKind {
    String,
    Integer,
    Number,
    Boolean,
    Null,
}

impl ScalarKind {
    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            "null" => Self::Null,
            _ => return None,
        })
    }

    fn of(value: &Value) -> Option<Self> {
        Some(match value {
            Value::String(_) => Self::String,
            Value::Number(n) if n.is_i64() || n.is_u64() => Self::Integer,
            Value::Number(_) => Self::Number,
            Value::Bool(_) => Self::Boolean,
            Value::Null => Self::Null,
            Value::Array(_) | Value::Object(_) => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Null => "null",
        }
    }
}

/// What the query grammar may ask of a top-level field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    /// A scalar of one of these JSON types.
    Scalar(BTreeSet<ScalarKind>),
    /// An object, an array, or a field whose schema names no scalar type:
    /// stored and validated, never queried.
    NotScalar,
}

/// One compiled collection.
pub struct Collection {
    pub name: String,
    validator: jsonschema::Validator,
    fields: BTreeMap<String, FieldType>,
}

impl std::fmt::Debug for Collection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collection")
            .field("name", &self.name)
            .field("fields", &self.fields)
            .finish_non_exhaustive()
    }
}

impl Collection {
    /// Compiles one declared schema, or says what is wrong with it.
    pub fn compile(name: &str, schema_json: &str) -> Result<Self, String> {
        let schema: Value = serde_json::from_str(schema_json)
            .map_err(|e| format!("has a schema that is not JSON: {e}"))?;
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| format!("has a schema that is not a JSON Schema: {e}"))?;
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(
                "is not an object of top-level fields: its schema must say \"type\": \"object\""
                    .into(),
            );
        }
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return Err(
                "is not an object of top-level fields: its schema declares no \"properties\""
                    .into(),
            );
        };
        let mut fields = BTreeMap::new();
        for (field, property) in properties {
            if STAMPED_FIELDS.contains(&field.as_str()) {
                return Err(format!(
                    "declares the field `{field}`, which the store stamps on every record (§3.14); rename it"
                ));
            }
            if field.is_empty()
                || field
                    .chars()
                    .any(|c| c == '"' || c == '\\' || c.is_control())
            {
                return Err(format!(
                    "declares the field {field:?}, a name no query can address; use one without quotes, backslashes or control characters"
                ));
            }
            fields.insert(field.clone(), field_type(property));
        }
        Ok(Self {
            name: name.to_owned(),
            validator,
            fields,
        })
    }

    /// The declared type of a top-level field, if it is declared.
    pub fn field(&self, name: &str) -> Option<&FieldType> {
        self.fields.get(name)
    }

    /// The declared top-level fields, in name order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.keys().map(String::as_str)
    }

    /// Every way `data` does not fit the schema, each at its JSON pointer.
    pub fn problems(&self, data: &Value) -> Vec<String> {
        self.validator
            .iter_errors(data)
            .map(|error| {
                let at = error.instance_path().as_str().to_owned();
                if at.is_empty() {
                    error.to_string()
                } else {
                    format!("at {at}: {error}")
                }
            })
            .collect()
    }
}

/// The query type of one property schema: scalar types named by `type`, or
/// else by the values an `enum` or `const` allows.
fn field_type(property: &Value) -> FieldType {
    let kinds: Option<BTreeSet<ScalarKind>> = match property.get("type") {
        Some(Value::String(name)) => ScalarKind::named(name).map(|k| BTreeSet::from([k])),
        Some(Value::Array(names)) => names
            .iter()
            .map(|n| n.as_str().and_then(ScalarKind::named))
            .collect(),
        Some(_) => None,
        None => match (property.get("enum"), property.get("const")) {
            (Some(Value::Array(values)), _) => values.iter().map(ScalarKind::of).collect(),
            (None, Some(value)) => ScalarKind::of(value).map(|k| BTreeSet::from([k])),
            _ => None,
        },
    };
    match kinds {
        Some(kinds) if !kinds.is_empty() => FieldType::Scalar(kinds),
        _ => FieldType::NotScalar,
    }
}

/// A collection a plugin declared that cannot be served (§3.14).
#[derive(Debug, thiserror::Error)]
pub enum CollectionError {
    #[error("plugin `{namespace}`: its storage collection `{collection}` {problem} (§3.14)")]
    Refused {
        namespace: String,
        collection: String,
        problem: String,
    },
    #[error(
        "plugin `{namespace}`: it declares a storage collection with no name; name every collection (§3.14)"
    )]
    Unnamed { namespace: String },
    #[error(
        "plugin `{namespace}`: it declares the storage collection `{collection}` twice; declare each once (§3.14)"
    )]
    Duplicate {
        namespace: String,
        collection: String,
    },
}

/// Every collection one plugin declared, compiled: what its connections
/// serve. Shared by each connection the plugin opens.
#[derive(Debug, Clone)]
pub struct Collections {
    namespace: String,
    by_name: Arc<BTreeMap<String, Collection>>,
}

impl Collections {
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn get(&self, name: &str) -> Option<&Collection> {
        self.by_name.get(name)
    }

    /// The declared collection names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.by_name.keys().map(String::as_str).collect()
    }
}

/// Compiles every collection `namespace` declares: the boot check (§3.14
/// boot refusals) and what its storage connections serve. A schema that does
/// not compile, or is not an object of top-level fields, is refused naming
/// the plugin and the collection.
pub fn compile(
    namespace: &str,
    declared: &[StorageCollection],
) -> Result<Collections, CollectionError> {
    let mut by_name = BTreeMap::new();
    for collection in declared {
        if collection.name.trim().is_empty() {
            return Err(CollectionError::Unnamed {
                namespace: namespace.to_owned(),
            });
        }
        if by_name.contains_key(&collection.name) {
            return Err(CollectionError::Duplicate {
                namespace: namespace.to_owned(),
                collection: collection.name.clone(),
            });
        }
        let compiled =
            Collection::compile(&collection.name, &collection.schema_json).map_err(|problem| {
                CollectionError::Refused {
                    namespace: namespace.to_owned(),
                    collection: collection.name.clone(),
                    problem,
                }
            })?;
        by_name.insert(collection.name.clone(), compiled);
    }
    Ok(Collections {
        namespace: namespace.to_owned(),
        by_name: Arc::new(by_name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(name: &str, schema: &str) -> StorageCollection {
        StorageCollection {
            name: name.into(),
            schema_json: schema.into(),
        }
    }

    fn refusal(schema: &str) -> String {
        compile("bookmark", &[declared("marks", schema)])
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn s3_14_a_collection_is_an_object_of_typed_top_level_fields() {
        let collections = compile(
            "bookmark",
            &[declared(
                "marks",
                r#"{"type":"object","properties":{
                    "url":{"type":"string"},
                    "stars":{"type":"integer"},
                    "score":{"type":["number","null"]},
                    "kind":{"enum":["a","b"]},
                    "tags":{"type":"array","items":{"type":"string"}},
                    "meta":{"type":"object"},
                    "free":{}
                }}"#,
            )],
        )
        .expect("compiles");
        let marks = collections.get("marks").expect("declared");
        let scalar = |kinds: &[ScalarKind]| FieldType::Scalar(kinds.iter().copied().collect());
        assert_eq!(marks.field("url"), Some(&scalar(&[ScalarKind::String])));
        assert_eq!(marks.field("stars"), Some(&scalar(&[ScalarKind::Integer])));
        assert_eq!(
            marks.field("score"),
            Some(&scalar(&[ScalarKind::Number, ScalarKind::Null]))
        );
        assert_eq!(marks.field("kind"), Some(&scalar(&[ScalarKind::String])));
        assert_eq!(marks.field("tags"), Some(&FieldType::NotScalar));
        assert_eq!(marks.field("meta"), Some(&FieldType::NotScalar));
        assert_eq!(marks.field("free"), Some(&FieldType::NotScalar));
        assert_eq!(marks.field("nope"), None);
        assert_eq!(collections.names(), ["marks"]);
    }

    #[test]
    fn s3_14_a_schema_that_does_not_compile_is_refused_naming_plugin_and_collection() {
        let message = refusal("{not json");
        assert!(message.contains("plugin `bookmark`"), "{message}");
        assert!(message.contains("collection `marks`"), "{message}");
        assert!(message.contains("not JSON"), "{message}");
        let message = refusal(r#"{"type":"object","properties":{"a":{"type":12}}}"#);
        assert!(message.contains("not a JSON Schema"), "{message}");
    }

    #[test]
    fn s3_14_a_collection_that_is_not_an_object_of_top_level_fields_is_refused() {
        assert!(refusal(r#"{"type":"array"}"#).contains("\"type\": \"object\""));
        assert!(refusal(r#"{"type":"object"}"#).contains("no \"properties\""));
        assert!(
            refusal(r#"{"type":"object","properties":{"id":{"type":"string"}}}"#)
                .contains("stamps")
        );
        assert!(
            refusal(r#"{"type":"object","properties":{"a\"b":{"type":"string"}}}"#)
                .contains("no query can address")
        );
    }

    #[test]
    fn s3_14_a_duplicate_or_unnamed_collection_is_refused() {
        let schema = r#"{"type":"object","properties":{}}"#;
        let twice = compile("bookmark", &[declared("m", schema), declared("m", schema)]);
        assert!(matches!(twice, Err(CollectionError::Duplicate { .. })));
        let unnamed = compile("bookmark", &[declared(" ", schema)]);
        assert!(matches!(unnamed, Err(CollectionError::Unnamed { .. })));
    }
}
