//! Observed channels and posts (§8.2).

use rusqlite::{OptionalExtension, params};

use super::kinds::{AuthorKind, ChannelKind, ObservedVia, PostRole};
use super::{Millis, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedChannel {
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub kind: ChannelKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostFile {
    pub file_id: String,
    pub name: String,
    pub mime_type: String,
    pub size: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedPost {
    pub id: String,
    pub channel_id: String,
    pub author_id: String,
    pub author_name: String,
    pub author_kind: AuthorKind,
    pub created_at: Millis,
    pub message: String,
    pub props: Option<String>,
    pub role: PostRole,
    pub turn_id: Option<String>,
    pub pinned: bool,
    pub observed_at: Millis,
    pub observed_via: ObservedVia,
    pub files: Vec<PostFile>,
}

impl Store {
    /// Records a channel, or refreshes its name and display name.
    pub fn record_channel(&self, channel: &ObservedChannel) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO channels (id, name, display_name, kind) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, display_name = excluded.display_name",
            params![channel.id, channel.name, channel.display_name, channel.kind],
        )?;
        Ok(())
    }

    /// Records a post the first time it is observed; a post seen again (a
    /// backfill overlapping the socket) is left as first recorded. Returns
    /// whether it was new.
    ///
    /// A post older than the channel's last clear is never recorded (§8.5):
    /// a backfill, a pin read afresh or a late event cannot bring back what
    /// the clear cut, even where Mattermost still shows it.
    pub fn record_post(&mut self, post: &ObservedPost) -> Result<bool, StoreError> {
        if self
            .cleared_before(&post.channel_id)?
            .is_some_and(|cleared| post.created_at < cleared)
        {
            return Ok(false);
        }
        let tx = self.conn.savepoint()?;
        let inserted = tx.execute(
            "INSERT INTO posts (id, channel_id, author_id, author_name, author_kind, created_at,
                                message, props, role, turn_id, pinned, observed_at, observed_via)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT (id) DO NOTHING",
            params![
                post.id,
                post.channel_id,
                post.author_id,
                post.author_name,
                post.author_kind,
                post.created_at,
                post.message,
                post.props,
                post.role,
                post.turn_id,
                post.pinned,
                post.observed_at,
                post.observed_via,
            ],
        )? == 1;
        if inserted {
            for file in &post.files {
                tx.execute(
                    "INSERT INTO post_files (post_id, file_id, name, mime_type, size)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![post.id, file.file_id, file.name, file.mime_type, file.size],
                )?;
            }
        }
        tx.commit()?;
        Ok(inserted)
    }

    pub fn post(&self, id: &str) -> Result<Option<ObservedPost>, StoreError> {
        let post = self
            .conn
            .query_row(
                &format!("SELECT {POST_COLUMNS} FROM posts WHERE id = ?1"),
                params![id],
                read_post,
            )
            .optional()?;
        let Some(mut post) = post else {
            return Ok(None);
        };
        post.files = self.files_of(id)?;
        Ok(Some(post))
    }

    /// What a turn wrote with one of `roles`, oldest first: the restart
    /// sweep reads an abandoned turn's posts for the hand-offs it deferred
    /// (§7.3).
    pub fn posts_of_turn(
        &self,
        turn_id: &str,
        roles: &[&str],
    ) -> Result<Vec<ObservedPost>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {POST_COLUMNS} FROM posts WHERE turn_id = ?1 AND deleted_at IS NULL
             ORDER BY created_at, id"
        ))?;
        let posts: Vec<ObservedPost> = statement
            .query_map(params![turn_id], read_post)?
            .collect::<Result<_, _>>()?;
        Ok(posts
            .into_iter()
            .filter(|p| roles.contains(&p.role.as_str()))
            .collect())
    }

    fn files_of(&self, post_id: &str) -> Result<Vec<PostFile>, StoreError> {
        let mut files = self.conn.prepare_cached(
            "SELECT file_id, name, mime_type, size FROM post_files WHERE post_id = ?1 ORDER BY rowid",
        )?;
        let rows = files
            .query_map(params![post_id], |row| {
                Ok(PostFile {
                    file_id: row.get(0)?,
                    name: row.get(1)?,
                    mime_type: row.get(2)?,
                    size: row.get(3)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// A post a catch-up recorded that a socket then delivered: it is live
    /// (§8.2). Returns whether it was recorded as backfill until now.
    pub fn mark_live(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.conn.execute(
            "UPDATE posts SET observed_via = 'live' WHERE id = ?1 AND observed_via = 'backfill'",
            params![id],
        )? == 1)
    }

    /// A channel as recorded.
    pub fn channel(&self, id: &str) -> Result<Option<ObservedChannel>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, name, display_name, kind FROM channels WHERE id = ?1",
                params![id],
                |row| {
                    Ok(ObservedChannel {
                        id: row.get(0)?,
                        name: row.get(1)?,
                        display_name: row.get(2)?,
                        kind: row.get(3)?,
                    })
                },
            )
            .optional()?)
    }

    /// Follows an edit reported over the socket (§8.2): a pinned post's text
    /// is recorded as it stands; any other records only that it is not
    /// pinned. Returns whether the post is known.
    pub fn follow_edit(
        &self,
        id: &str,
        pinned: bool,
        message: &str,
        edited_at: Millis,
    ) -> Result<bool, StoreError> {
        let changed = if pinned {
            self.conn.execute(
                "UPDATE posts SET pinned = 1, message = ?2,
                        edited_at = CASE WHEN message = ?2 THEN edited_at ELSE ?3 END
                 WHERE id = ?1",
                params![id, message, edited_at],
            )?
        } else {
            self.conn
                .execute("UPDATE posts SET pinned = 0 WHERE id = ?1", params![id])?
        };
        Ok(changed == 1)
    }

    /// A deleted post is no longer pinned (§8.2); its text stays, since a
    /// client deletion does not redact context.
    pub fn mark_deleted(&self, id: &str, at: Millis) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE posts SET pinned = 0, deleted_at = ?2 WHERE id = ?1",
            params![id, at],
        )?;
        Ok(())
    }

    /// Sets which of the channel's posts are pinned, as a fresh read of the
    /// channel's pins reports them (boot and resync, §8.2).
    pub fn set_pins(&mut self, channel_id: &str, pinned: &[String]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "UPDATE posts SET pinned = 0 WHERE channel_id = ?1 AND pinned = 1",
            params![channel_id],
        )?;
        for id in pinned {
            tx.execute(
                "UPDATE posts SET pinned = 1 WHERE id = ?1 AND channel_id = ?2",
                params![id, channel_id],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The channel's pinned posts, oldest first, a forgotten one not among
    /// them (§3.8, §8.4).
    pub fn pinned_posts(&self, channel_id: &str) -> Result<Vec<ObservedPost>, StoreError> {
        self.posts_where(
            "channel_id = ?1 AND pinned = 1 AND forgotten_at IS NULL ORDER BY created_at, id",
            params![channel_id],
        )
    }

    /// Up to `limit` posts of a channel older than `before` (time, id), or
    /// the newest when `before` is none, newest first, never older than
    /// `floor` (an episode boundary or a clear), never a forgotten one
    /// (§8.4). The window walks these
    /// pages backwards (§3.8); the index on (channel, time, id) makes each
    /// page cost its size, not the channel's history.
    pub fn posts_before(
        &self,
        channel_id: &str,
        before: Option<(Millis, &str)>,
        floor: Millis,
        limit: u32,
    ) -> Result<Vec<ObservedPost>, StoreError> {
        let (at, id) = before.unwrap_or((Millis::MAX, ""));
        self.posts_where(
            "channel_id = ?1 AND created_at >= ?2 AND forgotten_at IS NULL
               AND (created_at < ?3 OR (created_at = ?3 AND id < ?4))
             ORDER BY created_at DESC, id DESC LIMIT ?5",
            params![channel_id, floor, at, id, limit],
        )
    }

    fn posts_where(
        &self,
        clause: &str,
        values: impl rusqlite::Params,
    ) -> Result<Vec<ObservedPost>, StoreError> {
        let mut statement = self
            .conn
            .prepare_cached(&format!("SELECT {POST_COLUMNS} FROM posts WHERE {clause}"))?;
        let mut posts: Vec<ObservedPost> = statement
            .query_map(values, read_post)?
            .collect::<Result<_, _>>()?;
        drop(statement);
        self.attach_files(&mut posts)?;
        Ok(posts)
    }

    /// Fills in the files of a page of posts with one query per page, not
    /// one per post: the window reads pages of this (§3.8).
    pub(super) fn attach_files(&self, posts: &mut [ObservedPost]) -> Result<(), StoreError> {
        if posts.is_empty() {
            return Ok(());
        }
        let placeholders = vec!["?"; posts.len()].join(", ");
        let mut statement = self.conn.prepare_cached(&format!(
            "SELECT post_id, file_id, name, mime_type, size FROM post_files
             WHERE post_id IN ({placeholders}) ORDER BY rowid"
        ))?;
        let ids: Vec<&str> = posts.iter().map(|p| p.id.as_str()).collect();
        let mut files: std::collections::HashMap<String, Vec<PostFile>> = Default::default();
        let rows = statement.query_map(rusqlite::params_from_iter(ids), |row| {
            Ok((
                row.get::<_, String>(0)?,
                PostFile {
                    file_id: row.get(1)?,
                    name: row.get(2)?,
                    mime_type: row.get(3)?,
                    size: row.get(4)?,
                },
            ))
        })?;
        for row in rows {
            let (post, file) = row?;
            files.entry(post).or_default().push(file);
        }
        for post in posts {
            post.files = files.remove(&post.id).unwrap_or_default();
        }
        Ok(())
    }

    /// The newest recorded post of a channel, by time then id: where backfill
    /// resumes (§8.2).
    pub fn last_post_in_channel(
        &self,
        channel_id: &str,
    ) -> Result<Option<(String, Millis)>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, created_at FROM posts WHERE channel_id = ?1
                 ORDER BY created_at DESC, id DESC LIMIT 1",
                params![channel_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?)
    }
}

const POST_COLUMNS: &str = "id, channel_id, author_id, author_name, author_kind, created_at, \
     message, props, role, turn_id, pinned, observed_at, observed_via";

/// The same columns, of a query that names the posts table `p`.
pub(super) const POST_COLUMNS_P: &str = "p.id, p.channel_id, p.author_id, p.author_name, \
     p.author_kind, p.created_at, p.message, p.props, p.role, p.turn_id, p.pinned, \
     p.observed_at, p.observed_via";

pub(super) fn read_post(row: &rusqlite::Row<'_>) -> rusqlite::Result<ObservedPost> {
    Ok(ObservedPost {
        id: row.get(0)?,
        channel_id: row.get(1)?,
        author_id: row.get(2)?,
        author_name: row.get(3)?,
        author_kind: row.get(4)?,
        created_at: row.get(5)?,
        message: row.get(6)?,
        props: row.get(7)?,
        role: row.get(8)?,
        turn_id: row.get(9)?,
        pinned: row.get(10)?,
        observed_at: row.get(11)?,
        observed_via: row.get(12)?,
        files: Vec::new(),
    })
}
