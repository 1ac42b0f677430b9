-- Search over posts and forgetting a post (§3.8, §8.4).

-- A post forgotten by /collegium forget (§8.4): absent from the window, from
-- search and from conversations::read, as though never written. The text
-- stays, since forgetting hides from agents rather than redacting the record.
ALTER TABLE posts ADD COLUMN forgotten_at INTEGER;

-- conversations::search is a case-insensitive substring over post text
-- (§3.8). The trigram tokenizer indexes every three-character sequence, so a
-- phrase of three or more characters is found anywhere in a word, folded for
-- case (case_sensitive 0 is the default, stated here so it is not changed by
-- accident). External content: the text lives once, in posts, and the index
-- is keyed by the post's rowid. Only the roles search may return are indexed
-- — posts, replies and work-unit posts; never status posts, notices or
-- approval prompts — so the index cannot hand back what search must not.
-- The store never runs VACUUM, which may renumber the rowids of a table
-- without an INTEGER PRIMARY KEY; one that does must rebuild the index
-- afterwards (docs/search.md).
CREATE VIRTUAL TABLE posts_fts USING fts5 (
    message,
    content = 'posts',
    content_rowid = 'rowid',
    tokenize = 'trigram case_sensitive 0'
);

INSERT INTO posts_fts (rowid, message)
    SELECT rowid, message FROM posts WHERE role IN ('post', 'reply', 'unit_post');

CREATE TRIGGER posts_fts_insert AFTER INSERT ON posts
WHEN new.role IN ('post', 'reply', 'unit_post')
BEGIN
    INSERT INTO posts_fts (rowid, message) VALUES (new.rowid, new.message);
END;

CREATE TRIGGER posts_fts_delete AFTER DELETE ON posts
WHEN old.role IN ('post', 'reply', 'unit_post')
BEGIN
    INSERT INTO posts_fts (posts_fts, rowid, message) VALUES ('delete', old.rowid, old.message);
END;

-- A pinned post's edit is followed (§8.2), so the index follows it too. One
-- trigger, so the old text leaves the index before the new enters.
CREATE TRIGGER posts_fts_update AFTER UPDATE OF message, role ON posts
BEGIN
    INSERT INTO posts_fts (posts_fts, rowid, message)
        SELECT 'delete', old.rowid, old.message
        WHERE old.role IN ('post', 'reply', 'unit_post');
    INSERT INTO posts_fts (rowid, message)
        SELECT new.rowid, new.message
        WHERE new.role IN ('post', 'reply', 'unit_post');
END;

-- Episode boundaries are 0003's episode_boundaries (agent, channel, at, set_by);
-- the latest per agent and channel is the one in force (§3.8).
