-- Triggers (§4.2): what deterministic code recorded to be announced, never
-- work to be executed. A row is pending until the system bot posts its
-- announcement, announced until it is resolved, then resolved. The id is
-- the framework's, bracketed in the announcement; `reference` is the
-- source's own (a Message-ID, a schedule's name and occurrence, a webhook
-- sender's id), which nothing makes unique.
CREATE TABLE triggers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL CHECK (source IN ('mail', 'schedule', 'webhook')),
    agent TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    sender TEXT NOT NULL,
    subject TEXT NOT NULL,
    reference TEXT NOT NULL,
    -- The full body where the source carries one (§4.2).
    body TEXT,
    -- What only its source reads: a mail's mailbox position, headers and
    -- attachments; a schedule's name and occurrence. JSON.
    detail TEXT NOT NULL CHECK (json_valid(detail)),
    status TEXT NOT NULL CHECK (status IN ('pending', 'announced', 'resolved')),
    recorded_at INTEGER NOT NULL,
    announced_at INTEGER,
    announcement_post_id TEXT,
    -- Posts made for it: one, and one more where a restart abandoned the
    -- turn its post started before it had any effect (§4.2, §7.3).
    announcements INTEGER NOT NULL DEFAULT 0,
    resolved_at INTEGER,
    -- 'agent' through triggers::resolve, 'superseded' by the next firing of
    -- the same schedule (§4.2).
    resolved_by TEXT CHECK (resolved_by IS NULL OR resolved_by IN ('agent', 'superseded'))
);
CREATE INDEX triggers_by_channel ON triggers (channel_id, status, id);
CREATE INDEX triggers_by_agent ON triggers (agent, status);
CREATE INDEX triggers_by_reference ON triggers (agent, source, reference);
CREATE UNIQUE INDEX triggers_by_announcement ON triggers (announcement_post_id)
    WHERE announcement_post_id IS NOT NULL;

-- Where the inbound poll of each agent's mailbox stands (§3.13). It moves
-- in the same transaction as the trigger rows of what it read, so a crash
-- between fetch and commit records each arrival once.
CREATE TABLE mail_cursors (
    agent TEXT PRIMARY KEY,
    uidvalidity INTEGER NOT NULL,
    last_uid INTEGER NOT NULL,
    last_internal_date INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

-- Each declared schedule's place (§4.2): first seen, so a schedule declared
-- this afternoon does not announce this morning, and the last occurrence
-- recorded, so a week down fires once.
CREATE TABLE schedule_marks (
    agent TEXT NOT NULL,
    schedule TEXT NOT NULL,
    declared_at INTEGER NOT NULL,
    last_occurrence INTEGER,
    PRIMARY KEY (agent, schedule)
);
