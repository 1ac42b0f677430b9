//! The spans of text Mattermost's Markdown parser takes for autolinks
//! (`scheme://…`, `www.…`) and emoji shortcodes (`:name:`): nodes of their own
//! rather than text, so a mention scan never reads inside them and they end a
//! run of text. The rules restate the server's parser (contract §E, and the
//! server's `markdown` package).

use std::ops::Range;

const SCHEMES: &[&str] = &["http", "https", "ftp", "mailto", "tel", "gemini"];

/// The autolink and emoji spans of `text`, in order, not overlapping.
pub fn holes(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut holes = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let found = match bytes[i] {
            b':' => url_at(text, i).or_else(|| emoji_at(text, i)),
            b'w' | b'W' => www_at(text, i),
            _ => None,
        };
        match found {
            Some(range) => {
                i = range.end;
                // A URL's scheme was passed already; it starts the hole.
                holes.push(range);
            }
            None => i += text[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
    holes
}

fn is_whitespace_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Unicode punctuation (the P categories), as the server's host-character
/// test reads it: ASCII punctuation less the symbols, and the common
/// punctuation blocks beyond ASCII.
fn is_punct(c: char) -> bool {
    matches!(
        c,
        '!' | '"'
            | '#'
            | '%'
            | '&'
            | '\''
            | '('
            | ')'
            | '*'
            | ','
            | '-'
            | '.'
            | '/'
            | ':'
            | ';'
            | '?'
            | '@'
            | '['
            | '\\'
            | ']'
            | '_'
            | '{'
            | '}'
    ) || matches!(
        c as u32,
        0x00A1 | 0x00A7 | 0x00AB | 0x00B6 | 0x00B7 | 0x00BB | 0x00BF
    ) || (0x2010..=0x2027).contains(&(c as u32))
        || (0x2030..=0x205E).contains(&(c as u32))
        || (0x3001..=0x3003).contains(&(c as u32))
        || (0x3008..=0x3011).contains(&(c as u32))
}

fn is_host_char(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_some_and(|c| !c.is_whitespace() && !is_punct(c))
}

/// How many bytes of `data` make a domain; 0 where it is not one.
fn check_domain(data: &str, allow_short: bool) -> usize {
    let mut found_period = false;
    // The server walks bytes past the first; here characters, so that a
    // non-ASCII host is never cut inside a character (the cut panicked on
    // such a post: fuzz/regressions/mention).
    let mut i = data.chars().next().map_or(1, char::len_utf8);
    while i + 1 < data.len() {
        let Some(c) = data[i..].chars().next() else {
            break;
        };
        match c {
            '_' => return 0,
            '.' => found_period = true,
            '-' => {}
            _ if !is_host_char(&data[i..]) => break,
            _ => {}
        }
        i += c.len_utf8();
    }
    if allow_short || found_period { i } else { 0 }
}

/// `start..end` of `text` with trailing punctuation and stray brackets cut,
/// as the server trims an autolink.
fn trim_link_end(text: &str, start: usize, end: usize) -> usize {
    let chars: Vec<char> = text[start..end].chars().collect();
    let mut link_end = chars
        .iter()
        .position(|c| matches!(c, '<' | '>'))
        .unwrap_or(chars.len());
    let count = |c: char, upto: usize| chars[..upto].iter().filter(|x| **x == c).count();
    while link_end > 0 {
        let c = chars[link_end - 1];
        match c {
            '?' | '!' | '.' | ',' | ':' | '*' | '_' | '~' | '\'' | '"' => link_end -= 1,
            ';' => {
                // A trailing entity (`&amp;`) goes with its `;`.
                let mut back = link_end.saturating_sub(2);
                while back > 0 && chars[back].is_ascii_alphabetic() {
                    back -= 1;
                }
                if back + 2 < link_end && chars[back] == '&' {
                    link_end = back;
                } else {
                    link_end -= 1;
                }
            }
            ')' if count(')', link_end) > count('(', link_end) => link_end -= 1,
            _ => break,
        }
    }
    start
        + chars[..link_end]
            .iter()
            .map(|c| c.len_utf8())
            .sum::<usize>()
}

/// A `scheme://…` autolink whose `:` is at `colon`.
fn url_at(text: &str, colon: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    if bytes.len() < colon + 4 || bytes[colon + 1] != b'/' || bytes[colon + 2] != b'/' {
        return None;
    }
    let mut start = colon;
    while start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
        start -= 1;
    }
    let scheme = &text[start..colon];
    if !SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) || !is_host_char(&text[colon + 3..])
    {
        return None;
    }
    let domain = check_domain(&text[colon + 3..], true);
    if domain == 0 {
        return None;
    }
    let mut end = colon + domain;
    while end < bytes.len() && !is_whitespace_byte(bytes[end]) {
        end += 1;
    }
    let end = trim_link_end(text, start, end);
    (end > start).then_some(start..end)
}

/// A `www.` autolink starting at `at`.
fn www_at(text: &str, at: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    if at > 1 {
        let prev = bytes[at - 1];
        if !is_whitespace_byte(prev)
            && !matches!(prev, b'*' | b'_' | b'~' | b')' | b'<' | b'(' | b'>')
        {
            return None;
        }
    }
    let rest = &bytes[at..];
    if rest.len() < 4 || !rest[..3].eq_ignore_ascii_case(b"www") {
        return None;
    }
    let digits = rest[3..]
        .iter()
        .take(3)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if rest.get(3 + digits) != Some(&b'.') {
        return None;
    }
    let domain = check_domain(&text[at..], false);
    if domain == 0 {
        return None;
    }
    let mut end = at + domain;
    while end < bytes.len() && !is_whitespace_byte(bytes[end]) {
        end += 1;
    }
    let end = trim_link_end(text, at, end);
    (end > at).then_some(at..end)
}

/// An emoji shortcode `:name:` starting at `at`, after a non-word character.
fn emoji_at(text: &str, at: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    if at > 1 && is_word_byte(bytes[at - 1]) {
        return None;
    }
    let name = bytes[at + 1..]
        .iter()
        .take_while(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'+')
        })
        .count();
    let close = at + 1 + name;
    if name == 0 || bytes.get(close) != Some(&b':') {
        return None;
    }
    // The closing colon must not be followed by a word character.
    if bytes.get(close + 1).is_some_and(|b| is_word_byte(*b)) {
        return None;
    }
    Some(at..close + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        holes(text).into_iter().map(|r| &text[r]).collect()
    }

    /// Found by fuzzing (fuzz/regressions/mention): a host holding a
    /// multi-byte character was cut inside it.
    #[test]
    fn s4_5_a_non_ascii_host_is_never_cut_inside_a_character() {
        assert_eq!(
            texts("see <https://x\u{fffd}test/@mira> ok"),
            ["https://x\u{fffd}test/@mira"]
        );
        let _ = holes("https://é.test www.ü.x @mira https://\u{fffd}");
    }

    #[test]
    fn urls_www_links_and_emoji_are_holes() {
        assert_eq!(
            texts("see http://x.org/@agent, ok"),
            ["http://x.org/@agent"]
        );
        assert_eq!(texts("go to www.example.com/@a."), ["www.example.com/@a"]);
        assert_eq!(texts("hi :smile: there"), [":smile:"]);
        assert_eq!(
            texts("@agent:smile:"),
            Vec::<&str>::new(),
            "after a word character"
        );
        assert!(texts("a:b and ftp:/x").is_empty());
        assert_eq!(texts("(http://x.org/a_(b))"), ["http://x.org/a_(b)"]);
    }
}
