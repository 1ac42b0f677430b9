//! Episode boundaries, clears and forgotten posts (§3.8, §8.4, §8.5): the
//! three things that put a post out of an agent's reach without a model
//! deciding anything.

use rusqlite::{OptionalExtension, params};

use super::{Millis, Store, StoreError};

impl Store {
    /// Marks an episode boundary for `agent` in the channel (`/collegium
    /// reset`, run by `set_by`, §3.8): context and search never reach back
    /// past the latest one. Every boundary is kept, with who set it; an
    /// earlier one never moves the boundary back.
    pub fn reset_episode(
        &self,
        agent: &str,
        channel_id: &str,
        at: Millis,
        set_by: &str,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO episode_boundaries (agent, channel_id, at, set_by) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (agent, channel_id, at) DO NOTHING",
            params![agent, channel_id, at, set_by],
        )?;
        Ok(())
    }

    /// The agent's latest episode boundary in the channel, if one was set.
    pub fn episode_boundary(
        &self,
        agent: &str,
        channel_id: &str,
    ) -> Result<Option<Millis>, StoreError> {
        Ok(self.conn.query_row(
            "SELECT MAX(at) FROM episode_boundaries WHERE agent = ?1 AND channel_id = ?2",
            params![agent, channel_id],
            |row| row.get(0),
        )?)
    }

    /// Records the boundary of a channel's clear (§8.5): nothing older than
    /// it is in anyone's reach, and the store never records it again.
    pub fn set_cleared_before(&self, channel_id: &str, at: Millis) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE channels SET last_cleared_at = MAX(COALESCE(last_cleared_at, 0), ?2)
             WHERE id = ?1",
            params![channel_id, at],
        )?;
        Ok(())
    }

    /// When the channel was last cleared, if ever.
    pub fn cleared_before(&self, channel_id: &str) -> Result<Option<Millis>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT last_cleared_at FROM channels WHERE id = ?1",
                params![channel_id],
                |row| row.get::<_, Option<Millis>>(0),
            )
            .optional()?
            .flatten())
    }

    /// How far back the agent's context reaches in the channel: its latest
    /// episode boundary or the channel's last clear, whichever is later;
    /// 0 when neither was set (§3.8).
    pub fn context_floor(&self, agent: &str, channel_id: &str) -> Result<Millis, StoreError> {
        let boundary = self.episode_boundary(agent, channel_id)?.unwrap_or(0);
        let cleared = self.cleared_before(channel_id)?.unwrap_or(0);
        Ok(boundary.max(cleared))
    }

    /// Forgets a post (`/collegium forget`, §8.4): from now on it is absent
    /// from every agent's window, search and reads. Returns whether the post
    /// is known; forgetting one twice keeps the first time.
    pub fn forget_post(&self, id: &str, at: Millis) -> Result<bool, StoreError> {
        let known = self.conn.execute(
            "UPDATE posts SET forgotten_at = COALESCE(forgotten_at, ?2) WHERE id = ?1",
            params![id, at],
        )?;
        Ok(known == 1)
    }
}

impl Store {
    /// When `id` was forgotten (`/collegium forget`, §8.4), if it was.
    pub fn forgotten_at(&self, id: &str) -> Result<Option<Millis>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT forgotten_at FROM posts WHERE id = ?1",
                params![id],
                |row| row.get::<_, Option<Millis>>(0),
            )
            .optional()?
            .flatten())
    }
}
