//! The unit the split works on: a body's lines, each possibly standing for an HTML quote
//! marker, with the quote-level and code-fence readings the rules share.

use crate::Boundary;

/// One line of a body. `marker` is set on the empty line the HTML reading puts where a quote
/// element begins; text bodies have none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub text: String,
    pub marker: Option<Boundary>,
}

impl Line {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            marker: None,
        }
    }

    pub fn is_blank(&self) -> bool {
        self.marker.is_none() && self.text.trim().is_empty()
    }

    pub fn is_quoted(&self) -> bool {
        self.text.starts_with('>')
    }
}

/// A text body's lines; `str::lines` takes CRLF and LF alike.
pub(crate) fn from_text(body: &str) -> Vec<Line> {
    body.lines().map(Line::text).collect()
}

/// One level of `>` off a line: the `>` and the single space after it, if any.
pub(crate) fn strip_quote(text: &str) -> &str {
    match text.strip_prefix('>') {
        Some(rest) => rest.strip_prefix(' ').unwrap_or(rest),
        None => text,
    }
}

/// For each index, whether every non-blank line from there on is `>`-quoted and at least one
/// is: the shape of a quote that runs to the end of the body.
pub(crate) fn quoted_to_end(lines: &[Line]) -> Vec<bool> {
    let mut out = vec![false; lines.len() + 1];
    let mut all_quoted = true;
    let mut any_quoted = false;
    for (i, line) in lines.iter().enumerate().rev() {
        if !line.is_blank() {
            all_quoted &= line.is_quoted();
            any_quoted |= line.is_quoted();
        }
        out[i] = all_quoted && any_quoted;
    }
    out
}

/// For each index, whether the line lies in a fenced code block (its fences included): a
/// boundary-looking line shown as code is not a boundary. An unclosed fence fences nothing,
/// so a stray ``` cannot hide every boundary below it.
pub(crate) fn fenced(lines: &[Line]) -> Vec<bool> {
    let fences: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.text.trim_start();
            t.starts_with("```") || t.starts_with("~~~")
        })
        .map(|(i, _)| i)
        .collect();
    let mut out = vec![false; lines.len()];
    for pair in fences.chunks_exact(2) {
        for flag in &mut out[pair[0]..=pair[1]] {
            *flag = true;
        }
    }
    out
}
