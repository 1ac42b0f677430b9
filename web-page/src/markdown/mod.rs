//! A page's HTML read as markdown the way a fetch reads it (§3.4): no script, nothing hidden,
//! addresses absolute, images as their alt text, drop-downs listed inline, Cloudflare-cloaked
//! addresses decoded, and only the page's main content unless the whole page is asked for.

mod cfemail;
mod links;
mod meta;
mod nesting;
mod prepare;
mod prune;
mod select;

use std::sync::LazyLock;

use htmd::HtmlToMarkdown;
use markup5ever_rcdom::Handle;
use url::Url;

use crate::dom;
use crate::extent::{self, Extent};

pub use cfemail::decode as decode_cloudflare_email;
pub use nesting::NESTING_LIMIT;
pub use select::SELECT_OPTIONS_SHOWN;

/// The converter, built once: its handlers are fixed.
static CONVERTER: LazyLock<HtmlToMarkdown> = LazyLock::new(|| {
    HtmlToMarkdown::builder()
        // A fetch runs no script, so `<noscript>` is parsed as the markup a scriptless reader
        // is shown.
        .scripting_enabled(false)
        .add_handler(vec!["select"], select::render_select)
        .build()
});

/// A page read as markdown, with what the reading left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageText {
    /// The document's `<title>`, whitespace collapsed.
    pub title: Option<String>,
    /// The markdown of the part read.
    pub markdown: String,
    /// Which part was read.
    pub extent: Extent,
    /// Characters of markdown the extent left out; `wholePage` reads them.
    pub left_out_chars: usize,
    /// Letters and digits in what was read.
    pub read_readable_chars: usize,
    /// Letters and digits in everything read and left out: zero means nothing readable.
    pub readable_chars: usize,
    /// How many `<script>` elements the page carries.
    pub scripts: usize,
    /// Whether a `<noscript>` tells its reader to turn JavaScript on.
    pub asks_for_javascript: bool,
    /// Bytes of HTML not read because the page nests past `NESTING_LIMIT` there.
    pub unread_past_nesting: Option<usize>,
}

/// Reads a page: `page` is the address it was served from, which relative links resolve
/// against.
pub fn read_html(html: &str, page: &Url, whole_page: bool) -> PageText {
    let (html, unread_past_nesting) = match nesting::too_deep_at(html, NESTING_LIMIT) {
        Some(at) => (&html[..at], Some(html.len() - at)),
        None => (html, None),
    };
    // `html_to_tree` cannot fail: it feeds an in-memory string to the parser, whose
    // `io::Result` exists only for its reader-based entry points.
    let html = meta::without_http_equiv(html);
    let root: Handle = match CONVERTER.html_to_tree(&html) {
        Ok(root) => root,
        Err(_) => dom::text_node(""),
    };
    let prepared = prepare::prepare(&root, page);
    let split = extent::split(&root, &prepared.mains, whole_page);
    let markdown = tidy(&CONVERTER.tree_to_markdown(&split.kept));
    let read_readable = readable(&markdown);
    let mut readable_chars = read_readable;
    let mut left_out_chars = 0;
    for part in &split.left_out {
        let text = tidy(&CONVERTER.tree_to_markdown(part));
        readable_chars += readable(&text);
        let chars = text.chars().count();
        if chars > 0 {
            // The parts read alone would be joined by a paragraph break in the whole page.
            left_out_chars += chars + 2;
        }
    }
    PageText {
        title: prepared.title,
        markdown,
        extent: split.extent,
        left_out_chars,
        read_readable_chars: read_readable,
        readable_chars,
        scripts: prepared.scripts,
        asks_for_javascript: prepared.asks_for_javascript,
        unread_past_nesting,
    }
}

/// Letters and digits a reader reads: a link's address (`](…)`) is not text on the page.
fn readable(markdown: &str) -> usize {
    let mut count = 0;
    let mut chars = markdown.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ']' && chars.peek() == Some(&'(') {
            for skipped in chars.by_ref() {
                if skipped == ')' {
                    break;
                }
            }
        } else if c.is_alphanumeric() {
            count += 1;
        }
    }
    count
}

pub(crate) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A title longer than this is cut, saying so: it heads every result of the page.
const TITLE_CHARS: usize = 200;

pub(crate) fn bounded_title(text: &str) -> Option<String> {
    let title = collapse_whitespace(text);
    if title.is_empty() {
        return None;
    }
    if title.chars().count() <= TITLE_CHARS {
        return Some(title);
    }
    let cut: String = title.chars().take(TITLE_CHARS).collect();
    Some(format!("{cut}… (title cut at {TITLE_CHARS} characters)"))
}

/// Blank lines the removed elements left behind, collapsed to one.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank_run = 0;
    for line in markdown.lines() {
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        if blank_run == 0 {
            out.push_str(line);
        }
        out.push('\n');
    }
    out.trim_matches(['\n', ' ']).to_owned()
}
