//! A bounded window of a long text, and where to read on (§3.4: a result holds a bounded
//! window of what was read, its width one constant, and says where to read on). Offsets count
//! characters, never bytes, so a window never starts or ends inside one.

/// A window's width in characters. 12,000 characters is about 3,000 tokens: a long article's
/// body or several screens of a reference page in one read, while five reads of a turn still
/// cost less than a tenth of a 200,000-token context.
pub const WINDOW_CHARS: usize = 12_000;

/// How far back from the window's edge a line or word break is looked for, so that a window
/// ends between words rather than inside one.
const CLEAN_EDGE_CHARS: usize = 600;

/// One window of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window<'a> {
    /// The character the window starts at.
    pub offset: usize,
    /// The character after its last.
    pub end: usize,
    /// The whole text's length in characters.
    pub total: usize,
    /// What it shows.
    pub text: &'a str,
}

impl Window<'_> {
    /// Where the next window starts, if anything is left after this one.
    pub fn next_offset(&self) -> Option<usize> {
        (self.end < self.total).then_some(self.end)
    }

    /// Whether the offset asked for lies past the text's end.
    pub fn past_end(&self) -> bool {
        self.offset >= self.total && self.total > 0
    }

    /// Characters not shown: before the window and after it.
    pub fn not_shown(&self) -> usize {
        self.total - (self.end - self.offset.min(self.end))
    }
}

/// The window of `text` starting `offset` characters in.
pub fn window(text: &str, offset: usize) -> Window<'_> {
    let total = text.chars().count();
    if offset >= total {
        return Window {
            offset,
            end: offset.max(total),
            total,
            text: "",
        };
    }
    let start_byte = byte_of_char(text, offset);
    let rest = &text[start_byte..];
    if total - offset <= WINDOW_CHARS {
        return Window {
            offset,
            end: total,
            total,
            text: rest,
        };
    }
    let hard_end = byte_of_char(rest, WINDOW_CHARS);
    let cut = clean_edge(&rest[..hard_end]);
    let shown = &rest[..cut];
    let end = offset + shown.chars().count();
    Window {
        offset,
        end,
        total,
        text: shown,
    }
}

/// The byte where character `n` starts (the text's length past its end).
pub(crate) fn byte_of_char(text: &str, n: usize) -> usize {
    text.char_indices()
        .nth(n)
        .map_or(text.len(), |(byte, _)| byte)
}

/// Where in `shown` to end: after its last line break, else its last space, within the
/// edge; the hard edge where there is neither.
fn clean_edge(shown: &str) -> usize {
    let edge_start = shown
        .char_indices()
        .rev()
        .nth(CLEAN_EDGE_CHARS)
        .map_or(0, |(byte, _)| byte);
    let edge = &shown[edge_start..];
    if let Some(at) = edge.rfind('\n') {
        return edge_start + at + 1;
    }
    if let Some(at) = edge.rfind(' ') {
        return edge_start + at + 1;
    }
    shown.len()
}
