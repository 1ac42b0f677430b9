//! Trigger records (§4.2): what a source recorded to be announced, the
//! mailbox cursor that moves with the rows it read (§3.13), and each declared
//! schedule's place. Nothing here runs anything: a row is announced by the
//! system bot when its channel is idle, and a turn follows that post.

use rusqlite::{OptionalExtension, Row, Transaction, params};

use super::{Millis, Store, StoreError};

/// Where a trigger came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerSource {
    Mail,
    Schedule,
    Webhook,
}

impl TriggerSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mail => "mail",
            Self::Schedule => "schedule",
            Self::Webhook => "webhook",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "mail" => Some(Self::Mail),
            "schedule" => Some(Self::Schedule),
            "webhook" => Some(Self::Webhook),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerStatus {
    /// Recorded, waiting for its channel to be idle.
    Pending,
    /// Posted, and not yet marked handled: outstanding.
    Announced,
    Resolved,
}

impl TriggerStatus {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(Self::Pending),
            "announced" => Some(Self::Announced),
            "resolved" => Some(Self::Resolved),
            _ => None,
        }
    }
}

/// A trigger about to be recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTrigger {
    pub source: TriggerSource,
    pub agent: String,
    pub channel_id: String,
    pub sender: String,
    pub subject: String,
    /// The source's own reference: a Message-ID, a schedule's name, a
    /// webhook sender's id.
    pub reference: String,
    pub body: Option<String>,
    pub detail: serde_json::Value,
}

/// A recorded trigger.
#[derive(Debug, Clone, PartialEq)]
pub struct Trigger {
    pub id: i64,
    pub source: TriggerSource,
    pub agent: String,
    pub channel_id: String,
    pub sender: String,
    pub subject: String,
    pub reference: String,
    pub body: Option<String>,
    pub detail: serde_json::Value,
    pub status: TriggerStatus,
    pub recorded_at: Millis,
    pub announcement_post_id: Option<String>,
    pub announcements: u32,
}

/// What [`Store::announce_again`] did with a trigger owed another post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnounceAgain {
    /// Back to pending: it will be announced again.
    Sent,
    /// Still outstanding, and it has had the one more post §4.2 allows.
    HadItsOneMore,
    /// Resolved or superseded meanwhile: nothing is owed.
    NotOutstanding,
}

/// How the framework names a trigger: the id its announcement brackets.
pub fn trigger_label(id: i64) -> String {
    format!("T-{id}")
}

/// A trigger's id from its label (`T-12`), or from the bare number.
pub fn parse_trigger_label(text: &str) -> Option<i64> {
    let text = text.trim().trim_start_matches('[').trim_end_matches(']');
    let number = text
        .strip_prefix("T-")
        .or_else(|| text.strip_prefix("t-"))
        .unwrap_or(text);
    number.parse().ok().filter(|id| *id > 0)
}

/// Where the reading of a mailbox stands (§3.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MailCursor {
    pub uidvalidity: u32,
    pub last_uid: u32,
    pub last_internal_date: i64,
}

/// A declared schedule's place (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleMark {
    pub declared_at: Millis,
    pub last_occurrence: Option<Millis>,
}

const COLUMNS: &str = "id, source, agent, channel_id, sender, subject, reference, body, detail,
     status, recorded_at, announcement_post_id, announcements";

fn read_trigger(row: &Row<'_>) -> rusqlite::Result<Trigger> {
    let source: String = row.get(1)?;
    let detail: String = row.get(8)?;
    let status: String = row.get(9)?;
    let invalid = |column: usize, what: &str| {
        rusqlite::Error::FromSqlConversionFailure(
            column,
            rusqlite::types::Type::Text,
            format!("not a trigger {what}").into(),
        )
    };
    Ok(Trigger {
        id: row.get(0)?,
        source: TriggerSource::parse(&source).ok_or_else(|| invalid(1, "source"))?,
        agent: row.get(2)?,
        channel_id: row.get(3)?,
        sender: row.get(4)?,
        subject: row.get(5)?,
        reference: row.get(6)?,
        body: row.get(7)?,
        // The column is checked json_valid on insert.
        detail: serde_json::from_str(&detail).map_err(|_| invalid(8, "detail"))?,
        status: TriggerStatus::parse(&status).ok_or_else(|| invalid(9, "status"))?,
        recorded_at: row.get(10)?,
        announcement_post_id: row.get(11)?,
        announcements: row.get(12)?,
    })
}

fn insert(tx: &Transaction<'_>, trigger: &NewTrigger, now: Millis) -> Result<i64, StoreError> {
    tx.execute(
        "INSERT INTO triggers (source, agent, channel_id, sender, subject, reference, body,
             detail, status, recorded_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9)",
        params![
            trigger.source.as_str(),
            trigger.agent,
            trigger.channel_id,
            trigger.sender,
            trigger.subject,
            trigger.reference,
            trigger.body,
            trigger.detail.to_string(),
            now
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// What recording a webhook's item came to (§4.2, §6.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookRecorded {
    /// Recorded, pending, with this id.
    Recorded(i64),
    /// The same item as this outstanding trigger: a sender's retry.
    Again(i64),
    /// The agent already has this many webhook triggers outstanding.
    Full(u32),
}

impl Store {
    /// Records a webhook's item, pending, unless it is the same item as one
    /// still outstanding for the agent (a sender retrying after a timeout or
    /// a cut connection: one item, one turn) or the agent already has `most`
    /// webhook triggers outstanding.
    pub fn record_webhook(
        &mut self,
        trigger: &NewTrigger,
        most: u32,
        now: Millis,
    ) -> Result<WebhookRecorded, StoreError> {
        let tx = self.conn.transaction()?;
        let same: Option<i64> = tx
            .query_row(
                "SELECT id FROM triggers
                 WHERE source = 'webhook' AND status IN ('pending', 'announced')
                   AND agent = ?1 AND channel_id = ?2 AND sender = ?3 AND subject = ?4
                   AND reference = ?5 AND body IS ?6
                 ORDER BY id LIMIT 1",
                params![
                    trigger.agent,
                    trigger.channel_id,
                    trigger.sender,
                    trigger.subject,
                    trigger.reference,
                    trigger.body
                ],
                |row| row.get(0),
            )
            .optional()?;
        if let Some(id) = same {
            return Ok(WebhookRecorded::Again(id));
        }
        let outstanding: u32 = tx.query_row(
            "SELECT COUNT(*) FROM triggers
             WHERE source = 'webhook' AND agent = ?1 AND status IN ('pending', 'announced')",
            params![trigger.agent],
            |row| row.get(0),
        )?;
        if outstanding >= most {
            return Ok(WebhookRecorded::Full(outstanding));
        }
        let id = insert(&tx, trigger, now)?;
        tx.commit()?;
        Ok(WebhookRecorded::Recorded(id))
    }

    /// Records one trigger, pending; returns its id.
    pub fn record_trigger(&mut self, trigger: &NewTrigger, now: Millis) -> Result<i64, StoreError> {
        let tx = self.conn.transaction()?;
        let id = insert(&tx, trigger, now)?;
        tx.commit()?;
        Ok(id)
    }

    /// Records what one poll of a mailbox read and moves its cursor, in one
    /// transaction: a crash before the commit records none of it and reads
    /// it again, so each arrival is recorded once (§3.13). An arrival whose
    /// Message-ID is already recorded for the agent is the same message read
    /// again — a renumbered mailbox, a copy delivered twice — and is dropped
    /// (`docs/spec-findings.md`, §3.13). Returns the ids recorded.
    pub fn record_mail(
        &mut self,
        agent: &str,
        cursor: MailCursor,
        arrivals: &[NewTrigger],
        now: Millis,
    ) -> Result<Vec<i64>, StoreError> {
        let tx = self.conn.transaction()?;
        let mut ids = Vec::new();
        for arrival in arrivals {
            if !arrival.reference.is_empty() {
                let known: Option<i64> = tx
                    .query_row(
                        "SELECT id FROM triggers
                         WHERE agent = ?1 AND source = 'mail' AND reference = ?2 LIMIT 1",
                        params![agent, arrival.reference],
                        |row| row.get(0),
                    )
                    .optional()?;
                if known.is_some() {
                    continue;
                }
            }
            ids.push(insert(&tx, arrival, now)?);
        }
        tx.execute(
            "INSERT INTO mail_cursors (agent, uidvalidity, last_uid, last_internal_date, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (agent) DO UPDATE SET uidvalidity = ?2, last_uid = ?3,
                 last_internal_date = ?4, updated_at = ?5",
            params![
                agent,
                cursor.uidvalidity,
                cursor.last_uid,
                cursor.last_internal_date,
                now
            ],
        )?;
        tx.commit()?;
        Ok(ids)
    }

    /// Where the reading of `agent`'s mailbox stands; none before its first
    /// connection.
    pub fn mail_cursor(&self, agent: &str) -> Result<Option<MailCursor>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT uidvalidity, last_uid, last_internal_date FROM mail_cursors
                 WHERE agent = ?1",
                params![agent],
                |row| {
                    Ok(MailCursor {
                        uidvalidity: row.get(0)?,
                        last_uid: row.get(1)?,
                        last_internal_date: row.get(2)?,
                    })
                },
            )
            .optional()?)
    }

    /// A declared schedule's place, marking it declared now if it is new.
    pub fn schedule_mark(
        &self,
        agent: &str,
        schedule: &str,
        now: Millis,
    ) -> Result<ScheduleMark, StoreError> {
        self.conn.execute(
            "INSERT INTO schedule_marks (agent, schedule, declared_at) VALUES (?1, ?2, ?3)
             ON CONFLICT DO NOTHING",
            params![agent, schedule, now],
        )?;
        Ok(self.conn.query_row(
            "SELECT declared_at, last_occurrence FROM schedule_marks
             WHERE agent = ?1 AND schedule = ?2",
            params![agent, schedule],
            |row| {
                Ok(ScheduleMark {
                    declared_at: row.get(0)?,
                    last_occurrence: row.get(1)?,
                })
            },
        )?)
    }

    /// Every schedule's place, without marking any: (agent, schedule, mark).
    pub fn schedule_marks(&self) -> Result<Vec<(String, String, ScheduleMark)>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT agent, schedule, declared_at, last_occurrence FROM schedule_marks
             ORDER BY agent, schedule",
        )?;
        let rows = statement
            .query_map([], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    ScheduleMark {
                        declared_at: row.get(2)?,
                        last_occurrence: row.get(3)?,
                    },
                ))
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Records a schedule's firing at `occurrence` and moves its mark, in one
    /// transaction. A firing still waiting for its channel takes the newer
    /// occurrence instead of a second row: a busy channel delays a schedule,
    /// never stacks it (§4.2). Returns the id of the row that will announce
    /// it.
    pub fn record_firing(
        &mut self,
        firing: &NewTrigger,
        schedule: &str,
        occurrence: Millis,
        now: Millis,
    ) -> Result<i64, StoreError> {
        let tx = self.conn.transaction()?;
        let waiting: Option<i64> = tx
            .query_row(
                "SELECT id FROM triggers
                 WHERE agent = ?1 AND source = 'schedule' AND reference = ?2
                   AND status = 'pending'
                 ORDER BY id LIMIT 1",
                params![firing.agent, schedule],
                |row| row.get(0),
            )
            .optional()?;
        let id = match waiting {
            Some(id) => {
                tx.execute(
                    "UPDATE triggers SET detail = ?2, body = ?3, channel_id = ?4 WHERE id = ?1",
                    params![
                        id,
                        firing.detail.to_string(),
                        firing.body,
                        firing.channel_id
                    ],
                )?;
                id
            }
            None => insert(&tx, firing, now)?,
        };
        tx.execute(
            "UPDATE schedule_marks SET last_occurrence = ?3 WHERE agent = ?1 AND schedule = ?2",
            params![firing.agent, schedule, occurrence],
        )?;
        tx.commit()?;
        Ok(id)
    }

    /// The oldest trigger waiting to be announced in `channel_id`.
    pub fn next_pending(&self, channel_id: &str) -> Result<Option<Trigger>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM triggers
                     WHERE channel_id = ?1 AND status = 'pending' ORDER BY id LIMIT 1"
                ),
                params![channel_id],
                read_trigger,
            )
            .optional()?)
    }

    /// Every channel with a trigger waiting to be announced.
    pub fn channels_with_pending(&self) -> Result<Vec<String>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT DISTINCT channel_id FROM triggers WHERE status = 'pending' ORDER BY channel_id",
        )?;
        let rows = statement
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Records that `post_id` announced trigger `id`. Announcing a
    /// schedule's firing marks its earlier firings handled where the agent
    /// never did, so the outstanding list holds at most one firing per
    /// schedule (§4.2).
    pub fn mark_announced(
        &mut self,
        id: i64,
        post_id: &str,
        now: Millis,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "UPDATE triggers SET status = 'announced', announced_at = ?3,
                 announcement_post_id = ?2, announcements = announcements + 1
             WHERE id = ?1",
            params![id, post_id, now],
        )?;
        tx.execute(
            "UPDATE triggers SET status = 'resolved', resolved_at = ?2, resolved_by = 'superseded'
             WHERE source = 'schedule' AND status = 'announced' AND id <> ?1
               AND (agent, reference) = (SELECT agent, reference FROM triggers WHERE id = ?1
                                         AND source = 'schedule')",
            params![id, now],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn trigger(&self, id: i64) -> Result<Option<Trigger>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM triggers WHERE id = ?1"),
                params![id],
                read_trigger,
            )
            .optional()?)
    }

    /// The trigger a post announced.
    pub fn trigger_announced_by(&self, post_id: &str) -> Result<Option<Trigger>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM triggers WHERE announcement_post_id = ?1"),
                params![post_id],
                read_trigger,
            )
            .optional()?)
    }

    /// The trigger whose announcement started `turn_id`, if one did.
    pub fn trigger_of_turn(&self, turn_id: &str) -> Result<Option<Trigger>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM triggers WHERE announcement_post_id IN
                         (SELECT post_id FROM turn_answers WHERE turn_id = ?1 AND how = 'start')
                     ORDER BY id LIMIT 1"
                ),
                params![turn_id],
                read_trigger,
            )
            .optional()?)
    }

    /// The triggers announced to `agent` in `channel_id` and not yet
    /// handled, oldest first.
    pub fn outstanding_triggers(
        &self,
        agent: &str,
        channel_id: &str,
    ) -> Result<Vec<Trigger>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM triggers
             WHERE agent = ?1 AND channel_id = ?2 AND status = 'announced' ORDER BY id"
        ))?;
        let rows = statement
            .query_map(params![agent, channel_id], read_trigger)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Every trigger of `agent`, in the order recorded.
    pub fn triggers_of(&self, agent: &str) -> Result<Vec<Trigger>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM triggers WHERE agent = ?1 ORDER BY id"
        ))?;
        let rows = statement
            .query_map(params![agent], read_trigger)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Marks an announced trigger handled by its agent; false where it was
    /// not outstanding.
    pub fn resolve_trigger(&self, id: i64, now: Millis) -> Result<bool, StoreError> {
        Ok(self.conn.execute(
            "UPDATE triggers SET status = 'resolved', resolved_at = ?2, resolved_by = 'agent'
             WHERE id = ?1 AND status = 'announced'",
            params![id, now],
        )? == 1)
    }

    /// Records as announced each pending trigger whose announcement a
    /// crash left between Mattermost creating the post and this store
    /// recording it (§7.3). The boot's catch-up has read the post back by
    /// then (§8.2): the system bot's notice whose props name the trigger,
    /// posted after any announcement already recorded and not before the
    /// trigger itself (give or take a minute of the two clocks' skew: a
    /// store begun afresh numbers its triggers from 1 again, and an old
    /// announcement read back must not pass for a new trigger's). Without
    /// this the trigger would be announced again as if for the first time,
    /// and could be posted once more than §4.2 allows.
    pub fn recover_unrecorded_announcements(&mut self) -> Result<usize, StoreError> {
        // SQLite takes the bare columns from the row MIN() chose: the
        // earliest such post of each trigger.
        let found: Vec<(i64, String, Millis)> = self
            .conn
            .prepare(
                "SELECT g.id, p.id, MIN(p.created_at) FROM triggers g
                 JOIN posts p ON p.role = 'notice' AND p.author_kind = 'system_bot'
                   AND p.deleted_at IS NULL
                   AND json_extract(p.props, '$.collegium_trigger') = g.id
                   AND p.created_at >= g.recorded_at - 60000
                   AND (g.announced_at IS NULL OR p.created_at > g.announced_at)
                   AND p.id IS NOT g.announcement_post_id
                 WHERE g.status = 'pending'
                 GROUP BY g.id",
            )?
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        for (id, post, at) in &found {
            self.mark_announced(*id, post, *at)?;
        }
        Ok(found.len())
    }

    /// Announcements the process that stopped posted and never saw arrive:
    /// announced since `since` (its start), recorded by a catch-up that
    /// hands nothing on (this boot's, or a socket's first) and never
    /// delivered live since, and the start of no turn. Each started nothing, so its
    /// trigger is owed the post it never got (§4.2, §7.3). (trigger id,
    /// post id).
    pub fn unstarted_announcements(&self, since: Millis) -> Result<Vec<(i64, String)>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT g.id, g.announcement_post_id FROM triggers g
             JOIN posts p ON p.id = g.announcement_post_id
             WHERE g.status = 'announced' AND g.announced_at >= ?1
               AND p.observed_via = 'backfill'
               AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.answers_post_id = p.id)
               AND NOT EXISTS (SELECT 1 FROM turn_answers a WHERE a.post_id = p.id)
             ORDER BY g.id",
        )?;
        let rows = statement
            .query_map(params![since], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Returns to pending an announced trigger whose turn a restart
    /// abandoned before it had any effect, where it was announced once: the
    /// one more post §4.2 allows.
    pub fn announce_again(&self, post_id: &str) -> Result<AnnounceAgain, StoreError> {
        if self.conn.execute(
            "UPDATE triggers SET status = 'pending'
             WHERE announcement_post_id = ?1 AND status = 'announced' AND announcements = 1",
            params![post_id],
        )? == 1
        {
            return Ok(AnnounceAgain::Sent);
        }
        let outstanding = self
            .conn
            .query_row(
                "SELECT 1 FROM triggers WHERE announcement_post_id = ?1 AND status = 'announced'",
                params![post_id],
                |_| Ok(()),
            )
            .optional()?;
        Ok(match outstanding {
            Some(()) => AnnounceAgain::HadItsOneMore,
            None => AnnounceAgain::NotOutstanding,
        })
    }
}

#[cfg(test)]
#[path = "triggers_tests.rs"]
mod tests;
