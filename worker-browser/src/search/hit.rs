//! One ranked summary: what web::search returns instead of the page (§3.4).

use super::markup;

/// A provider's snippets are summaries; a longer one is cut here so one
/// result cannot crowd out the others.
pub const SNIPPET_LIMIT: usize = 400;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

impl Hit {
    /// A hit from a provider's fields, with whitespace collapsed, the title
    /// falling back to the URL and the snippet bounded.
    pub fn new(title: &str, url: &str, snippet: &str) -> Hit {
        let url = url.trim().to_string();
        let title = markup::one_line(title);
        Hit {
            title: if title.is_empty() { url.clone() } else { title },
            snippet: markup::bounded(&markup::one_line(snippet), SNIPPET_LIMIT),
            url,
        }
    }
}
