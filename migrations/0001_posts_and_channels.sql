-- Conversation content as observed (§8.2). The store is authoritative for it:
-- context assembly reads these tables and never the Mattermost API.
-- Times are milliseconds since the Unix epoch, as Mattermost writes them.

-- Channels the daemon has observed, with the boundary of their last clear
-- (§8.5): the store never again records a post older than it.
CREATE TABLE channels (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,       -- handle; empty for a direct or group message
    display_name    TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('open', 'private', 'direct', 'group')),
    last_cleared_at INTEGER
) STRICT;

-- Every observed post, with what its author was when it was observed (§3.8)
-- and what it is to the turn that wrote it (§8.2, §4.5).
CREATE TABLE posts (
    id           TEXT PRIMARY KEY,
    channel_id   TEXT NOT NULL REFERENCES channels (id),
    author_id    TEXT NOT NULL,
    author_name  TEXT NOT NULL,
    author_kind  TEXT NOT NULL CHECK (author_kind IN ('person', 'agent', 'system_bot', 'other_bot')),
    created_at   INTEGER NOT NULL,
    message      TEXT NOT NULL,
    props        TEXT,                -- JSON, as Mattermost sent it
    role         TEXT NOT NULL DEFAULT 'post'
                 CHECK (role IN ('post', 'reply', 'unit_post', 'notice', 'prompt', 'status')),
    turn_id      TEXT,                -- the turn that wrote it, for a framework post
    pinned       INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    edited_at    INTEGER,             -- followed for pinned posts only (§8.2)
    deleted_at   INTEGER,
    observed_at  INTEGER NOT NULL,
    observed_via TEXT NOT NULL CHECK (observed_via IN ('live', 'backfill', 'reconnect', 'pin_read'))
) STRICT;

-- The window walks a channel backwards by time (§3.8); ties break on id as
-- Mattermost's own paging does.
CREATE INDEX posts_by_channel_time ON posts (channel_id, created_at, id);
CREATE INDEX posts_pinned ON posts (channel_id) WHERE pinned = 1;

-- Files a post carried, by name, type and size; the bytes stay in Mattermost.
CREATE TABLE post_files (
    post_id   TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    file_id   TEXT NOT NULL,
    name      TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    size      INTEGER NOT NULL,
    PRIMARY KEY (post_id, file_id)
) STRICT;

-- Channel membership as last observed (§3.11, §8.2), so the turn path never
-- asks Mattermost who is present.
CREATE TABLE channel_members (
    channel_id  TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    username    TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('person', 'agent', 'system_bot', 'other_bot')),
    observed_at INTEGER NOT NULL,
    PRIMARY KEY (channel_id, user_id)
) STRICT;
