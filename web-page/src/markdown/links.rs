//! Addresses made absolute against the page's own (a model cannot resolve `../a` against a
//! page it has only as text), and images reduced to their alt text (§3.4: an image's address
//! is a read the model cannot make).

use markup5ever_rcdom::Handle;
use url::Url;

use crate::dom;

/// The base every relative address is read against: the page's `<base href>` where it names
/// an http(s) address, else the address the page was served from.
pub(crate) fn base_of(root: &Handle, page: &Url) -> Url {
    dom::descendants(root)
        .iter()
        .find(|n| dom::is(n, "base") && dom::has_attr(n, "href"))
        .and_then(|n| dom::attr(n, "href"))
        .and_then(|href| page.join(href.trim()).ok())
        .filter(|base| matches!(base.scheme(), "http" | "https"))
        .unwrap_or_else(|| page.clone())
}

pub(crate) fn resolve(root: &Handle, base: &Url) {
    for node in dom::descendants(root) {
        match dom::tag(&node) {
            Some("a" | "area") => {
                let Some(href) = dom::attr(&node, "href") else {
                    continue;
                };
                match base.join(href.trim()) {
                    // A script link leads nowhere a reader without script can follow.
                    Ok(target) if target.scheme() == "javascript" => dom::remove_attr(&node, "href"),
                    Ok(target) => dom::set_attr(&node, "href", target.as_str()),
                    Err(_) => {}
                }
            }
            Some("img") => {
                let alt = dom::attr(&node, "alt").map(|a| a.trim().to_owned()).unwrap_or_default();
                if alt.is_empty() {
                    dom::detach(&node);
                } else {
                    dom::replace(&node, dom::text_node(&alt));
                }
            }
            _ => {}
        }
    }
}
