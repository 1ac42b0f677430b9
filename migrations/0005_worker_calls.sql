-- Every call sent to a worker (ARCHITECTURE §4). A row is written before the
-- call is sent, so a call that may have acted is never forgotten: one left
-- without an outcome by a crash is side-effect ambiguity at the next boot
-- unless its tool is retryable (§7.1). The audit columns are the line the
-- worker wrote for it, an anchor outside the worker's log, so
-- `collegium audit verify FILE --store STORE` finds lines cut off the end and
-- an edited last line, which the chain alone cannot show.
CREATE TABLE worker_calls (
    call_id          TEXT PRIMARY KEY,
    turn_id          TEXT NOT NULL,
    agent            TEXT NOT NULL,
    worker           TEXT NOT NULL,      -- the namespace, as the worker's log names it
    tool             TEXT NOT NULL,      -- namespace::tool
    arguments_sha256 TEXT NOT NULL,
    decision_id      TEXT,               -- the approval that let a gated call through
    retryable        INTEGER NOT NULL CHECK (retryable IN (0, 1)),
    dispatched_at    INTEGER NOT NULL,
    ended_at         INTEGER,
    outcome          TEXT CHECK (outcome IN ('success', 'refusal', 'invalid_arguments', 'unresolved',
                                             'failure', 'not_sent', 'ambiguous', 'lost')),
    audit_seq        INTEGER,
    audit_hash       TEXT
) STRICT;
-- Not unique: a worker whose log was moved aside starts a new chain at line
-- 1, and a finished call is never lost to a clash with the old one. The
-- latest anchor is the one recorded last.
CREATE INDEX worker_calls_by_worker ON worker_calls (worker, ended_at);
