//! A tool's two-segment identity, rendered per audience (§3.4): operators,
//! approvers, config and traces see `mail::send`; the model sees `mail__send`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolRef {
    pub namespace: String,
    pub tool: String,
}

impl ToolRef {
    pub fn new(namespace: impl Into<String>, tool: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            tool: tool.into(),
        }
    }

    /// The form the model sees.
    pub fn model_form(&self) -> String {
        format!("{}__{}", self.namespace, self.tool)
    }
}

impl fmt::Display for ToolRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}", self.namespace, self.tool)
    }
}

/// What a grant in configuration names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantName {
    /// `web`: every tool of the namespace, now and later (§3.4).
    Namespace(String),
    /// `web::fetch`: one tool.
    Tool(ToolRef),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantNameError {
    #[error("is empty")]
    Empty,
    #[error(
        "`{0}` is not a namespace (`web`) or a tool (`web::fetch`); config names tools with `::`"
    )]
    Malformed(String),
}

/// A namespace or tool segment: lowercase letters, digits, `_` and `-`,
/// starting with a letter, and never `__`, which joins the two segments in the
/// form the model sees, so `a__b` would read back as two names.
pub fn is_segment(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !s.contains("__")
}

pub fn parse_grant(text: &str) -> Result<GrantName, GrantNameError> {
    if text.is_empty() {
        return Err(GrantNameError::Empty);
    }
    match text.split_once("::") {
        None if is_segment(text) => Ok(GrantName::Namespace(text.to_string())),
        Some((ns, tool)) if is_segment(ns) && is_segment(tool) => {
            Ok(GrantName::Tool(ToolRef::new(ns, tool)))
        }
        _ => Err(GrantNameError::Malformed(text.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_parse_as_namespaces_or_tools() {
        assert_eq!(parse_grant("web"), Ok(GrantName::Namespace("web".into())));
        assert_eq!(
            parse_grant("web::fetch"),
            Ok(GrantName::Tool(ToolRef::new("web", "fetch")))
        );
        assert!(parse_grant("web__fetch").is_err());
        assert!(parse_grant("web::").is_err());
        assert!(parse_grant("Web").is_err());
        assert!(parse_grant("a::b::c").is_err());
        assert_eq!(ToolRef::new("mail", "send").model_form(), "mail__send");
    }
}
