-- Work units (§3.15): one thing one agent handed to another, in one
-- channel. Every state change is a post and the post comes first, so each
-- row points at the posts that announced it. A unit's number is reserved
-- before its assignment post (the post names it); a crash between the post
-- and the record leaves a reserved number and a post with no unit, which
-- the next report names (§3.15), never a unit the channel did not see.
CREATE TABLE unit_numbers (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id  TEXT NOT NULL,
    agent       TEXT NOT NULL,
    reserved_at INTEGER NOT NULL
) STRICT;

CREATE TABLE units (
    id                  INTEGER PRIMARY KEY REFERENCES unit_numbers (id),
    channel_id          TEXT NOT NULL,
    creator             TEXT NOT NULL,
    assignee            TEXT NOT NULL,
    outcome             TEXT NOT NULL,
    criteria            TEXT NOT NULL,
    context             TEXT NOT NULL,
    state               TEXT NOT NULL
                        CHECK (state IN ('assigned', 'blocked', 'review', 'done', 'cancelled')),
    assigned_at         INTEGER NOT NULL,
    -- When the state last changed: a report, a close, a link.
    changed_at          INTEGER NOT NULL,
    assignment_post_id  TEXT NOT NULL,
    assigning_turn_id   TEXT NOT NULL,
    -- The unit this one continues, and the one that continues it (§3.15):
    -- a unit is followed once.
    follows             INTEGER REFERENCES units (id),
    followed_by         INTEGER REFERENCES units (id),
    -- Where the unit stood when a continuation linked it: review, or
    -- blocked and why (§3.15).
    linked_from_state   TEXT,
    linked_at           INTEGER,
    latest_report_id    INTEGER,
    close_post_id       TEXT,
    closed_at           INTEGER,
    closed_from_state   TEXT CHECK (closed_from_state IS NULL
                        OR closed_from_state IN ('assigned', 'blocked', 'review')),
    -- What closed it: its creator's close, a continuation, a person's
    -- cancellation (§3.15, §8.4).
    closed_by           TEXT CHECK (closed_by IS NULL
                        OR closed_by IN ('creator', 'continuation', 'person')),
    closer              TEXT,
    -- The close's words: why done (delivered, or which unit continues
    -- it) or why cancelled. A later link to a successor adds to it.
    verdict             TEXT
) STRICT;
CREATE INDEX units_by_channel ON units (channel_id, state, id);
CREATE UNIQUE INDEX units_by_follows ON units (follows) WHERE follows IS NOT NULL;

-- Each report an assignee made, or the framework made for it (§3.15).
CREATE TABLE unit_reports (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    unit_id    INTEGER NOT NULL REFERENCES units (id),
    post_id    TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('review', 'blocked')),
    body       TEXT NOT NULL,
    -- 1 where the framework reported the assignee out of context.
    by_framework INTEGER NOT NULL DEFAULT 0 CHECK (by_framework IN (0, 1)),
    turn_id    TEXT,
    at         INTEGER NOT NULL
) STRICT;
CREATE INDEX unit_reports_by_unit ON unit_reports (unit_id, id);

-- The reports a turn has read: in its window, or shown whole by
-- tasks::read. A close rests on one (§3.15); a search hit never lands here.
CREATE TABLE unit_reads (
    turn_id   TEXT NOT NULL,
    report_id INTEGER NOT NULL REFERENCES unit_reports (id),
    PRIMARY KEY (turn_id, report_id)
) STRICT;

-- Unit posts that carry no record (a crash between the post and the
-- record), once a report has named them: each is named once (§3.15).
CREATE TABLE unit_orphans_named (
    post_id  TEXT PRIMARY KEY,
    named_at INTEGER NOT NULL
) STRICT;
