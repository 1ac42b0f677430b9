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
/// posts of work units (§3.15). The index holds only these (0011_search).
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
             LEFT JOIN (SELECT channel_id, MAX(at) AS reset_at FROM episode_boundaries
                        WHERE agent = ?1 GROUP BY channel_id) e ON e.channel_id = c.id
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
        let (clause, values) = reach_clause(query, 1);
        let values = std::iter::once(quoted(query.phrase).into())
            .chain(values)
            .collect();
        let sql = format!(
            "SELECT {POST_COLUMNS_P} FROM posts_fts f JOIN posts p ON p.rowid = f.rowid
             WHERE posts_fts MATCH ?1 AND {clause}
             ORDER BY p.created_at DESC, p.id DESC LIMIT {}",
            query.limit
        );
        self.query_posts(&sql, values)
    }

    /// How many posts the index finds for the phrase, counting no further
    /// than `cap`: a phrase this common is served faster by a scan, which
    /// stops at the newest hits, than by collecting and sorting every match.
    pub fn index_matches(&self, phrase: &str, cap: u32) -> Result<u32, StoreError> {
        Ok(self.conn.query_row(
            "SELECT count(*) FROM (SELECT 1 FROM posts_fts WHERE posts_fts MATCH ?1 LIMIT ?2)",
            params![quoted(phrase), cap],
            |row| row.get(0),
        )?)
    }

    /// Posts in reach, newest first, handed to `keep` one at a time until it
    /// has taken `limit`: the scan a phrase under three characters needs
    /// (the trigram index cannot serve it), and the faster path for a common
    /// one. Each channel is walked backwards on its (channel, time) index and
    /// the walks are merged, so the rows read are those newer than the last
    /// hit, not the reach's whole history. `like`, where given, is a LIKE
    /// pattern that narrows the rows read.
    pub fn scan_posts(
        &self,
        query: &PostQuery<'_>,
        like: Option<&str>,
        mut keep: impl FnMut(&ObservedPost) -> bool,
    ) -> Result<Vec<ObservedPost>, StoreError> {
        let (mut clause, mut values) = filter_clause(query, 2);
        if let Some(pattern) = like {
            values.push(pattern.to_string().into());
            clause.push_str(&format!(
                " AND p.message LIKE ?{} ESCAPE '\\'",
                values.len() + 2
            ));
        }
        let sql = format!(
            "SELECT {POST_COLUMNS_P} FROM posts p
             WHERE p.channel_id = ?1 AND p.created_at >= ?2 AND {clause}
             ORDER BY p.created_at DESC, p.id DESC"
        );
        let mut statements = Vec::with_capacity(query.reach.len());
        for _ in query.reach {
            statements.push(self.conn.prepare(&sql)?);
        }
        let mut walks = Vec::with_capacity(query.reach.len());
        for (statement, (channel, floor)) in statements.iter_mut().zip(query.reach) {
            let bound: Vec<rusqlite::types::Value> = [channel.clone().into(), (*floor).into()]
                .into_iter()
                .chain(values.iter().cloned())
                .collect();
            walks.push(statement.query(rusqlite::params_from_iter(bound))?);
        }
        let mut heads: Vec<Option<ObservedPost>> = Vec::with_capacity(walks.len());
        for walk in &mut walks {
            heads.push(walk.next()?.map(read_post).transpose()?);
        }
        let mut kept = Vec::new();
        while kept.len() < query.limit as usize {
            let newest = heads
                .iter()
                .enumerate()
                .filter_map(|(i, h)| h.as_ref().map(|p| (i, p.created_at, p.id.as_str())))
                .max_by(|a, b| (a.1, a.2).cmp(&(b.1, b.2)))
                .map(|(i, ..)| i);
            let Some(index) = newest else { break };
            let next = walks[index].next()?.map(read_post).transpose()?;
            if let Some(post) = std::mem::replace(&mut heads[index], next)
                && keep(&post)
            {
                kept.push(post);
            }
        }
        drop(walks);
        drop(statements);
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

/// The phrase as one FTS5 string: with the trigram tokenizer, a quoted
/// string matches wherever the text contains it.
fn quoted(phrase: &str) -> String {
    format!("\"{}\"", phrase.replace('"', "\"\""))
}

/// The channels searched, each back to its floor, then the filters every
/// search shares; values numbered after the `bound` placeholders the
/// statement binds before them.
fn reach_clause(query: &PostQuery<'_>, bound: usize) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value;
    let mut values: Vec<Value> = Vec::new();
    let channels: Vec<String> = query
        .reach
        .iter()
        .map(|(channel, floor)| {
            values.push(Value::Text(channel.clone()));
            values.push(Value::Integer(*floor));
            format!(
                "(p.channel_id = ?{} AND p.created_at >= ?{})",
                values.len() + bound - 1,
                values.len() + bound
            )
        })
        .collect();
    let reach = if channels.is_empty() {
        "0".to_string()
    } else {
        format!("({})", channels.join(" OR "))
    };
    let (filters, more) = filter_clause(query, bound + values.len());
    values.extend(more);
    (format!("{reach} AND {filters}"), values)
}

/// Roles, forgetting, author, dates and the posts excluded.
fn filter_clause(query: &PostQuery<'_>, bound: usize) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value;
    let mut values: Vec<Value> = Vec::new();
    let next = |value: Value, values: &mut Vec<Value>| {
        values.push(value);
        format!("?{}", values.len() + bound)
    };
    let mut clause = format!("p.forgotten_at IS NULL AND p.role IN {SEARCHABLE_ROLES}");
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
