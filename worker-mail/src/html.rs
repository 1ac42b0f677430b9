//! HTML mail read as text (§3.13): the markup a person would see, as
//! markdown, with scripts, styles and the head dropped, since none of them
//! is text a person reads.

/// `html` as readable text; where the converter fails, the markup with its
/// tags removed, so the body is never lost.
pub fn to_text(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec!["script", "style", "head", "noscript", "template"])
        .build();
    match converter.convert(html) {
        Ok(text) => text,
        Err(_) => strip_tags(html),
    }
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn s3_13_scripts_and_styles_are_not_text() {
        let text = super::to_text(
            "<html><head><style>p{color:red}</style></head><body><script>alert(1)</script><p>Hello <b>there</b></p></body></html>",
        );
        assert!(text.contains("Hello"));
        assert!(!text.contains("alert"));
        assert!(!text.contains("color"));
    }
}
