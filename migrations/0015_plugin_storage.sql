-- Plugin storage (§3.14): the records plugins keep in the framework's own
-- store, one table for every plugin, keyed by the namespace the connection
-- is bound to, the collection the plugin declared and the record's id. A
-- plugin owns no table and no migration: the shape of `data` is its
-- collection's JSON Schema, checked on every write and parsed on every read.
-- `/collegium clear` keeps these rows (§8.5): they are no channel's record.
CREATE TABLE plugin_records (
    namespace  TEXT NOT NULL,
    collection TEXT NOT NULL,
    id         TEXT NOT NULL,
    -- The declared shape only, a JSON object held as SQLite's binary JSON
    -- (JSONB), so a query's json_extract reads a field without parsing the
    -- text of every row (docs/benchmarks.md); `id`, `createdAt` and
    -- `updatedAt` are the columns here, stamped into what is returned.
    data       BLOB NOT NULL CHECK (json_type(data) = 'object'),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, collection, id)
);

-- Queries answer in (createdAt, id) order, deterministic for equal stamps.
CREATE INDEX plugin_records_order ON plugin_records (namespace, collection, created_at, id);
