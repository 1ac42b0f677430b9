//! The store's side of `/collegium clear` (§8.5): the cut, in one
//! transaction, of everything the channel's record holds from before the
//! clear's notice, and the confirmation dialogs a clear opens, each counted
//! once (§6.4).
//!
//! Content goes, accounting stays: posts, trace events, approvals and asks,
//! episode boundaries, the erased posts' queue rows, work units and the
//! triggers that already posted are deleted; turn records (with their cost
//! and timing), files, plugin storage, mail, schedules, the halt and pending
//! triggers are kept. Memories go only when asked, by provenance.

use rusqlite::{OptionalExtension, params};

use super::{Millis, Store, StoreError};

/// What one cut deleted, for the log and the benchmark.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cut {
    pub posts: usize,
    pub trace_events: usize,
    pub decisions: usize,
    pub units: usize,
    pub triggers: usize,
    pub memories: usize,
}

/// A confirmation dialog as it was opened (§8.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearDialog {
    pub channel_id: String,
    pub invoker_id: String,
    pub memories: bool,
    pub opened_at: Millis,
}

impl Store {
    /// Cuts the channel's record older than `before` (the notice's time),
    /// in one transaction: all of it or none of it (§8.5). The channel's
    /// last clear moves to `before`, so nothing older is ever recorded
    /// again. A second cut finds nothing and deletes nothing.
    pub fn clear_channel(
        &mut self,
        channel_id: &str,
        before: Millis,
        memories: bool,
    ) -> Result<Cut, StoreError> {
        let tx = self.conn.transaction()?;
        let mut cut = Cut::default();
        tx.execute(
            "UPDATE channels SET last_cleared_at = MAX(COALESCE(last_cleared_at, 0), ?2)
             WHERE id = ?1",
            params![channel_id, before],
        )?;
        // The erased posts' queue rows and the per-post marks that name them.
        const DOOMED: &str = "SELECT id FROM posts WHERE channel_id = ?1 AND created_at < ?2";
        tx.execute(
            &format!("DELETE FROM queue WHERE channel_id = ?1 AND post_id IN ({DOOMED})"),
            params![channel_id, before],
        )?;
        for table in ["crash_returns", "unit_orphans_named"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE post_id IN ({DOOMED})"),
                params![channel_id, before],
            )?;
        }
        // Trace events of every turn here; the turn records stay, with what
        // they cost and how long they ran, but no longer name the posts that
        // are gone (§8.5).
        const TURNS: &str = "SELECT id FROM turns WHERE channel_id = ?1 AND started_at < ?2";
        cut.trace_events = tx.execute(
            &format!("DELETE FROM turn_events WHERE turn_id IN ({TURNS})"),
            params![channel_id, before],
        )?;
        tx.execute(
            &format!("DELETE FROM turn_answers WHERE turn_id IN ({TURNS})"),
            params![channel_id, before],
        )?;
        tx.execute(
            "UPDATE turns SET answers_post_id = NULL, drain_from_post_id = NULL,
                              context_reach_post_id = NULL, status_post_id = NULL
             WHERE channel_id = ?1 AND started_at < ?2",
            params![channel_id, before],
        )?;
        // Approvals and asks. A clear is refused while one waits (§8.5), so
        // every one here is decided.
        cut.decisions = tx.execute(
            "DELETE FROM decisions WHERE channel_id = ?1 AND requested_at < ?2",
            params![channel_id, before],
        )?;
        tx.execute(
            "DELETE FROM episode_boundaries WHERE channel_id = ?1 AND at < ?2",
            params![channel_id, before],
        )?;
        // Work units (§3.15), with their reports and reads. A unit elsewhere
        // that continues or is continued by one here loses only the link.
        const UNITS: &str = "SELECT id FROM units WHERE channel_id = ?1 AND assigned_at < ?2";
        tx.execute(
            &format!(
                "DELETE FROM unit_reads WHERE report_id IN
                 (SELECT id FROM unit_reports WHERE unit_id IN ({UNITS}))"
            ),
            params![channel_id, before],
        )?;
        tx.execute(
            &format!("DELETE FROM unit_reports WHERE unit_id IN ({UNITS})"),
            params![channel_id, before],
        )?;
        tx.execute(
            &format!(
                "UPDATE units SET follows = NULL WHERE channel_id <> ?1 AND follows IN ({UNITS})"
            ),
            params![channel_id, before],
        )?;
        tx.execute(
            &format!(
                "UPDATE units SET followed_by = NULL WHERE channel_id <> ?1 AND followed_by IN ({UNITS})"
            ),
            params![channel_id, before],
        )?;
        cut.units = tx.execute(
            "DELETE FROM units WHERE channel_id = ?1 AND assigned_at < ?2",
            params![channel_id, before],
        )?;
        tx.execute(
            "DELETE FROM unit_numbers WHERE channel_id = ?1 AND reserved_at < ?2
               AND id NOT IN (SELECT id FROM units)",
            params![channel_id, before],
        )?;
        // Triggers that already posted here are history; pending ones are
        // future work and post into the cleared channel (§8.5).
        cut.triggers = tx.execute(
            "DELETE FROM triggers WHERE channel_id = ?1 AND status <> 'pending' AND recorded_at < ?2",
            params![channel_id, before],
        )?;
        if memories {
            // By provenance: an entry's provenance is its latest revision's
            // turn, so this is exact for one written and revised here and
            // approximate at the edges (§8.5, §3.6).
            cut.memories = tx.execute(
                "DELETE FROM memories WHERE provenance_channel_id = ?1 AND written_at < ?2",
                params![channel_id, before],
            )?;
        }
        // Last, the posts: their files follow by cascade, the search index
        // by trigger (§8.5: search no longer finds what was here).
        cut.posts = tx.execute(
            "DELETE FROM posts WHERE channel_id = ?1 AND created_at < ?2",
            params![channel_id, before],
        )?;
        tx.commit()?;
        Ok(cut)
    }

    /// Records a confirmation dialog as opened.
    pub fn open_clear_dialog(&self, nonce: &str, dialog: &ClearDialog) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO clear_dialogs (nonce, channel_id, invoker_id, memories, opened_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                nonce,
                dialog.channel_id,
                dialog.invoker_id,
                dialog.memories,
                dialog.opened_at
            ],
        )?;
        Ok(())
    }

    /// Settles a dialog: the first submission (or cancel) gets it as it was
    /// opened; every later one, and one never opened, gets `None` (§6.4).
    pub fn settle_clear_dialog(
        &self,
        nonce: &str,
        at: Millis,
    ) -> Result<Option<ClearDialog>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "UPDATE clear_dialogs SET settled_at = ?2
                 WHERE nonce = ?1 AND settled_at IS NULL
                 RETURNING channel_id, invoker_id, memories, opened_at",
                params![nonce, at],
                |row| {
                    Ok(ClearDialog {
                        channel_id: row.get(0)?,
                        invoker_id: row.get(1)?,
                        memories: row.get(2)?,
                        opened_at: row.get(3)?,
                    })
                },
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.db")).expect("open");
        (dir, store)
    }

    fn count(store: &Store, sql: &str) -> i64 {
        store.conn.query_row(sql, [], |r| r.get(0)).expect("count")
    }

    /// Two channels, each with two posts either side of t=1000, a turn
    /// with events, a decision, a boundary, a queue row, a unit, triggers
    /// and a memory.
    fn seeded() -> (tempfile::TempDir, Store) {
        let (dir, store) = store();
        for channel in ["c", "d"] {
            store
                .conn
                .execute_batch(&format!(
                    "INSERT INTO channels (id, name, display_name, kind) VALUES ('{channel}', '{channel}', '{channel}', 'open');
                     INSERT INTO posts (id, channel_id, author_id, author_name, author_kind, created_at, message, observed_at, observed_via, pinned)
                       VALUES ('{channel}-old', '{channel}', 'u', 'ana', 'person', 500, 'old words {channel}', 500, 'live', 1),
                              ('{channel}-new', '{channel}', 'u', 'ana', 'person', 1500, 'new words {channel}', 1500, 'live', 0);
                     INSERT INTO post_files (post_id, file_id, name, mime_type, size) VALUES ('{channel}-old', 'f', 'a.txt', 'text/plain', 1);
                     INSERT INTO turns (id, agent, channel_id, boot_id, started_at, ended_at, exit_kind, cause, answers_post_id,
                                        depth, chain_root, chain_length, model, prompt_tokens, cost_micro_usd)
                       VALUES ('{channel}-t', 'mira', '{channel}', 'b', 600, 700, 'completed', 'post', '{channel}-old', 0, '{channel}-t', 1, 'm', 1234, 56);
                     INSERT INTO turn_answers (turn_id, post_id, how) VALUES ('{channel}-t', '{channel}-old', 'start');
                     INSERT INTO turn_events (turn_id, seq, at, kind, content) VALUES ('{channel}-t', 1, 650, 'completion', 'hi');
                     INSERT INTO decisions (id, turn_id, agent, channel_id, kind, payload, requested_at, outcome)
                       VALUES ('{channel}-a', '{channel}-t', 'mira', '{channel}', 'approval', 'x', 660, 'approved');
                     INSERT INTO episode_boundaries (agent, channel_id, at, set_by) VALUES ('mira', '{channel}', 400, 'ana');
                     INSERT INTO queue (agent, channel_id, post_id, queued_at) VALUES ('mira', '{channel}', '{channel}-old', 510),
                                                                                       ('mira', '{channel}', '{channel}-new', 1510);
                     INSERT INTO triggers (source, agent, channel_id, sender, subject, reference, detail, status, recorded_at)
                       VALUES ('webhook', 'mira', '{channel}', 's', 'posted', 'r1', '{{}}', 'resolved', 300),
                              ('webhook', 'mira', '{channel}', 's', 'waiting', 'r2', '{{}}', 'pending', 300);
                     INSERT INTO memories (agent, key, description, body, written_at, written_channel_id, provenance_turn_id,
                                           provenance_channel_id, last_read_at)
                       VALUES ('mira', '{channel}0123456789abcde', 'd', 'b', 650, '{channel}', '{channel}-t', '{channel}', 650);"
                ))
                .expect("seed");
        }
        store
            .conn
            .execute_batch(
                "INSERT INTO unit_numbers (channel_id, agent, reserved_at) VALUES ('c', 'mira', 600);
                 INSERT INTO units (id, channel_id, creator, assignee, outcome, criteria, context, state, assigned_at,
                                    changed_at, assignment_post_id, assigning_turn_id)
                   VALUES (1, 'c', 'mira', 'theo', 'o', 'k', 'x', 'review', 600, 600, 'c-old', 'c-t');
                 INSERT INTO unit_reports (unit_id, post_id, state, body, at) VALUES (1, 'c-old', 'review', 'done', 650);",
            )
            .expect("units");
        (dir, store)
    }

    #[test]
    fn s8_5_the_cut_deletes_content_older_than_the_notice_and_keeps_accounting() {
        let (_dir, mut store) = seeded();
        let cut = store.clear_channel("c", 1000, false).expect("cut");
        assert_eq!(
            cut,
            Cut {
                posts: 1,
                trace_events: 1,
                decisions: 1,
                units: 1,
                triggers: 1,
                memories: 0,
            }
        );
        let c = |sql: &str| count(&store, sql);
        assert_eq!(
            c("SELECT COUNT(*) FROM posts WHERE channel_id = 'c'"),
            1,
            "the newer post survives"
        );
        assert_eq!(c("SELECT COUNT(*) FROM posts WHERE id = 'c-new'"), 1);
        assert_eq!(
            c("SELECT COUNT(*) FROM post_files WHERE post_id = 'c-old'"),
            0
        );
        assert_eq!(
            c(r#"SELECT COUNT(*) FROM posts_fts WHERE posts_fts MATCH '"old words c"'"#),
            0,
            "search no longer finds it"
        );
        assert_eq!(
            c("SELECT COUNT(*) FROM turn_events WHERE turn_id = 'c-t'"),
            0
        );
        assert_eq!(
            c("SELECT COUNT(*) FROM turn_answers WHERE turn_id = 'c-t'"),
            0
        );
        assert_eq!(
            c("SELECT COUNT(*) FROM decisions WHERE channel_id = 'c'"),
            0
        );
        assert_eq!(
            c("SELECT COUNT(*) FROM episode_boundaries WHERE channel_id = 'c'"),
            0
        );
        assert_eq!(
            c("SELECT COUNT(*) FROM queue WHERE channel_id = 'c'"),
            1,
            "only the erased post's row goes"
        );
        assert_eq!(c("SELECT COUNT(*) FROM units"), 0);
        assert_eq!(c("SELECT COUNT(*) FROM unit_reports"), 0);
        assert_eq!(
            c("SELECT COUNT(*) FROM triggers WHERE channel_id = 'c' AND status = 'pending'"),
            1,
            "pending triggers stay"
        );
        assert_eq!(c("SELECT COUNT(*) FROM triggers WHERE channel_id = 'c'"), 1);
        assert_eq!(
            c("SELECT COUNT(*) FROM memories WHERE provenance_channel_id = 'c'"),
            1,
            "memories kept by default"
        );
        // Accounting stays: the turn record, its cost and its timing.
        assert_eq!(
            c("SELECT COUNT(*) FROM turns WHERE id = 'c-t' AND prompt_tokens = 1234 AND cost_micro_usd = 56
               AND started_at = 600 AND ended_at = 700 AND answers_post_id IS NULL"),
            1
        );
        assert_eq!(store.cleared_before("c").expect("read"), Some(1000));
        // The other channel is untouched.
        assert_eq!(c("SELECT COUNT(*) FROM posts WHERE channel_id = 'd'"), 2);
        assert_eq!(
            c("SELECT COUNT(*) FROM turn_events WHERE turn_id = 'd-t'"),
            1
        );
        assert_eq!(
            c("SELECT COUNT(*) FROM decisions WHERE channel_id = 'd'"),
            1
        );
        assert_eq!(c("SELECT COUNT(*) FROM triggers WHERE channel_id = 'd'"), 2);
    }

    #[test]
    fn s8_5_memories_go_by_provenance_only_when_asked() {
        let (_dir, mut store) = seeded();
        let cut = store.clear_channel("c", 1000, true).expect("cut");
        assert_eq!(cut.memories, 1);
        assert_eq!(
            count(
                &store,
                "SELECT COUNT(*) FROM memories WHERE provenance_channel_id = 'c'"
            ),
            0
        );
        assert_eq!(
            count(
                &store,
                "SELECT COUNT(*) FROM memories WHERE provenance_channel_id = 'd'"
            ),
            1
        );
    }

    #[test]
    fn s8_5_a_second_cut_finds_nothing_older_and_the_store_never_records_it_again() {
        let (_dir, mut store) = seeded();
        store.clear_channel("c", 1000, false).expect("cut");
        let again = store.clear_channel("c", 1000, false).expect("again");
        assert_eq!(again, Cut::default());
        let earlier = store.clear_channel("c", 200, false).expect("earlier");
        assert_eq!(earlier, Cut::default());
        assert_eq!(
            store.cleared_before("c").expect("read"),
            Some(1000),
            "an earlier clear never moves it back"
        );
    }

    #[test]
    fn s6_4_a_clear_dialog_settles_once() {
        let (_dir, store) = store();
        let dialog = ClearDialog {
            channel_id: "c".into(),
            invoker_id: "u".into(),
            memories: true,
            opened_at: 10,
        };
        store.open_clear_dialog("n1", &dialog).expect("open");
        assert_eq!(
            store.settle_clear_dialog("n1", 20).expect("settle"),
            Some(dialog)
        );
        assert_eq!(
            store.settle_clear_dialog("n1", 30).expect("replay"),
            None,
            "a replay"
        );
        assert_eq!(
            store.settle_clear_dialog("n2", 30).expect("unknown"),
            None,
            "never opened"
        );
    }
}

#[cfg(test)]
mod recording {
    use super::super::{AuthorKind, ObservedPost, ObservedVia, PostRole};
    use super::*;

    fn post(id: &str, created_at: Millis) -> ObservedPost {
        ObservedPost {
            id: id.into(),
            channel_id: "c".into(),
            author_id: "u".into(),
            author_name: "ana".into(),
            author_kind: AuthorKind::Person,
            created_at,
            message: "words".into(),
            props: None,
            role: PostRole::Post,
            turn_id: None,
            pinned: true,
            observed_at: created_at,
            observed_via: ObservedVia::PinRead,
            files: Vec::new(),
        }
    }

    #[test]
    fn s8_5_backfill_and_pin_reads_never_record_a_post_older_than_the_last_clear() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("s.db")).expect("open");
        store
            .conn
            .execute_batch("INSERT INTO channels (id, name, display_name, kind) VALUES ('c', 'c', 'c', 'open')")
            .expect("channel");
        store.clear_channel("c", 1000, false).expect("cut");
        assert!(!store.record_post(&post("old", 999)).expect("old"));
        assert!(store.post("old").expect("read").is_none());
        assert!(
            store.record_post(&post("new", 1000)).expect("new"),
            "the notice's own moment is kept"
        );
    }
}
