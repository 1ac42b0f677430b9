//! The post store as `conversations::search` and `conversations::read` read
//! it (§3.8): posts alone (never a status post, notice or approval prompt),
//! never a forgotten one, and only within the channels and times the caller
//! names. Who may see what is decided by the caller (control/src/conversations);
//! this module only applies it.

use rusqlite::params;

use super::kinds::ChannelKind;
use super::posts::{POST_COLUMNS_P, read_post};
use super::{Millis, ObservedChannel, ObservedPost, Store, StoreError};

/// The roles search and read return: posts, an agent's replies and the
/// posts of work units (§3.15). The index holds only these (0010_search).
pub const SEARCHABLE_ROLES: &str = "('post', 'reply', 'unit_post')";

/// A channel the agent is a member of now, with who else is, and how far
/// back the agent's context reaches in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReachChannel {
    pub channel: ObservedChannel,
    /// Members by user id, as last observed.
    pub members: Vec<String>,
    /// The later of the agent's episode boundary and the channel's clear.
    pub floor: Millis,
}

/// One search, with the reach already decided.
#[derive(Debug, Clone)]
pub struct PostQuery<'a> {
    /// (channel, floor): the channels searched, each back to its floor.
    pub reach: &'a [(String, Millis)],
    /// The phrase, for the index: three characters or more.
    pub phrase: &'a str,
    /// Author usernames that qualify; empty for any author.
    pub authors: &'a [String],
    pub after: Option<Millis>,
    pub before: Option<Millis>,
    /// Posts never returned: those the turn answers.
    pub exclude: &'a [String],
    pub limit: u32,
}

impl Store {
    /// The channels `user_id` is a member of now, each with its members and
    /// `agent`'s context floor there.
    pub fn reach_of(&self, agent: &str, user_id: &str) -> Result<Vec<ReachChannel>, StoreError> {
        let mut statement = self.conn.prepare_cached(
            "SELECT c.id, c.name, c.display_name, c.kind,
                    MAX(COALESCE(c.last_cleared_at, 0), COALESCE(e.reset_at, 0))
             FROM channel_members m
             JOIN channels c ON c.id = m.channel_id
             LEFT JOIN episode_boundaries e ON e.channel_id = c.id AND e.agent = ?1
             WHERE m.user_id = ?2
             ORDER BY c.id",
        )?;
        let channels: Vec<(ObservedChannel, Millis)> = statement
            .query_map(params![agent, user_id], |row| {
                Ok((
                    ObservedChannel {
                        id: row.get(0)?,
                        name: row.get(1)?,
                        display_name: row.get(2)?,
                        kind: row.get::<_, ChannelKind>(3)?,
                    },
                    row.get(4)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        drop(statement);
        let mut members = self.conn.prepare_cached(
            "SELECT user_id FROM channel_members WHERE channel_id = ?1 ORDER BY user_id",
        )?;
        let mut reach = Vec::with_capacity(channels.len());
        for (channel, floor) in channels {
            let ids: Vec<String> = members
                .query_map(params![channel.id], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            reach.push(ReachChannel {
                channel,
                members: ids,
                floor,
            });
        }
        Ok(reach)
    }

    /// Posts containing the phrase, by the trigram index, newest first; up
    /// to `limit`. The caller checks each against the phrase itself.
    pub fn search_indexed(&self, query: &PostQuery<'_>) -> Result<Vec<ObservedPost>, StoreError> {
        let quoted = format!("\"{}\"", query.phrase.replace('"', "\"\""));
        let (clause, values) = reach_clause(query, 1);
        let values = std::iter::once(quoted.into()).chain(values).collect();
        let sql = format!(
            "SELECT {POST_COLUMNS_P} FROM posts_fts f JOIN posts p ON p.rowid = f.rowid
             WHERE posts_fts MATCH ?1 AND {clause}
             ORDER BY p.created_at DESC, p.id DESC LIMIT {}",
            query.limit
        );
        self.query_posts(&sql, values)
    }

    /// Posts in reach, newest first, handed to `keep` one at a time until it
    /// has taken `limit`: the scan a phrase under three characters needs,
    /// since the trigram index cannot serve it. `like`, where given, is a
    /// LIKE pattern that narrows the rows read.
    pub fn scan_posts(
        &self,
        query: &PostQuery<'_>,
        like: Option<&str>,
        mut keep: impl FnMut(&ObservedPost) -> bool,
    ) -> Result<Vec<ObservedPost>, StoreError> {
        let (clause, mut values) = reach_clause(query, 0);
        let like_clause = match like {
            Some(pattern) => {
                values.push(pattern.to_string().into());
                format!(" AND p.message LIKE ?{} ESCAPE '\\'", values.len())
            }
            None => String::new(),
        };
        let sql = format!(
            "SELECT {POST_COLUMNS_P} FROM posts p WHERE {clause}{like_clause}
             ORDER BY p.created_at DESC, p.id DESC"
        );
        let mut statement = self.conn.prepare(&sql)?;
        let mut rows = statement.query(rusqlite::params_from_iter(values))?;
        let mut kept = Vec::new();
        while let Some(row) = rows.next()? {
            let post = read_post(row)?;
            if keep(&post) {
                kept.push(post);
                if kept.len() >= query.limit as usize {
                    break;
                }
            }
        }
        drop(rows);
        drop(statement);
        self.attach_files(&mut kept)?;
        Ok(kept)
    }

    /// A post search may return, by id: one of the searchable roles and not
    /// forgotten. Whether the caller may reach its channel is the caller's.
    pub fn searchable_post(&self, id: &str) -> Result<Option<ObservedPost>, StoreError> {
        let sql = format!(
            "SELECT {POST_COLUMNS_P} FROM posts p
             WHERE p.id = ?1 AND p.forgotten_at IS NULL AND p.role IN {SEARCHABLE_ROLES}"
        );
        Ok(self.query_posts(&sql, vec![id.to_string().into()])?.pop())
    }

    fn query_posts(
        &self,
        sql: &str,
        values: Vec<rusqlite::types::Value>,
    ) -> Result<Vec<ObservedPost>, StoreError> {
        let mut statement = self.conn.prepare(sql)?;
        let mut posts: Vec<ObservedPost> = statement
            .query_map(rusqlite::params_from_iter(values), read_post)?
            .collect::<Result<_, _>>()?;
        drop(statement);
        self.attach_files(&mut posts)?;
        Ok(posts)
    }
}

/// The WHERE clause every search shares, with its values numbered after
/// the `bound` placeholders the statement binds before them.
fn reach_clause(query: &PostQuery<'_>, bound: usize) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value;
    let mut values: Vec<Value> = Vec::new();
    let next = |value: Value, values: &mut Vec<Value>| {
        values.push(value);
        format!("?{}", values.len() + bound)
    };
    let mut clause = format!("p.forgotten_at IS NULL AND p.role IN {SEARCHABLE_ROLES}");
    let channels: Vec<String> = query
        .reach
        .iter()
        .map(|(channel, floor)| {
            let c = next(Value::Text(channel.clone()), &mut values);
            let f = next(Value::Integer(*floor), &mut values);
            format!("(p.channel_id = {c} AND p.created_at >= {f})")
        })
        .collect();
    if channels.is_empty() {
        clause.push_str(" AND 0");
    } else {
        clause.push_str(&format!(" AND ({})", channels.join(" OR ")));
    }
    if !query.authors.is_empty() {
        let names: Vec<String> = query
            .authors
            .iter()
            .map(|a| next(Value::Text(a.clone()), &mut values))
            .collect();
        clause.push_str(&format!(
            " AND p.author_name COLLATE NOCASE IN ({})",
            names.join(", ")
        ));
    }
    if let Some(after) = query.after {
        let a = next(Value::Integer(after), &mut values);
        clause.push_str(&format!(" AND p.created_at >= {a}"));
    }
    if let Some(before) = query.before {
        let b = next(Value::Integer(before), &mut values);
        clause.push_str(&format!(" AND p.created_at < {b}"));
    }
    if !query.exclude.is_empty() {
        let ids: Vec<String> = query
            .exclude
            .iter()
            .map(|id| next(Value::Text(id.clone()), &mut values))
            .collect();
        clause.push_str(&format!(" AND p.id NOT IN ({})", ids.join(", ")));
    }
    (clause, values)
}
