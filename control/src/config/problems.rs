//! A configuration problem: the key it concerns and what is wrong with it.

use std::fmt;

/// A key path in the file as an operator writes it: `agents[1].grants[2]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct KeyPath(String);

impl KeyPath {
    pub fn root() -> Self {
        Self(String::new())
    }

    pub fn key(&self, key: &str) -> Self {
        // A key that is not a bare TOML key is quoted, as TOML would write it.
        let bare = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        let segment = if bare {
            key.to_string()
        } else {
            format!("\"{}\"", key.replace('\\', "\\\\").replace('"', "\\\""))
        };
        if self.0.is_empty() {
            Self(segment)
        } else {
            Self(format!("{}.{segment}", self.0))
        }
    }

    pub fn index(&self, index: usize) -> Self {
        Self(format!("{}[{index}]", self.0))
    }

    /// This path followed by `relative`, an already rendered path
    /// (`mailbox.imap.port`, `[2].name`).
    pub fn suffixed(&self, relative: &str) -> Self {
        if relative.is_empty() {
            self.clone()
        } else if self.0.is_empty() || relative.starts_with('[') {
            Self(format!("{}{relative}", self.0))
        } else {
            Self(format!("{}.{relative}", self.0))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("(top level)")
        } else {
            f.write_str(&self.0)
        }
    }
}

/// One thing wrong with a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: KeyPath,
    pub message: String,
}

impl Problem {
    pub fn new(path: KeyPath, message: impl Into<String>) -> Self {
        Self {
            path,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Collects problems as a check walks the file, so every one is reported and
/// not only the first.
#[derive(Debug, Default)]
pub struct Problems(Vec<Problem>);

impl Problems {
    pub fn push(&mut self, path: KeyPath, message: impl Into<String>) {
        self.0.push(Problem::new(path, message));
    }

    pub fn extend(&mut self, problems: impl IntoIterator<Item = Problem>) {
        self.0.extend(problems);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_vec(self) -> Vec<Problem> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_an_operator_writes_them() {
        let path = KeyPath::root()
            .key("agents")
            .index(1)
            .key("grants")
            .index(2);
        assert_eq!(path.as_str(), "agents[1].grants[2]");
        let quoted = KeyPath::root().key("models").key("gpt 4.1");
        assert_eq!(quoted.as_str(), "models.\"gpt 4.1\"");
    }
}
