-- Memory (§3.6): a per-agent store of entries, each a description (in
-- context on every turn) and a body (read on demand). `key` is random hex;
-- the reference an agent, the trace and an operator see is `m` and its first
-- six characters, fixed for the entry's life, and any longer prefix resolves
-- too. `revision` starts at 1 and moves by one on every revision, so a write
-- compares and swaps on it and two turns never lose each other's edits; the
-- count of revisions is `revision - 1`. The written-at date and the place in
-- the listing (the id's order) carry over a revision; the provenance columns
-- are the last writer's: its turn, channel and the post that turn answered.
CREATE TABLE memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent TEXT NOT NULL,
    key TEXT NOT NULL UNIQUE CHECK (length(key) = 16),
    description TEXT NOT NULL,
    body TEXT NOT NULL,
    written_at INTEGER NOT NULL,
    written_channel_id TEXT NOT NULL,
    written_post_id TEXT,
    revision INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1),
    last_revised_at INTEGER,
    provenance_turn_id TEXT NOT NULL,
    provenance_channel_id TEXT NOT NULL,
    provenance_post_id TEXT,
    -- Eviction takes the entry whose body was read longest ago (§3.6); a
    -- write counts as a read, so a new entry is not the next one out.
    last_read_at INTEGER NOT NULL
);
CREATE INDEX memories_by_agent ON memories (agent, id);
CREATE INDEX memories_by_read ON memories (agent, last_read_at, id);

-- What each turn has seen of an entry (§3.6): the revision it read, wrote,
-- rewrote, or revised from the revision it had seen. A delete or a rewrite
-- needs the current revision here. It ends with the turn: rows of ended
-- turns are pruned as new ones are recorded.
CREATE TABLE memory_seen (
    turn_id TEXT NOT NULL,
    memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    PRIMARY KEY (turn_id, memory_id)
);
CREATE INDEX memory_seen_by_memory ON memory_seen (memory_id);
