//! A text/html body read as plain text lines, no markup (§3.13: bodies are presented as
//! readable text): blocks become lines, `blockquote` becomes `>` quoting, `pre` a fenced code
//! block, and the element where a client's quote begins leaves a marker line for the split.
//! The walk is iterative: a body is untrusted and may nest deeper than a thread's stack.

use html5ever::parse_document;
use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};

use crate::Boundary;
use crate::lines::Line;

pub(crate) fn to_lines(html: &str) -> Vec<Line> {
    let dom = parse_document(RcDom::default(), Default::default())
        .from_utf8()
        .read_from(&mut html.as_bytes())
        // Reading from a byte slice in memory cannot fail.
        .unwrap_or_default();
    let mut reader = Reader::default();
    let mut steps = vec![Step::Enter(dom.document.clone())];
    while let Some(step) = steps.pop() {
        match step {
            Step::Enter(node) => {
                if reader.enter(&node) {
                    steps.push(Step::Exit(node.clone()));
                    steps.extend(
                        node.children
                            .borrow()
                            .iter()
                            .rev()
                            .map(|c| Step::Enter(c.clone())),
                    );
                }
            }
            Step::Exit(node) => reader.exit(&node),
        }
    }
    reader.flush();
    reader.lines
}

enum Step {
    Enter(Handle),
    Exit(Handle),
}

#[derive(Default)]
struct Reader {
    lines: Vec<Line>,
    line: String,
    quote_depth: usize,
    in_pre: usize,
    /// One entry per open list: the next item's number for `ol`, `None` for `ul`.
    lists: Vec<Option<usize>>,
}

const SKIPPED: &[&str] = &[
    "head", "script", "style", "title", "template", "noscript", "object", "iframe",
];
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "center",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "main",
    "nav",
    "section",
    "summary",
    "tbody",
    "tfoot",
    "thead",
    "tr",
    "caption",
];
/// Blocks set off by a blank line, as a reader sees paragraphs.
const PARAGRAPHS: &[&str] = &[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "table",
    "blockquote",
    "pre",
];

impl Reader {
    /// Starts a node; false if its subtree is not read.
    fn enter(&mut self, node: &Handle) -> bool {
        match &node.data {
            NodeData::Text { contents } => {
                self.text(&contents.borrow());
                false
            }
            NodeData::Element { name, attrs, .. } => {
                let tag: &str = &name.local;
                let attr = |wanted: &str| {
                    attrs
                        .borrow()
                        .iter()
                        .find(|a| &*a.name.local == wanted)
                        .map(|a| a.value.to_string())
                };
                if SKIPPED.contains(&tag) || attr("hidden").is_some() || hidden(attr("style")) {
                    return false;
                }
                if let Some(marker) = quote_marker(node, tag, &attr) {
                    self.flush();
                    self.push_line(String::new(), Some(marker));
                }
                match tag {
                    "br" => self.end_line(),
                    "img" => {
                        if let Some(alt) = attr("alt").filter(|a| !a.trim().is_empty()) {
                            self.text(&format!("[image: {}]", alt.trim()));
                        }
                    }
                    "li" => {
                        self.flush();
                        let bullet = match self.lists.last_mut() {
                            Some(Some(n)) => {
                                *n += 1;
                                format!("{}. ", *n - 1)
                            }
                            _ => "- ".to_string(),
                        };
                        self.line.push_str(&bullet);
                    }
                    _ if PARAGRAPHS.contains(&tag) => {
                        self.paragraph_break();
                        match tag {
                            "blockquote" => self.quote_depth += 1,
                            "pre" => {
                                self.push_line("```".into(), None);
                                self.in_pre += 1;
                            }
                            "ul" => self.lists.push(None),
                            "ol" => self.lists.push(Some(1)),
                            _ => {}
                        }
                    }
                    _ if BLOCKS.contains(&tag) => self.flush(),
                    _ => {}
                }
                true
            }
            _ => true,
        }
    }

    fn exit(&mut self, node: &Handle) {
        let NodeData::Element { name, .. } = &node.data else {
            return;
        };
        let tag: &str = &name.local;
        match tag {
            "td" | "th" => self.text(" "),
            "li" => self.flush(),
            _ if PARAGRAPHS.contains(&tag) => {
                match tag {
                    "pre" => {
                        self.end_line_if_any();
                        self.in_pre = self.in_pre.saturating_sub(1);
                        self.push_line("```".into(), None);
                    }
                    "blockquote" => {
                        self.flush();
                        self.quote_depth = self.quote_depth.saturating_sub(1);
                    }
                    "ul" | "ol" => {
                        self.lists.pop();
                    }
                    _ => {}
                }
                self.paragraph_break();
            }
            _ if BLOCKS.contains(&tag) => self.flush(),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if self.in_pre > 0 {
            let mut segments = text.split('\n').peekable();
            while let Some(segment) = segments.next() {
                self.line.push_str(segment.trim_end_matches('\r'));
                if segments.peek().is_some() {
                    self.end_line();
                }
            }
            return;
        }
        for c in text.chars() {
            // A no-break space is how Outlook writes an empty line; it reads as a space.
            if c.is_whitespace() {
                if !self.line.is_empty() && !self.line.ends_with(' ') {
                    self.line.push(' ');
                }
            } else {
                self.line.push(c);
            }
        }
    }

    /// Ends the line being written, even if empty (`<br>`).
    fn end_line(&mut self) {
        let text = std::mem::take(&mut self.line);
        let text = if self.in_pre > 0 {
            text
        } else {
            text.trim_end().to_string()
        };
        self.push_line(text, None);
    }

    fn end_line_if_any(&mut self) {
        if !self.line.is_empty() {
            self.end_line();
        }
    }

    /// Ends the line being written if it holds text: a block's edge.
    fn flush(&mut self) {
        if self.line.trim().is_empty() {
            self.line.clear();
        } else {
            self.end_line();
        }
    }

    fn paragraph_break(&mut self) {
        self.flush();
        let last_blank = self
            .lines
            .last()
            .is_none_or(|l| l.marker.is_none() && l.text.trim_start_matches('>').trim().is_empty());
        if !last_blank {
            self.push_line(String::new(), None);
        }
    }

    fn push_line(&mut self, text: String, marker: Option<Boundary>) {
        let text = match (self.quote_depth, text.is_empty()) {
            (0, _) => text,
            (depth, true) => ">".repeat(depth),
            (depth, false) => format!("{} {text}", ">".repeat(depth)),
        };
        self.lines.push(Line { text, marker });
    }
}

fn hidden(style: Option<String>) -> bool {
    style.is_some_and(|s| {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        s.to_ascii_lowercase().contains("display:none")
    })
}

/// The element where a client's quote begins, and the rule that names it (§3.13).
fn quote_marker(
    node: &Handle,
    tag: &str,
    attr: &dyn Fn(&str) -> Option<String>,
) -> Option<Boundary> {
    let has_class = |wanted: &str| {
        attr("class").is_some_and(|c| c.split_ascii_whitespace().any(|t| t == wanted))
    };
    match tag {
        "blockquote" if attr("type").is_some_and(|t| t.eq_ignore_ascii_case("cite")) => {
            Some(Boundary::BlockquoteCite)
        }
        "div" if has_class("gmail_quote") => Some(Boundary::GmailQuote),
        "div" if attr("id").as_deref() == Some("divRplyFwdMsg") => Some(Boundary::DivRplyFwdMsg),
        // Outlook desktop sets its header block off with a top border.
        "div"
            if attr("style").is_some_and(|s| {
                let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
                s.to_ascii_lowercase().contains("border-top:solid")
            }) && text_starts_with(node, "From:") =>
        {
            Some(Boundary::OutlookHtmlHeader)
        }
        _ => None,
    }
}

/// Whether a subtree's text, leading whitespace skipped, starts with `prefix`; reads only as
/// far as it needs.
fn text_starts_with(node: &Handle, prefix: &str) -> bool {
    let mut seen = String::new();
    let mut stack = vec![node.clone()];
    while let Some(next) = stack.pop() {
        if let NodeData::Text { contents } = &next.data {
            let contents = contents.borrow();
            let text: &str = if seen.is_empty() {
                contents.trim_start()
            } else {
                &contents
            };
            seen.push_str(text);
            if seen.len() >= prefix.len() {
                break;
            }
        }
        stack.extend(next.children.borrow().iter().rev().cloned());
    }
    seen.starts_with(prefix)
}
