//! The queue (§5.2): posts addressed to a busy agent wait as post ids, and
//! the next turn drains them — takes them all — rather than popping one.
//! Which of the drained posts the turn answers is decided here; the rows
//! themselves live in the store (`store::queue`).

/// One drained row, as the drain reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub post_id: String,
    /// Milliseconds since the epoch, as Mattermost stamps the post.
    pub created_at: i64,
    /// A person wrote it (not an agent or the system bot).
    pub by_person: bool,
}

/// The post a drain answers: the newest a person addressed to the agent,
/// as if the person had found it idle, so their request never runs inside
/// a colleague's chain; only a drain of nothing but colleagues' posts
/// answers the earliest of them (§5.2). None for an empty drain.
pub fn answered(drained: &[Queued]) -> Option<&Queued> {
    let newest_person = drained
        .iter()
        .filter(|q| q.by_person)
        .max_by_key(|q| (q.created_at, q.post_id.as_str()));
    newest_person.or_else(|| {
        drained
            .iter()
            .min_by_key(|q| (q.created_at, q.post_id.as_str()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, at: i64, by_person: bool) -> Queued {
        Queued {
            post_id: id.into(),
            created_at: at,
            by_person,
        }
    }

    #[test]
    fn s5_2_a_drain_answers_the_newest_person_who_addressed_the_agent() {
        let drained = [
            row("colleague-1", 100, false),
            row("ana-1", 200, true),
            row("colleague-2", 300, false),
            row("bo-1", 250, true),
        ];
        assert_eq!(answered(&drained).map(|q| q.post_id.as_str()), Some("bo-1"));
    }

    #[test]
    fn s5_2_only_a_drain_of_colleagues_posts_answers_the_earliest() {
        let drained = [row("c-2", 300, false), row("c-1", 100, false)];
        assert_eq!(answered(&drained).map(|q| q.post_id.as_str()), Some("c-1"));
        assert_eq!(answered(&[]), None);
    }
}
