-- Turns and their trace (§8.2, §8.3).

-- One row per turn: what started it, its place in a chain (§7.4), what it
-- cost, and the context it last assembled. Usage is written after each
-- completion, so an abandoned turn still counts what it spent.
CREATE TABLE turns (
    id                     TEXT PRIMARY KEY,
    agent                  TEXT NOT NULL,
    channel_id             TEXT NOT NULL,
    boot_id                TEXT NOT NULL,      -- the process that ran it (§7.3)
    started_at             INTEGER NOT NULL,
    ended_at               INTEGER,
    exit_kind              TEXT,               -- the §7.1 row it ended on; NULL while running
    ended_by               TEXT,               -- the person whose command or denial ended it
    cause                  TEXT NOT NULL
                           CHECK (cause IN ('post', 'drain', 'handoff', 'trigger', 'reconnect', 'sweep')),
    answers_post_id        TEXT,               -- the post it answers (§5.2)
    drain_from_post_id     TEXT,               -- the post a drain began from
    trigger_id             TEXT,
    depth                  INTEGER NOT NULL,   -- never shown to the model (§7.4)
    chain_root             TEXT NOT NULL,
    chain_length           INTEGER NOT NULL,
    action_count           INTEGER NOT NULL DEFAULT 0,
    steered                INTEGER NOT NULL DEFAULT 0 CHECK (steered IN (0, 1)),
    model                  TEXT NOT NULL,
    prompt_tokens          INTEGER NOT NULL DEFAULT 0,
    cached_prompt_tokens   INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens      INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens       INTEGER NOT NULL DEFAULT 0,
    cost_micro_usd         INTEGER,            -- as the provider reported it, where it does
    context_assembled_at   INTEGER,
    context_reach_post_id  TEXT,               -- how far back the window reached
    context_charged_tokens INTEGER,            -- what the budget charged for it
    status_post_id         TEXT
) STRICT;

-- The hourly ceiling counts turn starts over the trailing hour (§7.4); a clear
-- keeps turn records, so it never resets the count.
CREATE INDEX turns_by_start ON turns (started_at);
CREATE INDEX turns_by_lane ON turns (agent, channel_id, started_at);
CREATE INDEX turns_by_root ON turns (chain_root);

-- The posts a turn answers (§5.2), and how each came to it.
CREATE TABLE turn_answers (
    turn_id TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    post_id TEXT NOT NULL,
    how     TEXT NOT NULL CHECK (how IN ('start', 'debounce', 'queue', 'fold', 'handoff')),
    PRIMARY KEY (turn_id, post_id)
) STRICT;

-- The turn's own trace, in order: completions with the provider's report and
-- upstream, calls, results with how the model read them, rejected posts with
-- their reasons, steers and folds. Reasoning is kept beside its completion and
-- handed back to the provider only (§3.12).
CREATE TABLE turn_events (
    id        INTEGER PRIMARY KEY,
    turn_id   TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    at        INTEGER NOT NULL,
    kind      TEXT NOT NULL
              CHECK (kind IN ('completion', 'call', 'result', 'rejected_post', 'steer', 'fold', 'note')),
    call_id   TEXT,
    tool      TEXT,
    arguments TEXT,       -- the exact argument bytes a call carried
    content   TEXT,       -- completion text, result text, rejected text, steer text
    reasoning TEXT,       -- private (§3.12)
    detail    TEXT,       -- JSON: usage and upstream, estimates, dispositions, reasons
    UNIQUE (turn_id, seq)
) STRICT;
CREATE INDEX turn_events_by_call ON turn_events (call_id) WHERE call_id IS NOT NULL;
