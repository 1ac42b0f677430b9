//! One walk over the parsed page that readies it for conversion: the head read for its title
//! and base and dropped, scripts counted and dropped, hidden elements dropped, cloaked
//! addresses decoded, links made absolute, images made alt text, main landmarks noted. One
//! walk, because a megabyte page has tens of thousands of elements (§3.4's 30 ms budget).

use markup5ever_rcdom::Handle;
use url::Url;

use super::{bounded_title, cfemail, links, prune};
use crate::dom;

/// Deeper than this the tree is flattened to its text: the converter walks recursively, and a
/// page nesting thousands of elements would otherwise overflow its stack.
pub(crate) const MAX_DEPTH: usize = 256;

/// What the walk found on its way.
pub(crate) struct Prepared {
    pub title: Option<String>,
    pub scripts: usize,
    pub asks_for_javascript: bool,
    /// The main landmarks still on the page, in document order.
    pub mains: Vec<Handle>,
}

pub(crate) fn prepare(root: &Handle, page: &Url) -> Prepared {
    let mut found = Prepared {
        title: None,
        scripts: 0,
        asks_for_javascript: false,
        mains: Vec::new(),
    };
    let mut base = page.clone();
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        let Some(tag) = dom::tag(&node) else {
            push_children(&mut stack, &node, depth);
            continue;
        };
        if tag == "head" {
            // Document order puts the head first, so its base is known before any link.
            read_head(&node, page, &mut found, &mut base);
            dom::detach(&node);
            continue;
        }
        if tag == "script" {
            found.scripts += 1;
            dom::detach(&node);
            continue;
        }
        if prune::NEVER_READ.contains(&tag) || prune::is_hidden(&node) {
            dom::detach(&node);
            continue;
        }
        if tag == "noscript" && prune::asks_for_javascript(&dom::text_content(&node)) {
            // The notice is the page telling a scriptless reader it has nothing for it;
            // classify reports that rather than show the notice as the page.
            found.asks_for_javascript = true;
            dom::detach(&node);
            continue;
        }
        if depth >= MAX_DEPTH {
            let text = dom::text_content(&node);
            dom::replace(&node, dom::text_node(&text));
            continue;
        }
        if cfemail::uncloak(&node) || links::resolve(&node, tag, &base) {
            continue;
        }
        if tag == "main"
            || dom::with_attr(&node, "role", |r| {
                r.split_whitespace().next() == Some("main")
            }) == Some(true)
        {
            found.mains.push(node.clone());
        }
        push_children(&mut stack, &node, depth);
    }
    found
}

fn push_children(stack: &mut Vec<(Handle, usize)>, node: &Handle, depth: usize) {
    stack.extend(
        node.children
            .borrow()
            .iter()
            .rev()
            .map(|c| (c.clone(), depth + 1)),
    );
}

fn read_head(head: &Handle, page: &Url, found: &mut Prepared, base: &mut Url) {
    for node in dom::descendants(head) {
        match dom::tag(&node) {
            Some("title") if found.title.is_none() => {
                found.title = bounded_title(&dom::text_content(&node));
            }
            Some("base") if *base == *page => {
                if let Some(declared) = links::base_of(&node, page) {
                    *base = declared;
                }
            }
            Some("script") => found.scripts += 1,
            Some("noscript") if prune::asks_for_javascript(&dom::text_content(&node)) => {
                found.asks_for_javascript = true;
            }
            _ => {}
        }
    }
}
