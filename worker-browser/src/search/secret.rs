//! The provider's key as the agent's web settings give it: inline, in a
//! file, or in an environment variable. The daemon passes where the key is;
//! this worker reads it at the moment it searches (§3.4, ARCHITECTURE §7), so a
//! key kept in a file need only be readable by the browser worker's user.

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

/// Exactly one of `file`, `env` or `value`, as the daemon's schema requires.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySource {
    file: Option<PathBuf>,
    env: Option<String>,
    value: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("give the key as exactly one of `file`, `env` or `value`")]
    Ambiguous,
    #[error("cannot read the key file {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the environment variable {0} holding the key is not set")]
    Env(String),
    #[error("the key is empty")]
    Empty,
}

impl KeySource {
    /// Reads the key, trimmed of surrounding whitespace.
    pub fn reveal(&self) -> Result<String, KeyError> {
        let raw = match (&self.file, &self.env, &self.value) {
            (Some(path), None, None) => {
                std::fs::read_to_string(path).map_err(|source| KeyError::File {
                    path: path.clone(),
                    source,
                })?
            }
            (None, Some(var), None) => {
                std::env::var(var).map_err(|_| KeyError::Env(var.clone()))?
            }
            (None, None, Some(value)) => value.clone(),
            _ => return Err(KeyError::Ambiguous),
        };
        let key = raw.trim();
        if key.is_empty() {
            return Err(KeyError::Empty);
        }
        Ok(key.to_string())
    }
}

/// Names where the key comes from, never the key.
impl fmt::Debug for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, &self.env, &self.value) {
            (Some(path), None, None) => write!(f, "KeySource(file {})", path.display()),
            (None, Some(var), None) => write!(f, "KeySource(${var})"),
            (None, None, Some(_)) => f.write_str("KeySource(inline, hidden)"),
            _ => f.write_str("KeySource(malformed)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: serde_json::Value) -> KeySource {
        serde_json::from_value(value).expect("a key source")
    }

    #[test]
    fn an_inline_key_is_revealed_trimmed_and_never_printed() {
        let source = parse(serde_json::json!({"value": "  sk-very-secret\n"}));
        assert_eq!(source.reveal().expect("reveal"), "sk-very-secret");
        assert!(!format!("{source:?}").contains("very-secret"));
    }

    #[test]
    fn a_file_key_is_read_when_revealed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("key");
        let source = parse(serde_json::json!({"file": path}));
        assert!(matches!(source.reveal(), Err(KeyError::File { .. })));
        std::fs::write(&path, "from-file\n").expect("write");
        assert_eq!(source.reveal().expect("reveal"), "from-file");
    }

    #[test]
    fn two_sources_or_an_empty_key_are_refused() {
        let two = parse(serde_json::json!({"value": "a", "env": "B"}));
        assert!(matches!(two.reveal(), Err(KeyError::Ambiguous)));
        let empty = parse(serde_json::json!({"value": "  "}));
        assert!(matches!(empty.reveal(), Err(KeyError::Empty)));
        let unset = parse(serde_json::json!({"env": "COLLEGIUM_SEARCH_KEY_NEVER_SET"}));
        assert!(matches!(unset.reveal(), Err(KeyError::Env(_))));
    }
}
