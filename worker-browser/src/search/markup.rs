//! Provider text to plain text. Brave marks the query's words in its
//! snippets with `<strong>` and escapes the rest as HTML; the model reads
//! neither (§3.4: summaries, not pages).

/// Removes tags and decodes entities. Text escaped as HTML carries no literal
/// `<` of its own, so every `<…>` is markup.
pub fn strip_tags(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        match rest[open..].find('>') {
            Some(close) => rest = &rest[open + close + 1..],
            None => {
                rest = &rest[open..];
                break;
            }
        }
    }
    text.push_str(rest);
    html_escape::decode_html_entities(&text).into_owned()
}

/// Collapses every run of whitespace, newlines included, to one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `limit` characters, an ellipsis marking a cut.
pub fn bounded(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", text[..cut].trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brave_highlighting_and_entities_become_plain_text() {
        assert_eq!(
            strip_tags(
                "The <strong>Rust</strong> book&#x27;s &amp; <strong>async</strong> &lt;T&gt;"
            ),
            "The Rust book's & async <T>"
        );
        assert_eq!(strip_tags("no markup"), "no markup");
        assert_eq!(strip_tags("a < b"), "a < b");
    }

    #[test]
    fn whitespace_collapses_and_long_text_is_cut_on_a_character() {
        assert_eq!(one_line("  a\n\tb  c "), "a b c");
        assert_eq!(bounded("ééééé", 3), "ééé…");
        assert_eq!(bounded("abc", 3), "abc");
    }
}
