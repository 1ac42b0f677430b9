//! A drop-down's options listed inline where it stands, bounded (§3.4: a drop-down's options
//! are listed once, bounded, inline on a fetched page).

use htmd::Element;
use htmd::element_handler::{HandlerResult, Handlers};

use crate::dom;

/// How many options a drop-down shows before the rest are counted: enough for a short list
/// whole and for the start of a long one, which is alphabetical far more often than not.
pub const SELECT_OPTIONS_SHOWN: usize = 20;

pub(crate) fn render_select(_: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let node = element.node;
    let name = ["aria-label", "name", "id"]
        .iter()
        .find_map(|a| dom::attr(node, a).filter(|v| !v.trim().is_empty()));
    let options: Vec<(String, bool)> = dom::descendants(node)
        .iter()
        .filter(|n| dom::is(n, "option"))
        .map(|option| {
            let label = dom::attr(option, "label")
                .filter(|l| !l.trim().is_empty())
                .unwrap_or_else(|| dom::text_content(option));
            let label = label.split_whitespace().collect::<Vec<_>>().join(" ");
            (label, dom::has_attr(option, "selected"))
        })
        .collect();
    let mut out = String::from("[drop-down");
    if let Some(name) = name {
        out.push_str(&format!(" \"{}\"", name.trim()));
    }
    out.push_str(": ");
    if options.is_empty() {
        out.push_str("no options");
    }
    let shown: Vec<String> = options
        .iter()
        .take(SELECT_OPTIONS_SHOWN)
        .map(|(label, selected)| {
            if *selected {
                format!("\"{label}\" (selected)")
            } else {
                format!("\"{label}\"")
            }
        })
        .collect();
    out.push_str(&shown.join(", "));
    let more = options.len().saturating_sub(SELECT_OPTIONS_SHOWN);
    if more > 0 {
        out.push_str(&format!(", and {more} more options"));
        if let Some((label, _)) = options.iter().skip(SELECT_OPTIONS_SHOWN).find(|(_, s)| *s) {
            out.push_str(&format!(" (\"{label}\" selected among them)"));
        }
    }
    out.push(']');
    Some(HandlerResult {
        content: format!(" {out} "),
        markdown_translated: true,
    })
}
