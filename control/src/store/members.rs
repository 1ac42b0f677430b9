//! Channel membership as last observed (§3.11, §8.2): kept from the socket's
//! `user_added` and `user_removed` and reconciled at boot and on a resync, so
//! the turn path never asks Mattermost who is present.

use rusqlite::{OptionalExtension, params};

use super::kinds::AuthorKind;
use super::{Millis, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub user_id: String,
    pub username: String,
    pub kind: AuthorKind,
}

impl Store {
    /// Replaces a channel's membership with what Mattermost reports now.
    pub fn reconcile_members(
        &mut self,
        channel_id: &str,
        members: &[Member],
        now: Millis,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "DELETE FROM channel_members WHERE channel_id = ?1",
            params![channel_id],
        )?;
        for member in members {
            tx.execute(
                "INSERT INTO channel_members (channel_id, user_id, username, kind, observed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    channel_id,
                    member.user_id,
                    member.username,
                    member.kind,
                    now
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    pub fn add_member(
        &self,
        channel_id: &str,
        member: &Member,
        now: Millis,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO channel_members (channel_id, user_id, username, kind, observed_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (channel_id, user_id) DO UPDATE
             SET username = excluded.username, kind = excluded.kind, observed_at = excluded.observed_at",
            params![channel_id, member.user_id, member.username, member.kind, now],
        )?;
        Ok(())
    }

    pub fn remove_member(&self, channel_id: &str, user_id: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "DELETE FROM channel_members WHERE channel_id = ?1 AND user_id = ?2",
            params![channel_id, user_id],
        )?;
        Ok(())
    }

    /// The agents present in the channel with handle `name`, by username,
    /// as membership was last observed (§3.10).
    pub fn agents_in_channel_named(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT m.username FROM channels c
             JOIN channel_members m ON m.channel_id = c.id
             WHERE c.name = ?1 AND m.kind = 'agent'
             ORDER BY m.username",
        )?;
        let rows = statement
            .query_map(params![name], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// One member of a channel as last observed, if present: the one row
    /// both the decision route and `/collegium approvals` judge presence by
    /// (§3.7, §8.4).
    pub fn member(&self, channel_id: &str, user_id: &str) -> Result<Option<Member>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT user_id, username, kind FROM channel_members
                 WHERE channel_id = ?1 AND user_id = ?2",
                params![channel_id, user_id],
                |row| {
                    Ok(Member {
                        user_id: row.get(0)?,
                        username: row.get(1)?,
                        kind: row.get(2)?,
                    })
                },
            )
            .optional()?)
    }

    /// Every group message with the agents in it, as membership was last
    /// observed: (its display name, agents by username), for §3.10's
    /// one-agent rule, which a group message answers to as a DM does.
    pub fn agents_in_group_messages(&self) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT c.id, c.display_name, m.username FROM channels c
             JOIN channel_members m ON m.channel_id = c.id
             WHERE c.kind = 'group' AND m.kind = 'agent'
             ORDER BY c.id, m.username",
        )?;
        let rows: Vec<(String, String, String)> = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let mut groups: Vec<(String, String, Vec<String>)> = Vec::new();
        for (id, display_name, agent) in rows {
            match groups.last_mut() {
                Some((last, _, agents)) if *last == id => agents.push(agent),
                _ => groups.push((id, display_name, vec![agent])),
            }
        }
        Ok(groups
            .into_iter()
            .map(|(_, display_name, agents)| (display_name, agents))
            .collect())
    }

    /// The channel's members as last observed, by username.
    pub fn members(&self, channel_id: &str) -> Result<Vec<Member>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT user_id, username, kind FROM channel_members WHERE channel_id = ?1
             ORDER BY username",
        )?;
        let rows = statement
            .query_map(params![channel_id], |row| {
                Ok(Member {
                    user_id: row.get(0)?,
                    username: row.get(1)?,
                    kind: row.get(2)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: &str, name: &str, kind: AuthorKind) -> Member {
        Member {
            user_id: id.into(),
            username: name.into(),
            kind,
        }
    }

    #[test]
    fn s8_2_membership_follows_events_and_a_reconcile_replaces_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("s.db")).expect("open");
        store
            .reconcile_members(
                "c1",
                &[
                    member("u1", "ana", AuthorKind::Person),
                    member("b1", "mira", AuthorKind::Agent),
                ],
                1,
            )
            .expect("reconcile");
        store
            .add_member("c1", &member("b2", "theo", AuthorKind::Agent), 2)
            .expect("add");
        store.remove_member("c1", "u1").expect("remove");
        let names: Vec<String> = store
            .members("c1")
            .expect("members")
            .into_iter()
            .map(|m| m.username)
            .collect();
        assert_eq!(names, ["mira", "theo"]);
        store
            .reconcile_members("c1", &[member("u9", "bo", AuthorKind::Person)], 3)
            .expect("reconcile");
        assert_eq!(store.members("c1").expect("members").len(), 1);
    }
}
