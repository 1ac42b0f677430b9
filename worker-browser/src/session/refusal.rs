//! What an action refuses, in the framework's words (§3.4 Browsing): each
//! names what was refused and why, and the tool that does what was asked
//! where the agent holds it.

use crate::snapshot::Control;

/// Whether the agent holds a tool (`web::fetch`), so a refusal names only
/// tools the model can call.
pub type Holds<'a> = &'a (dyn Fn(&str) -> bool + Sync);

#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error(
        "No browser session is free: this deployment allows {cap} live at once and every one is held by a running turn. A session frees only when the turn holding it ends, so it is refused rather than waited for.{fetch}"
    )]
    LiveCap { cap: usize, fetch: String },
    #[error(
        "This turn has no page open, so there is no {reference} to act on: web::navigate opens one."
    )]
    NoPage { reference: String },
    #[error("`{url}` is not a URL web::navigate can open: {reason}.")]
    Unparsed { url: String, reason: String },
    #[error(
        "`{url}` was refused: the browser opens only http and https addresses, and this one is {scheme}:."
    )]
    Scheme { url: String, scheme: String },
    #[error("{url} is not a web page but {kind}, which the browser does not open.{fetch}")]
    NotHtml {
        url: String,
        kind: String,
        fetch: String,
    },
    #[error("`{reference}` is not a ref: refs look like e12, as the snapshot lists them.")]
    NotARef { reference: String },
    #[error(
        "{reference} is no longer on the page: the page changed since the snapshot that gave it. The page as it now is:\n\n{page}"
    )]
    Stale { reference: String, page: String },
    #[error(
        "{what} is hidden: the page shows it only once something reveals it, such as a menu that opens on hover.{hover}"
    )]
    Hidden { what: String, hover: String },
    #[error("{what} is a drop-down, which takes no typed text.{select}")]
    FillOnDropDown { what: String, select: String },
    #[error("{what} takes no typed text: web::fill types into text fields and text areas.")]
    NotFillable { what: String },
    #[error("{what} is not a drop-down, so it has no options to choose.")]
    NotDropDown { what: String },
    #[error("{what} offers no option `{ask}`. {near}")]
    NoSuchOption {
        what: String,
        ask: String,
        near: String,
    },
    #[error(
        "{tool} on {what} failed: {reason}. The element is still on the page, and the page is still there to act on:\n\n{page}"
    )]
    ElementFailed {
        tool: String,
        what: String,
        reason: String,
        page: String,
    },
    #[error("The page at {url} did not load: {reason}.")]
    DidNotLoad { url: String, reason: String },
    /// A certificate that did not verify, in the framework's words (§3.4).
    #[error("{0}")]
    Certificate(String),
    /// The egress proxy's own refusal, naming the address (§3.4).
    #[error("{0}")]
    Blocked(String),
    #[error(
        "The browser running this turn's session stopped ({reason}); the session has ended with it. web::navigate starts a fresh one."
    )]
    BrowserStopped { reason: String },
}

/// " web::fetch …" where the agent holds web::fetch, else nothing.
pub fn naming(holds: Holds<'_>, tool: &str, sentence: &str) -> String {
    if holds(tool) {
        format!(" {sentence}")
    } else {
        String::new()
    }
}

/// An element as a refusal names it: `e5 (drop-down "Country")`.
pub fn what(reference: &str, control: Option<&Control>) -> String {
    match control {
        Some(c) if !c.label.is_empty() => format!("{reference} ({} \"{}\")", c.kind, c.label),
        Some(c) => format!("{reference} ({})", c.kind),
        None => reference.to_string(),
    }
}
