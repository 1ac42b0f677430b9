//! What of a read text a result shows: a window from an offset, or the places a find found
//! (§3.4). The daemon uses the same for a PDF's text.

use crate::find::{Found, find};
use crate::window::window;

/// What the caller asked to see of the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reading {
    /// Read the whole page rather than its main content (HTML only).
    pub whole_page: bool,
    /// Where the window starts, in characters.
    pub offset: Option<usize>,
    /// Phrases to find; a find replaces the window.
    pub find: Vec<String>,
}

/// What a result shows of the text it read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    Window {
        offset: usize,
        end: usize,
        total: usize,
        text: String,
    },
    Found {
        found: Found,
        /// The offset given beside the find, which a find does not use.
        offset_ignored: Option<usize>,
    },
}

pub fn view(text: &str, reading: &Reading) -> View {
    if reading.find.iter().any(|p| !p.trim().is_empty()) {
        return View::Found {
            found: find(text, &reading.find),
            offset_ignored: reading.offset,
        };
    }
    let shown = window(text, reading.offset.unwrap_or(0));
    View::Window {
        offset: shown.offset,
        end: shown.end,
        total: shown.total,
        text: shown.text.to_owned(),
    }
}
