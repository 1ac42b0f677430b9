//! A bound on how deeply a page nests its elements, checked before the parser sees it. The
//! HTML parser looks through every open element at each start tag, so a page nesting its
//! elements tens of thousands deep costs it minutes (100,000 nested `<div>`s, 600 KB, parsed
//! for 346 s on the project's machine). Real pages nest a few dozen deep.

/// Elements open at once past which the rest of a page is not read.
pub const NESTING_LIMIT: usize = 512;

/// Elements that never hold content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen", "frame", "basefont", "bgsound",
];

/// Elements a page leaves unclosed as a rule, which the parser closes at the next of their
/// kind: counting them would make a long list look deep.
const IMPLIED_END: &[&str] = &[
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "tbody", "thead", "tfoot", "rb",
    "rt", "rp", "rtc", "colgroup", "caption",
];

/// Elements whose content is text up to their own end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
];

/// The byte at which the page's nesting first passes `limit`, if it does. The count is a
/// lexical estimate, not the parser's tree: it errs toward deep only for a page that leaves
/// thousands of ordinary elements unclosed.
pub(crate) fn too_deep_at(html: &str, limit: usize) -> Option<usize> {
    let bytes = html.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(found) = memchr(b'<', &bytes[at..]) {
        let start = at + found;
        let rest = &bytes[start + 1..];
        if rest.starts_with(b"!--") {
            at = find(bytes, start + 4, b"-->").map_or(bytes.len(), |end| end + 3);
            continue;
        }
        let closing = rest.first() == Some(&b'/');
        let name_start = start + 1 + usize::from(closing);
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
            .count();
        if name_len == 0 {
            at = start + 1;
            continue;
        }
        let name = &bytes[name_start..name_start + name_len];
        let Some(tag_end) = tag_end(bytes, name_start + name_len) else {
            break;
        };
        at = tag_end + 1;
        let nests = !listed(VOID, name) && !listed(IMPLIED_END, name);
        if closing {
            if nests {
                depth = depth.saturating_sub(1);
            }
            continue;
        }
        if listed(RAW_TEXT, name) {
            let close = [b"</".as_slice(), name].concat();
            at = find_ascii_case_insensitive(bytes, at, &close).unwrap_or(bytes.len());
            continue;
        }
        if nests && bytes[tag_end.saturating_sub(1)] != b'/' {
            depth += 1;
            if depth > limit {
                return Some(start);
            }
        }
    }
    None
}

fn listed(list: &[&str], name: &[u8]) -> bool {
    list.iter().any(|l| l.as_bytes().eq_ignore_ascii_case(name))
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|b| *b == needle)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

fn find_ascii_case_insensitive(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|p| from + p)
}

/// The `>` that ends a tag whose name ends at `from`, skipping quoted attribute values.
fn tag_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (i, b) in bytes.iter().enumerate().skip(from) {
        match (quote, *b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(*b),
            (None, b'>') => return Some(i),
            _ => {}
        }
    }
    None
}
