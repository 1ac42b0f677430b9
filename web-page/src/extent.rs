//! How much of a page a fetch reads (§3.4): the one main landmark where the page marks
//! exactly one, else the page less its navigation and its page-level banner and footer.

use std::rc::Rc;

use markup5ever_rcdom::Handle;

use crate::dom;

/// Which part of the page was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// The page marks exactly one main landmark, and it alone was read.
    MainLandmark,
    /// The page marks no main landmark, or several: it was read less its navigation, banner
    /// and footer.
    LessNavigation,
    /// All of it, as `wholePage` asks.
    WholePage,
}

/// The part read, and the parts left out of it, each still a tree of its own.
pub(crate) struct Split {
    pub kept: Handle,
    pub left_out: Vec<Handle>,
    pub extent: Extent,
}

/// ARIA's first recognised role token; a role list falls back left to right.
fn role(node: &Handle) -> Option<String> {
    dom::attr(node, "role").and_then(|r| r.split_whitespace().next().map(str::to_ascii_lowercase))
}

fn is_navigation(node: &Handle) -> bool {
    dom::is(node, "nav") || role(node).as_deref() == Some("navigation")
}

/// A `header` or `footer` is the page's banner or footer only when no sectioning element
/// scopes it (HTML-AAM); an explicit role says so wherever it stands.
fn is_page_banner_or_footer(node: &Handle, scoped: bool) -> bool {
    match role(node).as_deref() {
        Some("banner" | "contentinfo") => true,
        // An explicit role other than these overrides the implicit one.
        Some(_) => false,
        None => !scoped && (dom::is(node, "header") || dom::is(node, "footer")),
    }
}

/// An element that scopes the `header`s and `footer`s inside it to itself.
fn scopes(node: &Handle) -> bool {
    matches!(
        dom::tag(node),
        Some("article" | "aside" | "main" | "nav" | "section")
    ) || matches!(
        role(node).as_deref(),
        Some("article" | "complementary" | "main" | "navigation" | "region")
    )
}

/// Splits the page; `mains` are the main landmarks the page still marks.
pub(crate) fn split(root: &Handle, mains: &[Handle], whole_page: bool) -> Split {
    if whole_page {
        return Split {
            kept: root.clone(),
            left_out: Vec::new(),
            extent: Extent::WholePage,
        };
    }
    if let [main] = mains {
        return Split {
            kept: main.clone(),
            left_out: outside(main),
            extent: Extent::MainLandmark,
        };
    }
    let mut left_out: Vec<Handle> = Vec::new();
    let mut stack = vec![(root.clone(), false)];
    while let Some((node, scoped)) = stack.pop() {
        if is_navigation(&node) || is_page_banner_or_footer(&node, scoped) {
            left_out.push(node);
            continue;
        }
        let scoped = scoped || scopes(&node);
        stack.extend(
            node.children
                .borrow()
                .iter()
                .rev()
                .map(|c| (c.clone(), scoped)),
        );
    }
    for gone in &left_out {
        dom::detach(gone);
    }
    Split {
        kept: root.clone(),
        left_out,
        extent: Extent::LessNavigation,
    }
}

/// Everything of the document but `node` and its subtree: the siblings along its path up.
fn outside(node: &Handle) -> Vec<Handle> {
    let mut out = Vec::new();
    let mut current = node.clone();
    while let Some(up) = dom::parent(&current) {
        out.extend(
            up.children
                .borrow()
                .iter()
                .filter(|c| !Rc::ptr_eq(c, &current))
                .cloned(),
        );
        current = up;
    }
    out
}
