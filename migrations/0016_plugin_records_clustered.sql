-- Plugin records (§3.14) stored in the order a query answers in. Under 0015
-- a query walked the (created_at, id) index and stepped from each entry to
-- its row in the table, whose rows lay in insertion order, interleaved with
-- every other plugin's; the contains scan spent most of its time on that
-- step (docs/benchmarks.md). A table WITHOUT ROWID is kept in its primary
-- key's order, so a query now reads one collection's rows in answer order,
-- side by side. The id stays unique within a collection through its own
-- index, which `create` relies on to refuse a taken id.
CREATE TABLE plugin_records_clustered (
    namespace  TEXT NOT NULL,
    collection TEXT NOT NULL,
    id         TEXT NOT NULL,
    -- The declared shape only, a JSON object held as SQLite's binary JSON
    -- (JSONB), so a query's json_extract reads a field without parsing the
    -- text of every row; `id`, `createdAt` and `updatedAt` are the columns
    -- here, stamped into what is returned.
    data       BLOB NOT NULL CHECK (json_type(data) = 'object'),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, collection, created_at, id)
) WITHOUT ROWID;

INSERT INTO plugin_records_clustered (namespace, collection, id, data, created_at, updated_at)
    SELECT namespace, collection, id, data, created_at, updated_at FROM plugin_records;

DROP TABLE plugin_records;
ALTER TABLE plugin_records_clustered RENAME TO plugin_records;

CREATE UNIQUE INDEX plugin_records_id ON plugin_records (namespace, collection, id);
