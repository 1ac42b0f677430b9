-- Posts an abandoned turn returned to the queue after an unclean stop (§7.3).
-- Such a turn may be what took the process down, so each post is returned at
-- most once: a post already here is named in the boot notice instead.
CREATE TABLE crash_returns (
    post_id     TEXT PRIMARY KEY,
    returned_at INTEGER NOT NULL
) STRICT;
