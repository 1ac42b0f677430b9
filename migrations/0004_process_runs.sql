-- Each run of the daemon, so the boot notice can state the downtime window
-- against the process, never against activity (§7.3): a clean stop records its
-- time, and a crash leaves the last liveness stamp.
CREATE TABLE process_runs (
    boot_id       TEXT PRIMARY KEY,
    version       TEXT NOT NULL,
    started_at    INTEGER NOT NULL,
    last_alive_at INTEGER NOT NULL,
    stopped_at    INTEGER
) STRICT;
CREATE INDEX process_runs_by_start ON process_runs (started_at);
