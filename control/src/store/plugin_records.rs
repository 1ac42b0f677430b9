//! Plugin records (§3.14): the one table every plugin's storage lives in,
//! a record's id unique within its namespace and collection, the rows kept
//! in the order a query answers in (migration 0016). Every statement binds its values;
//! a query's conditions arrive already checked against the collection's
//! declared fields (`plugin_storage::query`), and even the JSON path of a
//! field is a bound parameter, so nothing a plugin sends is ever SQL.

use rusqlite::{OptionalExtension, params, params_from_iter};

use super::{Millis, Store, StoreError};

/// One row as stored: the declared shape as JSON text, and the stamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    pub id: String,
    pub data: String,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// A JSON scalar a condition compares with, as SQLite's `json_extract`
/// yields it (a boolean is 1 or 0 there).
#[derive(Debug, Clone, PartialEq)]
pub enum FilterValue {
    Null,
    Boolean(bool),
    Integer(i64),
    Real(f64),
    Text(String),
}

/// One checked condition on a top-level field.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordFilter {
    /// The SQLite JSON path of a declared field: `$."name"`.
    pub path: String,
    pub test: FilterTest,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FilterTest {
    Equals(FilterValue),
    OneOf(Vec<FilterValue>),
    /// Already case-folded.
    Contains(String),
}

/// The name of the SQL function a contains condition calls: Unicode case
/// folding, which SQLite's own `lower()` does only for ASCII.
const CONTAINS: &str = "collegium_contains_folded";

impl FilterValue {
    fn sql(&self) -> rusqlite::types::Value {
        use rusqlite::types::Value;
        match self {
            Self::Null => Value::Null,
            Self::Boolean(b) => Value::Integer(i64::from(*b)),
            Self::Integer(i) => Value::Integer(*i),
            Self::Real(r) => Value::Real(*r),
            Self::Text(t) => Value::Text(t.clone()),
        }
    }
}

fn stored(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredRecord> {
    Ok(StoredRecord {
        id: row.get(0)?,
        data: row.get(1)?,
        created_at: row.get(2)?,
        updated_at: row.get(3)?,
    })
}

impl Store {
    /// Inserts a record; `false`, and nothing written, when the id is taken
    /// in the collection: a taken id is refused, never overwritten (§3.14).
    pub fn insert_plugin_record(
        &self,
        namespace: &str,
        collection: &str,
        id: &str,
        data: &str,
        at: Millis,
    ) -> Result<bool, StoreError> {
        let inserted = self.conn.execute(
            "INSERT INTO plugin_records (namespace, collection, id, data, created_at, updated_at)
             VALUES (?1, ?2, ?3, jsonb(?4), ?5, ?5)
             ON CONFLICT (namespace, collection, id) DO NOTHING",
            params![namespace, collection, id, data, at],
        )?;
        Ok(inserted == 1)
    }

    pub fn plugin_record(
        &self,
        namespace: &str,
        collection: &str,
        id: &str,
    ) -> Result<Option<StoredRecord>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT id, json(data), created_at, updated_at FROM plugin_records
                 WHERE namespace = ?1 AND collection = ?2 AND id = ?3",
            )?
            .query_row(params![namespace, collection, id], stored)
            .optional()?)
    }

    /// Replaces a record's data; `false` when there is no such record.
    pub fn update_plugin_record(
        &self,
        namespace: &str,
        collection: &str,
        id: &str,
        data: &str,
        at: Millis,
    ) -> Result<bool, StoreError> {
        let updated = self.conn.execute(
            "UPDATE plugin_records SET data = jsonb(?4), updated_at = ?5
             WHERE namespace = ?1 AND collection = ?2 AND id = ?3",
            params![namespace, collection, id, data, at],
        )?;
        Ok(updated == 1)
    }

    /// Deletes a record; `false` when there was none.
    pub fn delete_plugin_record(
        &self,
        namespace: &str,
        collection: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        let deleted = self.conn.execute(
            "DELETE FROM plugin_records WHERE namespace = ?1 AND collection = ?2 AND id = ?3",
            params![namespace, collection, id],
        )?;
        Ok(deleted == 1)
    }

    /// The records of the collection every filter holds for, in (createdAt,
    /// id) order, at most `limit` of them. The statement's text depends only
    /// on how many conditions of which kind there are; every path and value
    /// is bound.
    pub fn query_plugin_records(
        &self,
        namespace: &str,
        collection: &str,
        filters: &[RecordFilter],
        limit: Option<u32>,
    ) -> Result<Vec<StoredRecord>, StoreError> {
        use rusqlite::types::Value;
        let mut sql = String::from(
            "SELECT id, json(data), created_at, updated_at FROM plugin_records
             WHERE namespace = ? AND collection = ?",
        );
        let mut bound: Vec<Value> = vec![
            Value::Text(namespace.to_owned()),
            Value::Text(collection.to_owned()),
        ];
        for filter in filters {
            let path = Value::Text(filter.path.clone());
            match &filter.test {
                // JSON null is no SQL value to compare with: its type is.
                FilterTest::Equals(FilterValue::Null) => {
                    sql.push_str(" AND json_type(data, ?) = 'null'");
                    bound.push(path);
                }
                FilterTest::Equals(value) => {
                    sql.push_str(" AND json_extract(data, ?) = ?");
                    bound.extend([path, value.sql()]);
                }
                FilterTest::OneOf(values) => {
                    let nulls = values.contains(&FilterValue::Null);
                    let others: Vec<_> = values
                        .iter()
                        .filter(|v| **v != FilterValue::Null)
                        .map(FilterValue::sql)
                        .collect();
                    let mut alternatives = Vec::new();
                    if !others.is_empty() {
                        let marks = vec!["?"; others.len()].join(", ");
                        alternatives.push(format!("json_extract(data, ?) IN ({marks})"));
                        bound.push(path.clone());
                        bound.extend(others);
                    }
                    if nulls {
                        alternatives.push("json_type(data, ?) = 'null'".into());
                        bound.push(path);
                    }
                    if alternatives.is_empty() {
                        sql.push_str(" AND 0");
                    } else {
                        sql.push_str(&format!(" AND ({})", alternatives.join(" OR ")));
                    }
                }
                FilterTest::Contains(needle) => {
                    sql.push_str(&format!(" AND {CONTAINS}(json_extract(data, ?), ?)"));
                    bound.extend([path, Value::Text(needle.clone())]);
                }
            }
        }
        sql.push_str(" ORDER BY created_at, id");
        if let Some(limit) = limit {
            sql.push_str(" LIMIT ?");
            bound.push(Value::Integer(i64::from(limit)));
        }
        let mut statement = self.conn.prepare_cached(&sql)?;
        let rows = statement.query_map(params_from_iter(bound), stored)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many records a namespace holds in a collection.
    pub fn plugin_record_count(
        &self,
        namespace: &str,
        collection: &str,
    ) -> Result<u64, StoreError> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM plugin_records WHERE namespace = ?1 AND collection = ?2",
            params![namespace, collection],
            |row| row.get(0),
        )?)
    }
}

/// Registers the contains function on a connection, once at open: whether
/// the text holds the already-folded needle once the text is folded too. A
/// non-text value holds nothing.
pub(super) fn register_contains(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        CONTAINS,
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            // Both read in place: nothing is allocated per row on the ASCII
            // path, and a scan calls this once per record.
            let needle = ctx.get_raw(1).as_str().unwrap_or_default();
            Ok(match ctx.get_raw(0) {
                rusqlite::types::ValueRef::Text(bytes) => std::str::from_utf8(bytes)
                    .map(|text| folded_contains(text, needle))
                    .unwrap_or(false),
                _ => false,
            })
        },
    )
}

/// Whether `text`, lower-cased, holds `needle` (already lower-cased). ASCII
/// on both sides is compared in place, with no allocation per row: a scan
/// of a collection calls this once per record (docs/benchmarks.md).
fn folded_contains(text: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    if text.is_ascii() && needle.is_ascii() {
        let needle = needle.as_bytes();
        return text
            .as_bytes()
            .windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle));
    }
    text.to_lowercase().contains(needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{
        AuthorKind, ChannelKind, ObservedChannel, ObservedPost, ObservedVia, PostRole,
    };

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.db")).expect("open");
        (dir, store)
    }

    #[test]
    fn s3_14_a_taken_id_is_refused_and_the_stored_row_kept() {
        let (_dir, store) = store();
        assert!(
            store
                .insert_plugin_record("bm", "marks", "a", r#"{"v":1}"#, 1)
                .expect("insert")
        );
        assert!(
            !store
                .insert_plugin_record("bm", "marks", "a", r#"{"v":2}"#, 2)
                .expect("insert")
        );
        let row = store
            .plugin_record("bm", "marks", "a")
            .expect("read")
            .expect("row");
        assert_eq!(row.data, r#"{"v":1}"#);
        // The same id in another namespace or collection is another record.
        assert!(
            store
                .insert_plugin_record("other", "marks", "a", "{}", 3)
                .expect("insert")
        );
        assert!(
            store
                .insert_plugin_record("bm", "tags", "a", "{}", 3)
                .expect("insert")
        );
    }

    #[test]
    fn s3_14_queries_answer_in_created_then_id_order_with_bound_values() {
        let (_dir, store) = store();
        for (id, at, title) in [
            ("b", 5, "Rust book"),
            ("a", 5, "rusty nail"),
            ("c", 1, "Go"),
        ] {
            let data = serde_json::json!({ "title": title }).to_string();
            store
                .insert_plugin_record("bm", "marks", id, &data, at)
                .expect("insert");
        }
        let ids = |filters: &[RecordFilter], limit| -> Vec<String> {
            store
                .query_plugin_records("bm", "marks", filters, limit)
                .expect("query")
                .into_iter()
                .map(|r| r.id)
                .collect()
        };
        assert_eq!(ids(&[], None), ["c", "a", "b"]);
        assert_eq!(ids(&[], Some(2)), ["c", "a"]);
        let contains = RecordFilter {
            path: "$.\"title\"".into(),
            test: FilterTest::Contains("rust".into()),
        };
        assert_eq!(ids(&[contains], None), ["a", "b"]);
        let hostile = RecordFilter {
            path: "$.\"title\"".into(),
            test: FilterTest::Equals(FilterValue::Text("x' OR '1'='1".into())),
        };
        assert!(ids(&[hostile], None).is_empty());
    }

    #[test]
    fn s3_14_contains_folds_case_in_ascii_and_beyond() {
        assert!(folded_contains("Rust book", "rust"));
        assert!(folded_contains("a RUST book", "rust book"));
        assert!(!folded_contains("Rus t", "rust"));
        assert!(folded_contains("anything", ""));
        assert!(!folded_contains("", "a"));
        assert!(folded_contains("ÄRGER im Büro", "ärger"));
        assert!(folded_contains("ΣΟΦΙΑ", "σοφια"));
    }

    #[test]
    fn s8_5_clear_keeps_plugin_records() {
        let (_dir, mut store) = store();
        store
            .record_channel(&ObservedChannel {
                id: "c1".into(),
                name: "research".into(),
                display_name: "Research".into(),
                kind: ChannelKind::Open,
            })
            .expect("channel");
        store
            .record_post(&ObservedPost {
                id: "p1".into(),
                channel_id: "c1".into(),
                author_id: "u1".into(),
                author_name: "ada".into(),
                author_kind: AuthorKind::Person,
                created_at: 10,
                message: "save this".into(),
                props: None,
                role: PostRole::Post,
                turn_id: None,
                pinned: false,
                observed_at: 11,
                observed_via: ObservedVia::Backfill,
                files: Vec::new(),
            })
            .expect("post");
        store
            .insert_plugin_record("bm", "marks", "a", r#"{"url":"u"}"#, 10)
            .expect("insert");
        let cut = store.clear_channel("c1", 1_000, true).expect("clear");
        assert_eq!(cut.posts, 1, "the clear did cut the channel");
        assert_eq!(store.plugin_record_count("bm", "marks").expect("count"), 1);
        assert!(
            store
                .plugin_record("bm", "marks", "a")
                .expect("read")
                .is_some()
        );
    }
}
