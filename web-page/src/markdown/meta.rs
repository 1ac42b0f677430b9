//! html5ever 0.38 panics on a `<meta http-equiv="Content-Type">` whose
//! `content` ends in a bare `charset` (servo/html5ever#763, fixed upstream
//! by #762 after the release this build locks; found by fuzzing:
//! fuzz/regressions/web_page). A page that spells one would end the read.
//! The parser reads `http-equiv` only to change an encoding, and the text
//! here is decoded already (media.rs), so the attribute is renamed before
//! parsing: the one rule that calls the faulty code never runs, and nothing
//! a reader sees changes.

/// `html` with the `http-equiv` attribute of every `<meta>` tag renamed.
pub fn without_http_equiv(html: &str) -> std::borrow::Cow<'_, str> {
    let lower = html.to_ascii_lowercase();
    if !lower.contains("http-equiv") {
        return std::borrow::Cow::Borrowed(html);
    }
    let bytes = lower.as_bytes();
    let mut renamed: Vec<usize> = Vec::new();
    let mut at = 0;
    while let Some(found) = lower[at..].find("<meta") {
        let mut i = at + found + "<meta".len();
        // The tag runs to the first `>` outside a quoted attribute value,
        // as the tokenizer reads it.
        let mut quote: Option<u8> = None;
        let mut after_equals = false;
        while i < bytes.len() {
            let b = bytes[i];
            match quote {
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None if b == b'>' => break,
                None if after_equals && (b == b'"' || b == b'\'') => quote = Some(b),
                None if bytes[i..].starts_with(b"http-equiv") => renamed.push(i),
                None => {}
            }
            if quote.is_none() && !b.is_ascii_whitespace() {
                after_equals = b == b'=';
            }
            i += 1;
        }
        at = i.min(bytes.len());
        if at >= bytes.len() {
            break;
        }
    }
    if renamed.is_empty() {
        return std::borrow::Cow::Borrowed(html);
    }
    let mut out = String::with_capacity(html.len() + renamed.len() * 2);
    let mut from = 0;
    for start in renamed {
        out.push_str(&html[from..start]);
        out.push_str("x-");
        from = start;
    }
    out.push_str(&html[from..]);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_4_a_bare_charset_in_a_content_type_meta_does_not_end_the_read() {
        let page = r#"<html><head><META HTTP-EQUIV="Content-Type" content="text/html; charset"><title>T</title></head><body><p>Kept.</p></body></html>"#;
        let read = crate::read_html(
            page,
            &url::Url::parse("https://x.test/").expect("url"),
            true,
        );
        assert!(read.markdown.contains("Kept."), "{}", read.markdown);
    }

    #[test]
    fn only_meta_tags_are_touched() {
        let page = r#"<p>http-equiv in prose</p><meta content="a>b" http-equiv=refresh>"#;
        assert_eq!(
            without_http_equiv(page),
            r#"<p>http-equiv in prose</p><meta content="a>b" x-http-equiv=refresh>"#
        );
    }
}
