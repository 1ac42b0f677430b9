-- What waits on people and on lanes (§3.7, §3.7a, §5.2, §8.4).

-- Approvals, extension prompts and questions, with their decisions. No
-- timeout: a row stays undecided until a person answers or a stop, a kill, a
-- halt or a restart invalidates it.
CREATE TABLE decisions (
    id             TEXT PRIMARY KEY,
    turn_id        TEXT NOT NULL REFERENCES turns (id),
    call_id        TEXT,
    agent          TEXT NOT NULL,
    channel_id     TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('approval', 'extension', 'ask')),
    tool           TEXT,
    payload        TEXT NOT NULL,     -- exactly what the person was shown
    prompt_post_id TEXT,
    requested_at   INTEGER NOT NULL,
    outcome        TEXT CHECK (outcome IN ('approved', 'denied', 'denied_with_reason', 'answered',
                                           'cancelled', 'invalidated')),
    decided_by     TEXT,
    decided_at     INTEGER,
    reason         TEXT               -- a denial's reason or a question's answer
) STRICT;

-- Only one prompt is ever live for an agent in a channel (§5.1); two
-- concurrent clicks record one decision because the update is conditional.
CREATE UNIQUE INDEX decisions_one_live_per_lane ON decisions (agent, channel_id) WHERE outcome IS NULL;

-- The queue holds post ids, never content (§5.2). A row a turn has taken is
-- marked with it, so a non-progress exit can return it.
CREATE TABLE queue (
    agent      TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    post_id    TEXT NOT NULL,
    queued_at  INTEGER NOT NULL,
    taken_by   TEXT,
    PRIMARY KEY (agent, channel_id, post_id)
) STRICT;

-- Manual episode boundaries (/collegium reset, §3.8).
CREATE TABLE episode_boundaries (
    agent      TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    at         INTEGER NOT NULL,
    set_by     TEXT NOT NULL,
    PRIMARY KEY (agent, channel_id, at)
) STRICT;
