//! Splits a mail body into the newest message and the messages it quotes, at the boundaries
//! the sender's client wrote, so an announcement shows the thread rather than a wall (§3.13,
//! §4.2). The split is deterministic code: a boundary no rule recognises leaves its text where
//! it is, and no text is ever dropped or reordered — only the boundary lines themselves leave
//! the parts (kept in [`Quoted::boundary_text`]) and one level of `>` per quoted level.
//!
//! Only English boundaries are recognised (`docs/spec-findings.md`, §3.13).

mod attribution;
mod boundary;
mod header_block;
mod html;
mod lines;
mod markers;
mod render;
mod split;

pub use boundary::Boundary;
pub use render::blockquote;

/// The newest message's real headers, as the mailbox reported them; the renderer prints them
/// above the newest part (§3.13).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Headers {
    pub from: String,
    pub date: String,
    pub subject: String,
}

/// A message the newest one quotes, with what its boundary carried, verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quoted {
    pub sender: Option<String>,
    pub date: Option<String>,
    pub subject: Option<String>,
    /// The message's lines, one level of `>` stripped where its boundary quotes.
    pub body: String,
    /// The rule that found the boundary.
    pub boundary: Boundary,
    /// The boundary's own lines as written (an attribution, a marker, a header block); empty
    /// for a bare `>` block. Kept so that no line of the input is unaccounted for.
    pub boundary_text: String,
}

/// A body split at its boundaries: the newest message, then the quoted ones, oldest last.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Thread {
    pub newest: String,
    pub quoted: Vec<Quoted>,
}

/// Splits a text/plain body. Line endings (LF or CRLF) are not kept: parts join lines with LF.
pub fn split_text(body: &str) -> Thread {
    split::split(lines::from_text(body))
}

/// Splits a text/html body: the quote markers the clients write (`blockquote type="cite"`,
/// `div class="gmail_quote"`, `div id="divRplyFwdMsg"`, Outlook's header block) and then the
/// text rules, each part read as plain text with no markup.
pub fn split_html(html: &str) -> Thread {
    split::split(html::to_lines(html))
}
