-- §8.5: each confirmation dialog `/collegium clear` opens, so a submission
-- counts once: a replayed one, or a cancelled one dressed as a confirmation,
-- finds its dialog already settled and changes nothing (§6.4).
CREATE TABLE clear_dialogs (
    nonce      TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL,
    invoker_id TEXT NOT NULL,
    memories   INTEGER NOT NULL CHECK (memories IN (0, 1)),
    opened_at  INTEGER NOT NULL,
    settled_at INTEGER
) STRICT;
