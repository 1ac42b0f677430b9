//! A secret held in memory (a bot token, a model API key, the mailbox
//! password, an HMAC key) is a [`Redacted`]: its `Debug` and `Display`
//! print `[redacted]`, it has no `Serialize`, and its value comes out only
//! through [`Redacted::expose`], named at the one place that sends it. So no
//! log field, `{:?}` of a struct holding one, or error text can carry a
//! secret by accident (issue 21 item 6; ARCHITECTURE §7).
//!
//! A type of our own rather than the `secrecy` crate: `secrecy`'s `Debug`
//! prints `SecretBox<str>([REDACTED])` and it has no `Display`, `PartialEq`
//! or `Default`, which the holders here (configs compared in tests, headers
//! built with `format!`) need; the type is twenty lines.

use std::fmt;

/// What every `Debug` and `Display` of a secret prints.
pub const REDACTED: &str = "[redacted]";

/// A value that never prints.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redacted<T>(T);

impl<T> Redacted<T> {
    pub fn new(value: T) -> Self {
        Self(value)
    }

    /// The secret itself, for the one place that sends or uses it.
    pub fn expose(&self) -> &T {
        &self.0
    }

    pub fn into_exposed(self) -> T {
        self.0
    }
}

impl<T> From<T> for Redacted<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl From<&str> for Redacted<String> {
    fn from(value: &str) -> Self {
        Self(value.to_string())
    }
}

/// Read from a file the way the bare value would be (a credentials file).
impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Redacted<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Self)
    }
}

/// Writes the secret itself, for the one file that must hold it (the
/// credentials file the provisioner writes, mode 0600): named at the field
/// with `#[serde(serialize_with = "…::serialize_exposed")]`, so no other
/// serialisation can print it — `Redacted` has no `Serialize` of its own.
pub fn serialize_exposed<T: serde::Serialize, S: serde::Serializer>(
    value: &Redacted<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    value.0.serialize(serializer)
}

impl<T> fmt::Debug for Redacted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T> fmt::Display for Redacted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    #[allow(dead_code)] // read only through Debug
    struct Holder {
        name: String,
        token: Redacted<String>,
    }

    #[test]
    fn i21_a_secret_prints_redacted_in_debug_display_and_log_fields() {
        let holder = Holder {
            name: "mira".into(),
            token: Redacted::new("xoxb-very-secret".into()),
        };
        let debug = format!("{holder:?} {holder:#?}");
        assert!(!debug.contains("very-secret"), "{debug}");
        assert!(debug.contains("[redacted]"), "{debug}");
        assert_eq!(holder.token.to_string(), "[redacted]");
        assert_eq!(format!("{:?}", holder.token), "[redacted]");
        assert_eq!(holder.token.expose(), "xoxb-very-secret");
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Written {
        #[serde(serialize_with = "serialize_exposed")]
        token: Redacted<String>,
    }

    #[test]
    fn i21_only_a_named_field_writes_the_secret() {
        let read: Written = serde_json::from_str(r#"{"token":"abc"}"#).expect("read");
        assert_eq!(read.token.expose(), "abc");
        let written = serde_json::to_string(&read).expect("write");
        assert_eq!(written, r#"{"token":"abc"}"#);
    }
}
