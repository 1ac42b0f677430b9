//! The queue: post ids per agent and channel, never content (§5.2).

use rusqlite::params;

use super::{Millis, Store, StoreError};

impl Store {
    /// Queues a post for an agent in a channel; queuing it twice is one row.
    pub fn enqueue(
        &self,
        agent: &str,
        channel_id: &str,
        post_id: &str,
        now: Millis,
    ) -> Result<bool, StoreError> {
        Ok(self.conn.execute(
            "INSERT INTO queue (agent, channel_id, post_id, queued_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT DO NOTHING",
            params![agent, channel_id, post_id, now],
        )? == 1)
    }

    /// The post ids waiting for an agent in a channel, oldest first.
    pub fn queued(&self, agent: &str, channel_id: &str) -> Result<Vec<String>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT post_id FROM queue WHERE agent = ?1 AND channel_id = ?2
             ORDER BY queued_at, post_id",
        )?;
        let rows = statement
            .query_map(params![agent, channel_id], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The rows waiting untaken for an agent in a channel, with when each
    /// was queued, oldest first.
    pub fn queued_rows(
        &self,
        agent: &str,
        channel_id: &str,
    ) -> Result<Vec<(String, Millis)>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT post_id, queued_at FROM queue
             WHERE agent = ?1 AND channel_id = ?2 AND taken_by IS NULL
             ORDER BY queued_at, post_id",
        )?;
        let rows = statement
            .query_map(params![agent, channel_id], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Takes for `turn_id` every row queued for the lane not yet taken, up to
    /// `until` (a queue time) where a drain bounds its first assembly
    /// (§5.2). Returns the post ids taken, oldest first.
    pub fn take_queued(
        &mut self,
        agent: &str,
        channel_id: &str,
        turn_id: &str,
        until: Option<Millis>,
    ) -> Result<Vec<String>, StoreError> {
        let until = until.unwrap_or(Millis::MAX);
        let tx = self.conn.transaction()?;
        let taken: Vec<String> = {
            let mut statement = tx.prepare(
                "UPDATE queue SET taken_by = ?3
                 WHERE agent = ?1 AND channel_id = ?2 AND taken_by IS NULL AND queued_at <= ?4
                 RETURNING post_id",
            )?;
            statement
                .query_map(params![agent, channel_id, turn_id, until], |row| row.get(0))?
                .collect::<Result<_, _>>()?
        };
        // A drain's row says where it began: the oldest post its first
        // assembly took (§5.2).
        tx.execute(
            "UPDATE turns SET drain_from_post_id =
                 (SELECT post_id FROM queue WHERE taken_by = ?1 ORDER BY queued_at, post_id LIMIT 1)
             WHERE id = ?1 AND cause = 'drain' AND drain_from_post_id IS NULL",
            params![turn_id],
        )?;
        tx.commit()?;
        let mut taken = taken;
        taken.sort();
        Ok(taken)
    }

    /// A progress exit consumes what the turn took (§5.2).
    pub fn consume_taken(&self, turn_id: &str) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM queue WHERE taken_by = ?1", params![turn_id])?;
        Ok(())
    }

    /// Any other exit returns what the turn took to the queue (§5.2).
    /// Removes one post from a lane's queue.
    pub fn drop_queued(
        &self,
        agent: &str,
        channel_id: &str,
        post_id: &str,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "DELETE FROM queue WHERE agent = ?1 AND channel_id = ?2 AND post_id = ?3",
            params![agent, channel_id, post_id],
        )?;
        Ok(())
    }

    /// Removes a forgotten post from every lane's queue (§8.4); a turn that
    /// took it already keeps it. Returns how many rows went.
    pub fn unqueue_everywhere(&self, post_id: &str) -> Result<usize, StoreError> {
        Ok(self.conn.execute(
            "DELETE FROM queue WHERE post_id = ?1 AND taken_by IS NULL",
            params![post_id],
        )?)
    }

    /// Discards a lane's queue (`/collegium queue {agent} clear`, §8.4): the
    /// rows nobody has taken go, the posts stay, and a running turn keeps
    /// what it took. Returns how many rows went.
    pub fn clear_queue(&self, agent: &str, channel_id: &str) -> Result<usize, StoreError> {
        Ok(self.conn.execute(
            "DELETE FROM queue WHERE agent = ?1 AND channel_id = ?2 AND taken_by IS NULL",
            params![agent, channel_id],
        )?)
    }

    /// Records that a post was returned after an unclean stop; false when it
    /// had been once already, and may not be again (§7.3).
    pub fn return_after_crash(&self, post_id: &str, at: Millis) -> Result<bool, StoreError> {
        Ok(self.conn.execute(
            "INSERT INTO crash_returns (post_id, returned_at) VALUES (?1, ?2)
             ON CONFLICT DO NOTHING",
            params![post_id, at],
        )? == 1)
    }

    pub fn return_taken(&self, turn_id: &str) -> Result<(), StoreError> {
        // A post forgotten while the turn held it is not answered again
        // (§8.4): the turn kept what it took, and only that turn.
        self.conn.execute(
            "DELETE FROM queue WHERE taken_by = ?1
             AND post_id IN (SELECT id FROM posts WHERE forgotten_at IS NOT NULL)",
            params![turn_id],
        )?;
        self.conn.execute(
            "UPDATE queue SET taken_by = NULL WHERE taken_by = ?1",
            params![turn_id],
        )?;
        Ok(())
    }

    /// Every lane with rows nobody has taken: (agent, channel, how many,
    /// since when they have stood with no turn of the agent's running). The
    /// stall sweep reads it (§7.6): a row queued behind a turn starts
    /// standing only once that turn ends and the lane goes idle.
    pub fn standing_queues(&self) -> Result<Vec<(String, String, u32, Millis)>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT q.agent, q.channel_id, COUNT(*),
                    MAX(MIN(q.queued_at),
                        COALESCE((SELECT MAX(t.ended_at) FROM turns t
                                  WHERE t.agent = q.agent AND t.channel_id = q.channel_id), 0))
             FROM queue q
             WHERE q.taken_by IS NULL GROUP BY q.agent, q.channel_id
             ORDER BY q.agent, q.channel_id",
        )?;
        let rows = statement
            .query_map([], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Lanes holding rows nobody has taken: what a boot drains (§7.3).
    pub fn lanes_with_queued(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT DISTINCT agent, channel_id FROM queue WHERE taken_by IS NULL ORDER BY agent, channel_id",
        )?;
        let rows = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s5_2_taken_rows_are_consumed_on_progress_and_returned_otherwise() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("s.db")).expect("open");
        store.enqueue("mira", "c1", "p1", 10).expect("enqueue");
        store.enqueue("mira", "c1", "p2", 20).expect("enqueue");
        store.enqueue("mira", "c1", "p3", 30).expect("enqueue");
        let taken = store
            .take_queued("mira", "c1", "t1", Some(20))
            .expect("take");
        assert_eq!(taken, ["p1", "p2"], "a drain is bounded by its choice");
        assert!(store.take_queued("mira", "c1", "t2", None).expect("take") == ["p3"]);
        store.return_taken("t1").expect("return");
        store.consume_taken("t2").expect("consume");
        assert_eq!(store.queued("mira", "c1").expect("queued"), ["p1", "p2"]);
        assert_eq!(
            store.lanes_with_queued().expect("lanes"),
            [("mira".to_string(), "c1".to_string())]
        );
    }

    fn open(store: &Store, id: &str, cause: crate::store::TurnCause) {
        store
            .open_turn(&crate::store::NewTurn {
                id: id.into(),
                agent: "mira".into(),
                channel_id: "c1".into(),
                boot_id: "b".into(),
                started_at: 1,
                cause,
                answers_post_id: None,
                depth: 0,
                chain_root: id.into(),
                chain_length: 1,
                model: "m".into(),
            })
            .expect("turn");
    }

    #[test]
    fn s5_2_a_drain_records_the_oldest_post_it_began_from() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("s.db")).expect("open");
        store.enqueue("mira", "c1", "p2", 10).expect("enqueue");
        store.enqueue("mira", "c1", "p1", 20).expect("enqueue");
        open(&store, "t1", crate::store::TurnCause::Drain);
        store.take_queued("mira", "c1", "t1", None).expect("take");
        let drain = store.turn("t1").expect("read").expect("turn");
        assert_eq!(drain.drain_from_post_id.as_deref(), Some("p2"));
        store.enqueue("mira", "c1", "p3", 30).expect("enqueue");
        open(&store, "t2", crate::store::TurnCause::Post);
        store.take_queued("mira", "c1", "t2", None).expect("take");
        let post = store.turn("t2").expect("read").expect("turn");
        assert_eq!(post.drain_from_post_id, None, "only a drain has a start");
    }

    #[test]
    fn s7_5_a_steer_in_the_trace_marks_the_turn_steered() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.db")).expect("open");
        open(&store, "t1", crate::store::TurnCause::Post);
        assert!(!store.turn("t1").expect("read").expect("turn").steered);
        store
            .append_event(&crate::store::TurnEvent {
                turn_id: "t1".into(),
                seq: 0,
                at: 2,
                kind: crate::store::TraceKind::Steer,
                call_id: None,
                tool: None,
                arguments: None,
                content: Some("use the March figures".into()),
                detail: None,
            })
            .expect("event");
        assert!(store.turn("t1").expect("read").expect("turn").steered);
    }

    #[test]
    fn s7_6_a_standing_queues_clock_counts_from_when_the_lane_went_idle() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.db")).expect("open");
        store.enqueue("mira", "c1", "p1", 10).expect("enqueue");
        let standing = store.standing_queues().expect("standing");
        assert_eq!(
            standing,
            [("mira".into(), "c1".into(), 1, 10)],
            "idle all along"
        );
        // The post waited behind a turn that ended at 50: it has stood
        // since then, not since it was queued.
        open(&store, "t1", crate::store::TurnCause::Post);
        store
            .end_turn(
                "t1",
                &crate::store::TurnEnd {
                    exit_kind: "provider_failure".into(),
                    ended_at: 50,
                    ended_by: None,
                    context_reach_post_id: None,
                },
            )
            .expect("end");
        let standing = store.standing_queues().expect("standing");
        assert_eq!(standing, [("mira".into(), "c1".into(), 1, 50)]);
    }
}
