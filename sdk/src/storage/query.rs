//! The one query grammar a collection answers (§3.14): an AND of conditions
//! over top-level scalar fields — equality, membership, or a
//! case-insensitive substring — with an optional limit. The daemon types
//! each condition from the collection's schema; a field it does not
//! declare, a nested one, or a test that does not fit its type is refused
//! as [`StorageError::Refused`](super::StorageError::Refused).

use collegium_proto::storage::v1::{Condition, QueryRequest, condition};
use serde::Serialize;

use super::{Collection, Of, Storage, StorageError, Stored, decode};

/// A query being built; nothing is sent until [`Query::fetch`].
#[must_use = "a query does nothing until it is fetched"]
pub struct Query<T> {
    storage: Storage,
    conditions: Vec<Condition>,
    limit: Option<u32>,
    /// A value that did not serialise: reported at fetch, not dropped.
    invalid: Option<String>,
    of: Of<T>,
}

impl<T: Collection> Query<T> {
    pub(super) fn new(storage: Storage) -> Self {
        Self {
            storage,
            conditions: Vec::new(),
            limit: None,
            invalid: None,
            of: Default::default(),
        }
    }

    fn with(mut self, field: &str, test: condition::Test) -> Self {
        self.conditions.push(Condition {
            field: field.into(),
            test: Some(test),
        });
        self
    }

    fn json(&mut self, field: &str, value: impl Serialize) -> String {
        match serde_json::to_string(&value) {
            Ok(json) => json,
            Err(e) => {
                self.invalid.get_or_insert_with(|| {
                    format!("the value for `{field}` does not serialise: {e}")
                });
                String::new()
            }
        }
    }

    /// `field` equals `value` (a JSON scalar).
    pub fn equals(mut self, field: &str, value: impl Serialize) -> Self {
        let json = self.json(field, value);
        self.with(field, condition::Test::EqualsJson(json))
    }

    /// `field` is one of `values` (JSON scalars).
    pub fn one_of<V: Serialize>(
        mut self,
        field: &str,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        let values: Vec<V> = values.into_iter().collect();
        let json = self.json(field, values);
        self.with(field, condition::Test::OneOfJson(json))
    }

    /// The string `field` contains `text`, case-insensitively.
    pub fn contains(self, field: &str, text: impl Into<String>) -> Self {
        self.with(field, condition::Test::Contains(text.into()))
    }

    /// At most `limit` records.
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// The request as it goes on the wire.
    pub fn request(&self) -> QueryRequest {
        QueryRequest {
            collection: T::NAME.into(),
            conditions: self.conditions.clone(),
            limit: self.limit,
        }
    }

    /// Runs the query. A record that no longer parses as `T` fails the
    /// whole query naming it: a reader is never handed a silent gap.
    pub async fn fetch(self) -> Result<Vec<Stored<T>>, StorageError> {
        if let Some(reason) = self.invalid {
            return Err(StorageError::Encode {
                collection: T::NAME.into(),
                reason,
            });
        }
        let request = self.request();
        let answer = self
            .storage
            .client()?
            .query(request)
            .await
            .map_err(|s| StorageError::from_status(T::NAME, "", s))?;
        answer
            .into_inner()
            .records
            .into_iter()
            .map(decode)
            .collect()
    }
}
