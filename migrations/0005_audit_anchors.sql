-- Each call's place in its worker's audit log (ARCHITECTURE §4): the line's
-- sequence number and hash, as the worker returned them. An anchor outside
-- the file, so `collegium audit verify FILE --store STORE` finds lines cut
-- off the end and an edited last line, which the chain alone cannot show.
CREATE TABLE audit_anchors (
    worker      TEXT NOT NULL,     -- the worker's namespace, as its log names it
    seq         INTEGER NOT NULL,
    hash        TEXT NOT NULL,
    call_id     TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (worker, seq)
) STRICT;
