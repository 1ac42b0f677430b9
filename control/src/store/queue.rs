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
}
