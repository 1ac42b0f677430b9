//! One record's life (§3.14): a write checked whole against its
//! collection's schema before it lands, a taken id refused, a patch merged
//! into the top level and the whole checked again, every read parsed, and
//! the stamps (`id`, `createdAt`, `updatedAt`) the store's alone. These run
//! on the store thread, so a patch's read and write see no other write
//! between them.

use serde_json::{Map, Value};

use super::collections::Collection;
use super::error::StorageError;
use crate::store::{Millis, RecordFilter, Store, StoredRecord};

/// The largest record, as the JSON text of its declared fields, a plugin
/// may store: storage is for records, not files.
pub const MAX_RECORD_BYTES: usize = 64 * 1024;

/// The longest id a plugin may choose.
pub const MAX_ID_CHARS: usize = 128;

/// The fields the store stamps on every record it returns (§3.14).
pub const STAMPED_FIELDS: [&str; 3] = ["id", "createdAt", "updatedAt"];

/// A record as read back: its declared fields, parsed, and its stamps.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub collection: String,
    pub id: String,
    pub data: Map<String, Value>,
    pub created_at: Millis,
    pub updated_at: Millis,
}

impl Record {
    /// The declared fields with the store's stamps beside them: `id`, and
    /// `createdAt`/`updatedAt` as RFC 3339 UTC times.
    pub fn stamped(&self) -> Map<String, Value> {
        let mut data = self.data.clone();
        data.insert("id".into(), Value::String(self.id.clone()));
        data.insert("createdAt".into(), Value::String(rfc3339(self.created_at)));
        data.insert("updatedAt".into(), Value::String(rfc3339(self.updated_at)));
        data
    }
}

fn rfc3339(at: Millis) -> String {
    chrono::DateTime::from_timestamp_millis(at)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| at.to_string())
}

/// Parses what a plugin sent as one JSON object.
pub fn object(what: &'static str, text: &str) -> Result<Map<String, Value>, StorageError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(StorageError::NotAnObject {
            what,
            detail: format!("it is {}", kind(&other)),
        }),
        Err(e) => Err(StorageError::NotAnObject {
            what,
            detail: format!("it is not JSON ({e})"),
        }),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A record id a plugin chose: not empty (the caller assigns one for
/// empty), bounded, printable.
pub fn check_id(id: &str) -> Result<(), StorageError> {
    let problem = if id.chars().count() > MAX_ID_CHARS {
        "too long"
    } else if id.chars().any(char::is_control) {
        "holding a control character"
    } else if id.trim().is_empty() {
        "blank"
    } else {
        return Ok(());
    };
    Err(StorageError::BadId {
        id: id.chars().take(MAX_ID_CHARS + 8).collect(),
        problem,
        max: MAX_ID_CHARS,
    })
}

/// Checks declared fields about to be written — no stamp among them,
/// within the size limit, fitting the schema whole — and returns their
/// JSON text. `patched` names the record a patch would leave.
pub fn check_written(
    collection: &Collection,
    data: &Map<String, Value>,
    patched: Option<&str>,
) -> Result<String, StorageError> {
    if let Some(field) = STAMPED_FIELDS.iter().find(|f| data.contains_key(**f)) {
        return Err(StorageError::Stamped {
            field: (*field).to_owned(),
        });
    }
    let text = Value::Object(data.clone()).to_string();
    if text.len() > MAX_RECORD_BYTES {
        return Err(StorageError::TooLarge {
            collection: collection.name.clone(),
            size: text.len(),
            limit: MAX_RECORD_BYTES,
        });
    }
    let problems = collection.problems(&Value::Object(data.clone()));
    if !problems.is_empty() {
        return Err(StorageError::Invalid {
            collection: collection.name.clone(),
            id: patched.map(str::to_owned),
            problems,
        });
    }
    Ok(text)
}

/// Parses a stored row against the collection's schema as it is now: a row
/// that no longer parses is an error naming it, never skipped (§3.14).
pub fn parse_stored(collection: &Collection, row: StoredRecord) -> Result<Record, StorageError> {
    let unparsable = |problems| StorageError::Unparsable {
        collection: collection.name.clone(),
        id: row.id.clone(),
        problems,
    };
    let data = match serde_json::from_str::<Value>(&row.data) {
        Ok(Value::Object(map)) => map,
        Ok(other) => return Err(unparsable(vec![format!("it is {}", kind(&other))])),
        Err(e) => return Err(unparsable(vec![format!("it is not JSON ({e})")])),
    };
    let problems = collection.problems(&Value::Object(data.clone()));
    if !problems.is_empty() {
        return Err(unparsable(problems));
    }
    Ok(Record {
        collection: collection.name.clone(),
        id: row.id,
        data,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// Creates a record under `id`, or under a fresh id when `id` is empty.
pub fn create(
    store: &Store,
    namespace: &str,
    collection: &Collection,
    id: &str,
    data: Map<String, Value>,
    at: Millis,
) -> Result<Record, StorageError> {
    let id = if id.is_empty() {
        uuid::Uuid::now_v7().to_string()
    } else {
        check_id(id)?;
        id.to_owned()
    };
    let text = check_written(collection, &data, None)?;
    if !store.insert_plugin_record(namespace, &collection.name, &id, &text, at)? {
        return Err(StorageError::Taken {
            collection: collection.name.clone(),
            id,
        });
    }
    Ok(Record {
        collection: collection.name.clone(),
        id,
        data,
        created_at: at,
        updated_at: at,
    })
}

pub fn get(
    store: &Store,
    namespace: &str,
    collection: &Collection,
    id: &str,
) -> Result<Record, StorageError> {
    let row = store
        .plugin_record(namespace, &collection.name, id)?
        .ok_or_else(|| StorageError::NotFound {
            collection: collection.name.clone(),
            id: id.to_owned(),
        })?;
    parse_stored(collection, row)
}

/// Merges `patch` into the record's top level and writes the whole, once it
/// fits the schema again; otherwise the stored record stays as it was.
pub fn patch(
    store: &Store,
    namespace: &str,
    collection: &Collection,
    id: &str,
    patch: Map<String, Value>,
    at: Millis,
) -> Result<Record, StorageError> {
    let not_found = || StorageError::NotFound {
        collection: collection.name.clone(),
        id: id.to_owned(),
    };
    let row = store
        .plugin_record(namespace, &collection.name, id)?
        .ok_or_else(not_found)?;
    // The stored row need not parse as the schema is now: the patch may be
    // what mends it. The merged whole must.
    let mut data = match serde_json::from_str::<Value>(&row.data) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    if let Some(field) = STAMPED_FIELDS.iter().find(|f| patch.contains_key(**f)) {
        return Err(StorageError::Stamped {
            field: (*field).to_owned(),
        });
    }
    data.extend(patch);
    let text = check_written(collection, &data, Some(id))?;
    let at = at.max(row.created_at);
    if !store.update_plugin_record(namespace, &collection.name, id, &text, at)? {
        return Err(not_found());
    }
    Ok(Record {
        collection: collection.name.clone(),
        id: row.id,
        data,
        created_at: row.created_at,
        updated_at: at,
    })
}

pub fn delete(
    store: &Store,
    namespace: &str,
    collection: &Collection,
    id: &str,
) -> Result<bool, StorageError> {
    Ok(store.delete_plugin_record(namespace, &collection.name, id)?)
}

/// The records `filters` select, every one parsed: the first that does not
/// parse fails the whole query, named, rather than being left out.
pub fn query(
    store: &Store,
    namespace: &str,
    collection: &Collection,
    filters: &[RecordFilter],
    limit: Option<u32>,
) -> Result<Vec<Record>, StorageError> {
    store
        .query_plugin_records(namespace, &collection.name, filters, limit)?
        .into_iter()
        .map(|row| parse_stored(collection, row))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn marks() -> Collection {
        Collection::compile(
            "marks",
            r#"{"type":"object","required":["url"],"additionalProperties":false,
                "properties":{"url":{"type":"string"},"title":{"type":"string"}}}"#,
        )
        .expect("compiles")
    }

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn s3_14_a_write_must_fit_the_schema_whole() {
        let marks = marks();
        assert!(check_written(&marks, &map(json!({"url": "u"})), None).is_ok());
        let error =
            check_written(&marks, &map(json!({"title": "t"})), None).expect_err("url is required");
        assert!(matches!(error, StorageError::Invalid { .. }), "{error}");
        assert!(error.to_string().contains("url"), "{error}");
        let error = check_written(&marks, &map(json!({"url": 3})), None).expect_err("typed");
        assert!(error.to_string().contains("/url"), "{error}");
    }

    #[test]
    fn s3_14_stamped_fields_are_the_stores_alone() {
        for field in STAMPED_FIELDS {
            let error = check_written(&marks(), &map(json!({"url": "u", field: "x"})), None)
                .expect_err("stamped");
            assert!(matches!(error, StorageError::Stamped { .. }), "{error}");
        }
    }

    #[test]
    fn s3_14_an_oversized_record_is_refused_naming_the_limit_and_its_size() {
        let big = "x".repeat(MAX_RECORD_BYTES);
        let error = check_written(&marks(), &map(json!({"url": big})), None).expect_err("big");
        let message = error.to_string();
        assert!(message.contains(&MAX_RECORD_BYTES.to_string()), "{message}");
        assert!(
            message.contains(&(MAX_RECORD_BYTES + 10).to_string()),
            "{message}"
        );
    }

    #[test]
    fn s3_14_a_chosen_id_is_bounded_and_printable() {
        assert!(check_id("abc-1").is_ok());
        assert!(check_id(&"a".repeat(MAX_ID_CHARS + 1)).is_err());
        assert!(check_id("a\nb").is_err());
        assert!(check_id("   ").is_err());
    }

    #[test]
    fn s3_14_a_row_that_no_longer_parses_is_an_error_naming_it() {
        let row = StoredRecord {
            id: "r1".into(),
            data: r#"{"title":"no url"}"#.into(),
            created_at: 1,
            updated_at: 1,
        };
        let error = parse_stored(&marks(), row).expect_err("unparsable");
        assert!(matches!(error, StorageError::Unparsable { ref id, .. } if id == "r1"));
        assert!(error.to_string().contains("`r1`"), "{error}");
    }

    #[test]
    fn s3_14_the_store_stamps_id_and_times_into_what_is_returned() {
        let record = Record {
            collection: "marks".into(),
            id: "r1".into(),
            data: map(json!({"url": "u"})),
            created_at: 0,
            updated_at: 1_500,
        };
        assert_eq!(
            Value::Object(record.stamped()),
            json!({"url": "u", "id": "r1",
                   "createdAt": "1970-01-01T00:00:00.000Z",
                   "updatedAt": "1970-01-01T00:00:01.500Z"})
        );
    }
}
