//! What a reader without script never sees is taken out before conversion: script, style,
//! templates, embedded media and every element the page hides (§3.4: a fetch runs no script,
//! and a hidden element is not part of the page a person reads).

use markup5ever_rcdom::Handle;

use crate::dom;

/// Elements whose content is never text a reader sees: code, styling, inert templates, and
/// embedded objects whose fallback text ("your browser does not support video") is noise.
pub(crate) const NEVER_READ: &[&str] = &[
    "style", "template", "svg", "math", "canvas", "iframe", "object", "embed", "audio", "video",
    "frameset",
];

/// Whether the page hides the element from its reader.
pub(crate) fn is_hidden(node: &Handle) -> bool {
    if dom::has_attr(node, "hidden") {
        return true;
    }
    if dom::is(node, "dialog") && !dom::has_attr(node, "open") {
        return true;
    }
    if dom::with_attr(node, "aria-hidden", |v| {
        v.trim().eq_ignore_ascii_case("true")
    }) == Some(true)
    {
        return true;
    }
    if dom::is(node, "input")
        && dom::with_attr(node, "type", |t| t.eq_ignore_ascii_case("hidden")) == Some(true)
    {
        return true;
    }
    dom::with_attr(node, "style", style_hides) == Some(true)
}

/// An inline style that removes the element from what is rendered.
fn style_hides(style: &str) -> bool {
    style.split(';').any(|declaration| {
        let Some((property, value)) = declaration.split_once(':') else {
            return false;
        };
        let property = property.trim().to_ascii_lowercase();
        let value = value
            .trim()
            .trim_end_matches("!important")
            .trim()
            .to_ascii_lowercase();
        (property == "display" && value == "none")
            || (property == "visibility" && (value == "hidden" || value == "collapse"))
    })
}

/// A `<noscript>` telling its reader to turn script on, in the wording sites use.
pub(crate) fn asks_for_javascript(text: &str) -> bool {
    let text = text.to_lowercase();
    let mentions =
        text.contains("javascript") || text.contains("java script") || text.contains(" js ");
    mentions
        && [
            "enable",
            "turn on",
            "activate",
            "allow",
            "required",
            "requires",
            "need",
            "must",
            "disabled",
            "is off",
            "not supported",
            "to run this app",
            "switch on",
        ]
        .iter()
        .any(|ask| text.contains(ask))
}
