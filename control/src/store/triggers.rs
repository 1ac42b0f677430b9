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

impl Store {
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
mod tests {
    use super::*;
    use crate::store::ObservedVia;

    fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.db")).expect("open");
        (dir, store)
    }

    fn mail(reference: &str) -> NewTrigger {
        NewTrigger {
            source: TriggerSource::Mail,
            agent: "mira".into(),
            channel_id: "c1".into(),
            sender: "ana@example.com".into(),
            subject: "Invoice".into(),
            reference: reference.into(),
            body: Some("Please pay.".into()),
            detail: serde_json::json!({"uid": 7}),
        }
    }

    fn firing(occurrence: i64) -> NewTrigger {
        NewTrigger {
            source: TriggerSource::Schedule,
            agent: "mira".into(),
            channel_id: "c1".into(),
            sender: "schedule".into(),
            subject: "daily".into(),
            reference: "daily".into(),
            body: Some("Post the report.".into()),
            detail: serde_json::json!({"occurrence": occurrence}),
        }
    }

    const CURSOR: MailCursor = MailCursor {
        uidvalidity: 5,
        last_uid: 9,
        last_internal_date: 100,
    };

    #[test]
    fn s3_13_the_cursor_moves_with_the_rows_it_read() {
        let (_dir, mut store) = open();
        assert_eq!(store.mail_cursor("mira").expect("cursor"), None);
        let ids = store
            .record_mail("mira", CURSOR, &[mail("a@x"), mail("b@x")], 1)
            .expect("record");
        assert_eq!(ids.len(), 2);
        assert_eq!(store.mail_cursor("mira").expect("cursor"), Some(CURSOR));
        let first = store.next_pending("c1").expect("pending").expect("one");
        assert_eq!(first.id, ids[0]);
        assert_eq!(first.body.as_deref(), Some("Please pay."));
        assert_eq!(first.detail["uid"], 7);
    }

    #[test]
    fn s3_13_a_renumbered_mailbox_read_again_records_nothing_twice() {
        let (_dir, mut store) = open();
        store
            .record_mail("mira", CURSOR, &[mail("a@x")], 1)
            .expect("record");
        let again = store
            .record_mail("mira", CURSOR, &[mail("a@x"), mail("c@x")], 2)
            .expect("record");
        assert_eq!(again.len(), 1, "only the message not seen before");
        assert_eq!(
            store
                .trigger(again[0])
                .expect("read")
                .expect("row")
                .reference,
            "c@x"
        );
    }

    #[test]
    fn s4_2_a_busy_channel_delays_a_schedule_and_never_stacks_it() {
        let (_dir, mut store) = open();
        store.schedule_mark("mira", "daily", 1).expect("mark");
        let first = store
            .record_firing(&firing(10), "daily", 10, 11)
            .expect("fire");
        let second = store
            .record_firing(&firing(20), "daily", 20, 21)
            .expect("fire");
        assert_eq!(
            first, second,
            "one waiting row, carrying the newer occurrence"
        );
        let row = store.trigger(first).expect("read").expect("row");
        assert_eq!(row.detail["occurrence"], 20);
        let mark = store.schedule_mark("mira", "daily", 99).expect("mark");
        assert_eq!(mark.declared_at, 1, "declared once");
        assert_eq!(mark.last_occurrence, Some(20));
    }

    #[test]
    fn s4_2_announcing_a_firing_marks_the_previous_one_handled() {
        let (_dir, mut store) = open();
        store.schedule_mark("mira", "daily", 1).expect("mark");
        let first = store
            .record_firing(&firing(10), "daily", 10, 11)
            .expect("fire");
        store.mark_announced(first, "p1", 12).expect("announce");
        let second = store
            .record_firing(&firing(20), "daily", 20, 21)
            .expect("fire");
        assert_ne!(first, second, "an announced firing is not reused");
        let webhook = store
            .record_trigger(
                &NewTrigger {
                    source: TriggerSource::Webhook,
                    reference: "daily".into(),
                    ..firing(0)
                },
                13,
            )
            .expect("record");
        store.mark_announced(webhook, "p0", 13).expect("announce");
        store.mark_announced(second, "p2", 22).expect("announce");
        let outstanding: Vec<i64> = store
            .outstanding_triggers("mira", "c1")
            .expect("outstanding")
            .iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(
            outstanding,
            [second, webhook],
            "the earlier firing is handled; another source's row is untouched"
        );
    }

    #[test]
    fn s4_2_resolving_is_once_and_only_for_an_announced_trigger() {
        let (_dir, mut store) = open();
        let id = store.record_trigger(&mail("a@x"), 1).expect("record");
        assert!(!store.resolve_trigger(id, 2).expect("resolve"), "pending");
        store.mark_announced(id, "p1", 3).expect("announce");
        assert_eq!(
            store
                .trigger_announced_by("p1")
                .expect("read")
                .map(|t| t.id),
            Some(id)
        );
        assert!(store.resolve_trigger(id, 4).expect("resolve"));
        assert!(!store.resolve_trigger(id, 5).expect("resolve"), "once");
        assert!(
            store
                .outstanding_triggers("mira", "c1")
                .expect("read")
                .is_empty()
        );
    }

    #[test]
    fn s4_2_a_restart_announces_again_once() {
        let (_dir, mut store) = open();
        let id = store.record_trigger(&mail("a@x"), 1).expect("record");
        store.mark_announced(id, "p1", 2).expect("announce");
        assert_eq!(
            store.announce_again("p1").expect("again"),
            AnnounceAgain::Sent
        );
        store.mark_announced(id, "p2", 3).expect("announce");
        assert_eq!(
            store.announce_again("p2").expect("again"),
            AnnounceAgain::HadItsOneMore,
            "one more, no more"
        );
        assert!(store.resolve_trigger(id, 4).expect("resolve"));
        assert_eq!(
            store.announce_again("p2").expect("again"),
            AnnounceAgain::NotOutstanding,
            "a resolved trigger is owed nothing"
        );
        assert_eq!(
            store.trigger(id).expect("read").expect("row").announcements,
            2
        );
    }

    #[test]
    fn s4_2_labels_round_trip() {
        assert_eq!(trigger_label(12), "T-12");
        for text in ["T-12", "[T-12]", "12", " t-12 "] {
            assert_eq!(parse_trigger_label(text), Some(12), "{text}");
        }
        for text in ["", "T-", "T-0", "x12", "<abc@mail>"] {
            assert_eq!(parse_trigger_label(text), None, "{text}");
        }
    }

    fn with_channel() -> (tempfile::TempDir, Store) {
        let (dir, store) = open();
        store
            .conn
            .execute_batch(
                "INSERT INTO channels (id, name, display_name, kind) VALUES ('c1', 'c1', 'c1', 'open')",
            )
            .expect("channel");
        (dir, store)
    }

    /// The system bot's announcement of `trigger` as the store records it.
    fn announcement(
        id: &str,
        trigger: i64,
        at: Millis,
        via: ObservedVia,
    ) -> crate::store::ObservedPost {
        crate::store::ObservedPost {
            id: id.into(),
            channel_id: "c1".into(),
            author_id: "u-collegium".into(),
            author_name: "collegium".into(),
            author_kind: crate::store::AuthorKind::SystemBot,
            created_at: at,
            message: format!("@mira New mail [T-{trigger}]"),
            props: Some(
                serde_json::json!({"collegium_role": "notice", "collegium_trigger": trigger})
                    .to_string(),
            ),
            role: crate::store::PostRole::Notice,
            turn_id: None,
            pinned: false,
            observed_at: at,
            observed_via: via,
            files: Vec::new(),
        }
    }

    fn answered_by_a_turn(store: &Store, post: &str) {
        store
            .open_turn(&crate::store::NewTurn {
                id: "t1".into(),
                agent: "mira".into(),
                channel_id: "c1".into(),
                boot_id: "b1".into(),
                started_at: 300,
                cause: crate::store::TurnCause::Trigger,
                answers_post_id: Some(post.into()),
                depth: 0,
                chain_root: "t1".into(),
                chain_length: 1,
                model: "m".into(),
            })
            .expect("turn");
    }

    /// Records the system bot's announcement `post` of `trigger`, read at
    /// `at` over `via`.
    fn posted(store: &mut Store, post: &str, trigger: i64, at: Millis, via: ObservedVia) {
        store
            .record_post(&announcement(post, trigger, at, via))
            .expect("post");
    }

    /// A crash between Mattermost creating the announcement and the store
    /// recording it: the post read back at boot records it, once.
    #[test]
    fn s7_3_an_announcement_a_crash_left_unrecorded_is_recorded_from_the_channel() {
        let (_dir, mut store) = with_channel();
        let id = store.record_trigger(&mail("<a@x>"), 10).expect("record");
        posted(&mut store, "p1", id, 100, ObservedVia::Backfill);
        assert_eq!(
            store.recover_unrecorded_announcements().expect("recover"),
            1
        );
        let trigger = store.trigger(id).expect("read").expect("row");
        assert_eq!(trigger.status, TriggerStatus::Announced);
        assert_eq!(trigger.announcement_post_id.as_deref(), Some("p1"));
        assert_eq!(trigger.announcements, 1);
        assert_eq!(store.recover_unrecorded_announcements().expect("again"), 0);

        // It started nothing, so it is owed its announcement; once a turn
        // answers it, it is not.
        assert_eq!(
            store.unstarted_announcements(50).expect("unstarted"),
            vec![(id, "p1".to_string())]
        );
        answered_by_a_turn(&store, "p1");
        assert!(
            store
                .unstarted_announcements(50)
                .expect("unstarted")
                .is_empty()
        );
    }

    /// Sent back once, announced again and cut off again: the second post is
    /// the one recovered, and the count says two (§4.2).
    #[test]
    fn s4_2_a_second_announcement_left_unrecorded_counts_as_the_second() {
        let (_dir, mut store) = with_channel();
        let id = store.record_trigger(&mail("<a@x>"), 10).expect("record");
        posted(&mut store, "p1", id, 100, ObservedVia::Live);
        store.mark_announced(id, "p1", 101).expect("announced");
        assert_eq!(
            store.announce_again("p1").expect("again"),
            AnnounceAgain::Sent
        );
        posted(&mut store, "p2", id, 200, ObservedVia::Backfill);
        assert_eq!(
            store.recover_unrecorded_announcements().expect("recover"),
            1
        );
        let trigger = store.trigger(id).expect("read").expect("row");
        assert_eq!(trigger.announcement_post_id.as_deref(), Some("p2"));
        assert_eq!(trigger.announcements, 2);
        assert_eq!(
            store.announce_again("p2").expect("no third"),
            AnnounceAgain::HadItsOneMore
        );
    }

    /// Only what the stopped process announced and never saw arrive is owed:
    /// not a post it saw (its turn may have been refused), nor one announced
    /// before it started.
    #[test]
    fn s7_3_an_announcement_seen_live_or_made_before_the_last_start_is_not_owed() {
        let (_dir, mut store) = with_channel();
        let seen = store.record_trigger(&mail("<a@x>"), 10).expect("record");
        posted(&mut store, "p1", seen, 100, ObservedVia::Live);
        store.mark_announced(seen, "p1", 100).expect("announced");
        let old = store.record_trigger(&mail("<b@x>"), 10).expect("record");
        posted(&mut store, "p2", old, 40, ObservedVia::Backfill);
        store.mark_announced(old, "p2", 40).expect("announced");
        assert!(
            store
                .unstarted_announcements(50)
                .expect("unstarted")
                .is_empty()
        );
        assert_eq!(
            store.recover_unrecorded_announcements().expect("recover"),
            0
        );
    }

    /// Of two posts naming a pending trigger the earlier is its first
    /// announcement; a post from before the trigger was recorded (an old
    /// store's trigger of the same number) is none of its.
    #[test]
    fn s7_3_the_earliest_announcement_after_the_trigger_is_the_one_recovered() {
        let (_dir, mut store) = with_channel();
        let id = store
            .record_trigger(&mail("<a@x>"), 1_000_000)
            .expect("record");
        posted(&mut store, "stale", id, 100, ObservedVia::Backfill);
        assert_eq!(
            store.recover_unrecorded_announcements().expect("recover"),
            0
        );
        posted(&mut store, "p2", id, 1_000_200, ObservedVia::Backfill);
        posted(&mut store, "p1", id, 1_000_100, ObservedVia::Backfill);
        assert_eq!(
            store.recover_unrecorded_announcements().expect("recover"),
            1
        );
        let trigger = store.trigger(id).expect("read").expect("row");
        assert_eq!(trigger.announcement_post_id.as_deref(), Some("p1"));
        assert_eq!(trigger.announcements, 1);
    }
}
