-- Each GPU's busy % summed per hour, for reports longer than two days: a month reads 720 rows a
-- GPU instead of every sample (docs/benchmarks.md). Filled from `samples` (or from `rollups`,
-- for hours retention rolled up first) for every whole hour before the watermark
-- `busy_hours_until` (Unix seconds) in gpudash_meta; a report reads the hours after it from the
-- samples and rollups themselves. Pruned with the rollups.
CREATE TABLE busy_hours (
    series INTEGER NOT NULL REFERENCES series(id),
    hour   INTEGER NOT NULL,          -- hour start
    sum    REAL NOT NULL,             -- sum of the busy % samples in it
    n      INTEGER NOT NULL,          -- how many
    PRIMARY KEY (series, hour)
) WITHOUT ROWID;
INSERT OR IGNORE INTO gpudash_meta (key, value) VALUES ('busy_hours_until', '0');
