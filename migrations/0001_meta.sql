-- gpudash history database. Later migrations add the history tables.
CREATE TABLE IF NOT EXISTS gpudash_meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
INSERT OR IGNORE INTO gpudash_meta (key, value) VALUES ('created_by', 'gpudash');
