//! Small reads and edits over the parsed tree, shared by the steps that prepare a page for
//! conversion. Every walk here is iterative: a page is untrusted and may nest deeper than a
//! thread's stack.

use std::rc::Rc;

use html5ever::tendril::StrTendril;
use markup5ever_rcdom::{Handle, Node, NodeData};

/// The element's local name, lower case as the HTML parser gives it; `None` for anything but
/// an element.
pub(crate) fn tag(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

pub(crate) fn is(node: &Node, wanted: &str) -> bool {
    tag(node) == Some(wanted)
}

/// Reads an attribute's value in place, if the element carries it.
pub(crate) fn with_attr<R>(node: &Node, wanted: &str, read: impl FnOnce(&str) -> R) -> Option<R> {
    match &node.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| &*a.name.local == wanted)
            .map(|a| read(&a.value)),
        _ => None,
    }
}

/// An attribute's value, if the element carries it.
pub(crate) fn attr(node: &Node, wanted: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| &*a.name.local == wanted)
            .map(|a| a.value.to_string()),
        _ => None,
    }
}

pub(crate) fn has_attr(node: &Node, wanted: &str) -> bool {
    match &node.data {
        NodeData::Element { attrs, .. } => attrs.borrow().iter().any(|a| &*a.name.local == wanted),
        _ => false,
    }
}

/// Sets an attribute the element already carries.
pub(crate) fn set_attr(node: &Node, wanted: &str, value: &str) {
    if let NodeData::Element { attrs, .. } = &node.data {
        for a in attrs.borrow_mut().iter_mut() {
            if &*a.name.local == wanted {
                a.value = StrTendril::from_slice(value);
            }
        }
    }
}

pub(crate) fn remove_attr(node: &Node, wanted: &str) {
    if let NodeData::Element { attrs, .. } = &node.data {
        attrs.borrow_mut().retain(|a| &*a.name.local != wanted);
    }
}

/// The text a subtree holds, in document order, as one string.
pub(crate) fn text_content(node: &Handle) -> String {
    let mut out = String::new();
    let mut stack = vec![node.clone()];
    while let Some(next) = stack.pop() {
        if let NodeData::Text { contents } = &next.data {
            out.push_str(&contents.borrow());
        }
        stack.extend(next.children.borrow().iter().rev().cloned());
    }
    out
}

/// Every node of the subtree in document order, the root first.
pub(crate) fn descendants(root: &Handle) -> Vec<Handle> {
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(next) = stack.pop() {
        stack.extend(next.children.borrow().iter().rev().cloned());
        out.push(next);
    }
    out
}

pub(crate) fn parent(node: &Node) -> Option<Handle> {
    let weak = node.parent.take();
    let strong = weak.as_ref().and_then(std::rc::Weak::upgrade);
    node.parent.set(weak);
    strong
}

/// Takes a node out of its parent; it keeps its own subtree.
pub(crate) fn detach(node: &Handle) {
    if let Some(up) = parent(node) {
        up.children.borrow_mut().retain(|c| !Rc::ptr_eq(c, node));
    }
    node.parent.set(None);
}

/// Puts `with` where `node` stood.
pub(crate) fn replace(node: &Handle, with: Handle) {
    if let Some(up) = parent(node) {
        let mut children = up.children.borrow_mut();
        if let Some(slot) = children.iter_mut().find(|c| Rc::ptr_eq(c, node)) {
            with.parent.set(Some(Rc::downgrade(&up)));
            *slot = with;
        }
    }
    node.parent.set(None);
}

pub(crate) fn text_node(text: &str) -> Handle {
    Node::new(NodeData::Text {
        contents: std::cell::RefCell::new(StrTendril::from_slice(text)),
    })
}
