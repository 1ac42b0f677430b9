//! Addresses made absolute against the page's own (a model cannot resolve `../a` against a
//! page it has only as text), and images reduced to their alt text (§3.4: an image's address
//! is a read the model cannot make).

use markup5ever_rcdom::Handle;
use url::Url;

use crate::dom;

/// The base every relative address is read against: the page's `<base href>` where it names
/// an http(s) address, else the address the page was served from.
pub(crate) fn base_of(base_element: &Handle, page: &Url) -> Option<Url> {
    dom::with_attr(base_element, "href", |href| page.join(href.trim()).ok())
        .flatten()
        .filter(|base| matches!(base.scheme(), "http" | "https"))
}

/// Makes one link absolute; `true` where an image was replaced by its alt text or dropped.
pub(crate) fn resolve(node: &Handle, tag: &str, base: &Url) -> bool {
    match tag {
        "a" | "area" => {
            let Some(target) =
                dom::with_attr(node, "href", |href| base.join(href.trim()).ok()).flatten()
            else {
                return false;
            };
            if target.scheme() == "javascript" {
                // A script link leads nowhere a reader without script can follow.
                dom::remove_attr(node, "href");
            } else {
                dom::set_attr(node, "href", target.as_str());
            }
            false
        }
        "img" => {
            let alt = dom::with_attr(node, "alt", |a| a.trim().to_owned()).unwrap_or_default();
            if alt.is_empty() {
                dom::detach(node);
            } else {
                dom::replace(node, dom::text_node(&alt));
            }
            true
        }
        _ => false,
    }
}
