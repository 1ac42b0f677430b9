//! What a reader without script never sees is taken out before conversion: script, style,
//! templates, embedded media and every element the page hides (§3.4: a fetch runs no script,
//! and a hidden element is not part of the page a person reads).

use markup5ever_rcdom::Handle;

use crate::dom;

/// Elements whose content is never text a reader sees: code, styling, inert templates, and
/// embedded objects whose fallback text ("your browser does not support video") is noise.
const NEVER_READ: &[&str] = &[
    "script", "style", "template", "head", "svg", "math", "canvas", "iframe", "object", "embed",
    "audio", "video", "frameset",
];

/// Deeper than this the tree is flattened to its text: the converter walks recursively, and a
/// page nesting thousands of elements would otherwise overflow its stack.
pub(crate) const MAX_DEPTH: usize = 256;

/// What pruning saw on its way through, used to tell a page that needs script from one that
/// merely uses it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pruned {
    pub scripts: usize,
    pub asks_for_javascript: bool,
}

pub(crate) fn prune(root: &Handle) -> Pruned {
    let mut seen = Pruned::default();
    // Counted over the whole document first: pruning drops `<head>` whole, scripts and all.
    seen.scripts = dom::descendants(root).iter().filter(|n| dom::is(n, "script")).count();
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if let Some(tag) = dom::tag(&node) {
            if NEVER_READ.contains(&tag) || is_hidden(&node) {
                dom::detach(&node);
                continue;
            }
            if tag == "noscript" && asks_for_javascript(&dom::text_content(&node)) {
                // The notice is the page telling a scriptless reader it has nothing for it;
                // classify reports that instead of showing the notice as the page.
                seen.asks_for_javascript = true;
                dom::detach(&node);
                continue;
            }
            if depth >= MAX_DEPTH {
                let text = dom::text_content(&node);
                dom::replace(&node, dom::text_node(&text));
                continue;
            }
        }
        let children: Vec<Handle> = node.children.borrow().clone();
        stack.extend(children.into_iter().map(|c| (c, depth + 1)));
    }
    seen
}

fn is_hidden(node: &Handle) -> bool {
    if dom::has_attr(node, "hidden") {
        return true;
    }
    if dom::is(node, "dialog") && !dom::has_attr(node, "open") {
        return true;
    }
    if dom::attr(node, "aria-hidden").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return true;
    }
    if dom::is(node, "input") && dom::attr(node, "type").is_some_and(|t| t.eq_ignore_ascii_case("hidden")) {
        return true;
    }
    dom::attr(node, "style").is_some_and(|style| style_hides(&style))
}

/// An inline style that removes the element from what is rendered.
fn style_hides(style: &str) -> bool {
    style.split(';').any(|declaration| {
        let Some((property, value)) = declaration.split_once(':') else {
            return false;
        };
        let property = property.trim().to_ascii_lowercase();
        let value = value.trim().trim_end_matches("!important").trim().to_ascii_lowercase();
        (property == "display" && value == "none")
            || (property == "visibility" && (value == "hidden" || value == "collapse"))
    })
}

/// A `<noscript>` telling its reader to turn script on, in the wording sites use.
fn asks_for_javascript(text: &str) -> bool {
    let text = text.to_lowercase();
    let mentions = text.contains("javascript") || text.contains("java script") || text.contains(" js ");
    mentions
        && [
            "enable", "turn on", "activate", "allow", "required", "requires", "need", "must",
            "disabled", "is off", "not supported", "to run this app", "switch on",
        ]
        .iter()
        .any(|ask| text.contains(ask))
}
