//! Loop control (§7.4): depth counts how far work was handed down from a
//! person, chain length how many turns one person's post set in motion.
//! Both are read off the post a turn answers, recorded on the turn, and
//! never shown to the model. A return — an answer to the turn that asked —
//! goes back to that turn's depth, so a supervisor delegating one unit at a
//! time stays at depth 0; every turn, return or hand-off, lengthens the
//! chain.

pub mod ceiling;
pub mod halt;
pub mod membership;

use crate::store::{AuthorKind, ObservedPost, Store, StoreError};

/// Where a new turn sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub depth: u32,
    /// The root's turn id; none for a turn that is its own root.
    pub chain_root: Option<String>,
    pub chain_length: u32,
}

impl Placement {
    /// A person's post, or a post with no recorded turn behind it: a root.
    fn root(depth: u32) -> Self {
        Self {
            depth,
            chain_root: None,
            chain_length: 1,
        }
    }
}

/// Places a turn of `agent` answering `answered` (none: a root at depth 0).
pub fn place(
    store: &Store,
    agent: &str,
    answered: Option<&ObservedPost>,
) -> Result<Placement, StoreError> {
    let Some(post) = answered else {
        return Ok(Placement::root(0));
    };
    match post.author_kind {
        AuthorKind::Person | AuthorKind::OtherBot => return Ok(Placement::root(0)),
        // A trigger: a cron is not a person (§7.4).
        AuthorKind::SystemBot => return Ok(Placement::root(1)),
        AuthorKind::Agent => {}
    }
    // A turn with no recorded root is its own root (§7.4).
    let Some(writer) = post.turn_id.as_deref() else {
        return Ok(Placement::root(1));
    };
    let Some(writer) = store.lineage_of(writer)? else {
        return Ok(Placement::root(1));
    };
    // A return: the writer's own triggering post was written by a turn of
    // the agent now activated; it goes back to that turn's depth.
    let asked = writer
        .answers_post_id
        .as_deref()
        .map(|p| store.post(p))
        .transpose()?
        .flatten();
    let returned_to = match asked {
        Some(asked) if asked.author_kind == AuthorKind::Agent && asked.author_name == agent => {
            match asked.turn_id.as_deref() {
                Some(asking) => store.lineage_of(asking)?.map(|l| l.depth),
                None => None,
            }
        }
        _ => None,
    };
    Ok(Placement {
        depth: returned_to.unwrap_or(writer.depth + 1),
        chain_root: Some(writer.chain_root),
        chain_length: writer.chain_length + 1,
    })
}

#[cfg(test)]
mod tests;
