//! Short references (§3.6): an entry is shown by `m` and the first six
//! characters of its key, and the store resolves any prefix of the key of at
//! least four characters back to it, refusing rather than guessing when a
//! prefix matches two. A reference that matches none of the agent's entries
//! is refused the same way whether it was deleted or is another agent's, so
//! nothing says which: memories are private.

use crate::store::{MemoryEntry, Store, StoreError};

/// The fewest key characters a reference may give.
pub const MIN_CHARS: usize = 4;

/// The key prefix a reference gives, lowercased: `mabc123`, `abc123` and
/// `[mABC123]` are the same.
pub fn key_prefix(text: &str) -> Option<String> {
    let text = text.trim().trim_start_matches('[').trim_end_matches(']');
    let hex = text
        .strip_prefix('m')
        .or_else(|| text.strip_prefix('M'))
        .unwrap_or(text)
        .to_ascii_lowercase();
    let valid = (MIN_CHARS..=16).contains(&hex.len()) && hex.chars().all(|c| c.is_ascii_hexdigit());
    valid.then_some(hex)
}

/// The agent's entry `text` names, or the refusal the model reads.
pub fn resolve(
    store: &Store,
    agent: &str,
    text: &str,
) -> Result<Result<MemoryEntry, String>, StoreError> {
    let Some(prefix) = key_prefix(text) else {
        return Ok(Err(format!(
            "`{text}` is not a memory reference. Give the reference the listing in the framework's message shows, such as mab12cd."
        )));
    };
    let mut found = store.memories_with_prefix(agent, &prefix)?;
    Ok(match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(super::render::gone(text.trim())),
        _ => Err(super::render::ambiguous(text.trim(), &found)),
    })
}
