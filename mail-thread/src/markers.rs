//! The one-line markers clients write above a quoted or forwarded message (§3.13).

use std::sync::LazyLock;

use regex::Regex;

use crate::Boundary;

static ORIGINAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^-{3,}\s*Original Message\s*-{3,}$").expect("a fixed pattern compiles")
});
// Thunderbird writes "Forwarded Message" capitalised between eight dashes each side; Gmail
// "Forwarded message" between ten and nine; other clients five.
static THUNDERBIRD_FORWARD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^-{3,}\s*Forwarded Message\s*-{3,}$").expect("a fixed pattern compiles")
});
static FORWARD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^-{3,}\s*Forwarded message\s*-{3,}$").expect("a fixed pattern compiles")
});
static SEPARATOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^_{10,}$").expect("a fixed pattern compiles"));

/// The marker a line is, if it is one.
pub(crate) fn marker(text: &str) -> Option<Boundary> {
    let text = text.trim_end();
    // Every marker starts with a dash but Apple Mail's; most lines start with neither.
    if !text.starts_with('-') {
        return (text == "Begin forwarded message:").then_some(Boundary::AppleMail);
    }
    if ORIGINAL.is_match(text) {
        Some(Boundary::OriginalMessage)
    } else if THUNDERBIRD_FORWARD.is_match(text) {
        Some(Boundary::Thunderbird)
    } else if FORWARD.is_match(text) {
        Some(Boundary::Forwarded)
    } else {
        None
    }
}

/// Outlook's rule of underscores above its header block.
pub(crate) fn is_separator(text: &str) -> bool {
    SEPARATOR.is_match(text.trim_end())
}
