-- History that lasts at a 1,000-node site (docs/benchmarks.md, "History at scale").
-- Rollups become a clustered table like `samples`: no rowid, no second index (retention prunes
-- them by time with a scan every ten minutes, as it does samples). Existing rows are kept.
CREATE TABLE rollups_new (
    series INTEGER NOT NULL REFERENCES series(id),
    bucket INTEGER NOT NULL,
    width  INTEGER NOT NULL,
    min    REAL NOT NULL,
    avg    REAL NOT NULL,
    max    REAL NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (series, bucket)
) WITHOUT ROWID;
INSERT INTO rollups_new SELECT series, bucket, width, min, avg, max, n FROM rollups;
DROP INDEX IF EXISTS rollups_by_time;
DROP TABLE rollups;
ALTER TABLE rollups_new RENAME TO rollups;
-- Where a series stopped being known while gpudash watched: its node was removed, its agent went
-- silent, its GPU resource was withdrawn. A value holds from its sample until the next sample, a
-- stop, a gap or (as a safety net) the heartbeat; so a flat line needs a sample only once an
-- hour, and a line that ends is never drawn on.
CREATE TABLE series_stops (
    series INTEGER NOT NULL REFERENCES series(id),
    ts     INTEGER NOT NULL,
    PRIMARY KEY (series, ts)
) WITHOUT ROWID;
