//! Toolset settings as the configuration holds them (§3.4): a map by
//! namespace whose values may hold secrets in `Secret`'s shape
//! (`{ value = "…" }`, `{ file = … }`, `{ env = … }`) — a search provider's
//! key, say, which only the worker reads. Its `Debug` prints every inline
//! secret's value as `[redacted]`, so a `{:?}` of the configuration or of
//! a resolved agent never carries one (issue 21 item 6). Everything else
//! reads it as the map it is.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Deref, DerefMut};

use collegium_worker_kit::redact::REDACTED;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Settings(pub BTreeMap<String, Value>);

impl Deref for Settings {
    type Target = BTreeMap<String, Value>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Settings {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<BTreeMap<String, Value>> for Settings {
    fn from(map: BTreeMap<String, Value>) -> Self {
        Self(map)
    }
}

impl FromIterator<(String, Value)> for Settings {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Settings {
    type Item = (&'a String, &'a Value);
    type IntoIter = std::collections::btree_map::Iter<'a, String, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: BTreeMap<&String, Value> =
            self.0.iter().map(|(k, v)| (k, redacted(v))).collect();
        shown.fmt(f)
    }
}

/// `value` with every secret-shaped object's inline value replaced.
fn redacted(value: &Value) -> Value {
    match value {
        Value::Object(map) if is_secret(map) => {
            let mut shown = map.clone();
            shown.insert("value".into(), Value::String(REDACTED.into()));
            Value::Object(shown)
        }
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), redacted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(redacted).collect()),
        other => other.clone(),
    }
}

/// An object holding an inline `value` and nothing but `Secret`'s keys.
fn is_secret(map: &serde_json::Map<String, Value>) -> bool {
    map.contains_key("value")
        && map
            .keys()
            .all(|k| matches!(k.as_str(), "file" | "env" | "value"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn i21_an_inline_secret_in_settings_never_prints() {
        let settings: Settings = [(
            "web".to_string(),
            json!({"search": {"provider": "brave", "api_key": {"value": "sk-search-never-shown"}},
                   "list": [{"value": "inline-in-a-list"}], "other": {"value": 3, "unit": "s"}}),
        )]
        .into_iter()
        .collect();
        let printed = format!("{settings:?} {settings:#?}");
        assert!(!printed.contains("sk-search-never-shown"), "{printed}");
        assert!(!printed.contains("inline-in-a-list"), "{printed}");
        assert!(printed.contains("[redacted]"), "{printed}");
        // Not a secret's shape: shown as it is.
        assert!(
            printed.contains("\"unit\": String(\"s\")") || printed.contains("unit"),
            "{printed}"
        );
        // The map itself still holds the value for the worker that reads it.
        assert_eq!(
            settings["web"]["search"]["api_key"]["value"],
            "sk-search-never-shown"
        );
    }
}
