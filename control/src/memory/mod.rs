//! Memory (§3.6): a per-agent store of entries, each a description that is
//! in context on every turn and a body read on demand. Writes, revisions and
//! deletes are ungated, the one exception to A5; what compensates is the
//! disclosure each result carries into the trace and the status post.
//!
//! One file per concern: `refs` resolves a short reference or refuses it,
//! `edit` applies an append or a replace to a body, `serve` runs the six
//! tools against the store, `render` writes every text the model reads.

pub mod edit;
pub mod refs;
pub mod render;
pub mod run;
pub mod serve;

pub use serve::{Request, Served, serve};

use serde_json::Value;

/// The memory toolset's caps (§3.6), from its settings (§3.4). The
/// defaults keep the listing near 2,000 tokens at the entry cap (50 lines
/// of at most 150 characters) and a body to a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub max_entries: u64,
    pub max_description_chars: usize,
    pub max_body_chars: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Self {
            max_entries: 50,
            max_description_chars: 150,
            max_body_chars: 4_000,
        }
    }
}

impl Caps {
    /// The caps an agent's `memory` settings give, each key falling back
    /// to its default; the settings schema already refuses a non-positive
    /// value at boot.
    pub fn from_settings(settings: Option<&Value>) -> Self {
        let cap = |key: &str| {
            settings
                .and_then(|s| s.get(key))
                .and_then(Value::as_u64)
                .filter(|n| *n > 0)
        };
        let defaults = Self::default();
        Self {
            max_entries: cap("max_entries").unwrap_or(defaults.max_entries),
            max_description_chars: cap("max_description_chars")
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(defaults.max_description_chars),
            max_body_chars: cap("max_body_chars")
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(defaults.max_body_chars),
        }
    }
}

/// The caps of an agent that holds a memory tool, for its listing; `None`
/// for one that holds none, which is shown no listing (§3.6).
pub fn listed_caps(seat: &crate::services::Seat) -> Option<Caps> {
    seat.held
        .iter()
        .any(|t| t.namespace == "memory")
        .then(|| Caps::from_settings(seat.agent.settings.get("memory")))
}

/// The listing after the window (§3.6, §3.8), read inside assembly's one
/// store call.
pub fn listing(
    store: &crate::store::Store,
    agent: &str,
    caps: Option<&Caps>,
) -> Result<Option<String>, crate::store::StoreError> {
    let Some(caps) = caps else {
        return Ok(None);
    };
    Ok(Some(render::listing(&store.memory_listing(agent)?, caps)))
}

#[cfg(test)]
mod tests;
