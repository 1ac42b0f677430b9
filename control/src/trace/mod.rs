//! `/collegium trace {post}` (§8.3): the turns a post belongs to, each
//! headed by its own record — what started it, what it answers, what it
//! read and what it cost — then every event at its offset. Read from the
//! store in one call (`gather`), rendered without it (`render`), so the
//! rendering is tested on its own. Reasoning is never read (§3.12).

mod events;
mod head;

use crate::store::{
    AnsweredPost, Millis, PostOfTurn, Store, StoreError, TurnEvent, TurnHead,
    decisions::DecisionRecord,
};

pub use events::fence;

/// Everything one turn's trace shows.
#[derive(Debug, Clone)]
pub struct TurnTrace {
    pub head: TurnHead,
    /// How the post the invoker named belongs to this turn.
    pub relation: PostOfTurn,
    pub answered: Vec<AnsweredPost>,
    /// Unit posts the turn wrote (§3.15): (post id, message).
    pub unit_posts: Vec<(String, String)>,
    /// When the post the window reached back to was written.
    pub reach_at: Option<Millis>,
    /// What the turn is parked on, with since when (§8.1).
    pub parked: Vec<(DecisionRecord, Millis)>,
    pub events: Vec<TurnEvent>,
}

/// What the renderer needs from outside the store.
pub struct Reader<'a> {
    pub timezone: chrono_tz::Tz,
    pub now: Millis,
    /// An agent's display name by username (§3.2).
    pub name: &'a dyn Fn(&str) -> String,
}

/// Reads one turn's trace; none for no such turn.
pub fn gather(
    store: &Store,
    turn_id: &str,
    relation: PostOfTurn,
) -> Result<Option<TurnTrace>, StoreError> {
    let Some(head) = store.trace_head(turn_id)? else {
        return Ok(None);
    };
    let reach_at = match &head.context_reach_post_id {
        Some(post) => store.post(post)?.map(|p| p.created_at),
        None => None,
    };
    let parked = if head.ended_at.is_none() {
        store
            .open_decisions(Some(&head.agent))?
            .into_iter()
            .filter(|(d, _)| d.turn_id == head.id)
            .collect()
    } else {
        Vec::new()
    };
    Ok(Some(TurnTrace {
        answered: store.answered_posts(turn_id)?,
        unit_posts: store.unit_posts_of_turn(turn_id)?,
        events: store.turn_events(turn_id)?,
        head,
        relation,
        reach_at,
        parked,
    }))
}

/// The whole answer: a line naming the turns when several share the post,
/// then each turn's trace in full.
pub fn render(post_id: &str, traces: &[TurnTrace], reader: &Reader<'_>) -> String {
    let mut out = String::new();
    if traces.len() > 1 {
        out.push_str(&format!(
            "Post {post_id} belongs to {} turns; each is traced below, oldest first:\n",
            traces.len()
        ));
        for trace in traces {
            out.push_str(&format!(
                "- turn {} of {} ({}), {}\n",
                trace.head.id,
                (reader.name)(&trace.head.agent),
                head::relation(&trace.relation),
                crate::context::window::local_time(trace.head.started_at, reader.timezone),
            ));
        }
        out.push('\n');
    }
    for (i, trace) in traces.iter().enumerate() {
        if i > 0 {
            out.push_str("\n---\n\n");
        }
        head::render(&mut out, post_id, trace, reader);
        events::render(&mut out, trace);
    }
    out
}

#[cfg(test)]
mod tests;
