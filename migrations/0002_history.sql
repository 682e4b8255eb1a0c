-- Allocation history. Time is Unix seconds (UTC).
-- Series are change-based: a sample is written when a value changes, and at least every
-- heartbeat, so a flat line costs little. Missing time is recorded in `gaps`, never as zeros.
CREATE TABLE series (
    id       INTEGER PRIMARY KEY,
    node     TEXT NOT NULL,
    metric   TEXT NOT NULL,           -- gpu_capacity, gpu_allocatable, gpu_allocated, gpu_holders,
                                      -- mem_requests, mem_limits, mem_used, mem_allocatable, pending
    resource TEXT NOT NULL DEFAULT '',
    UNIQUE (node, metric, resource)
);
-- Clustered on (series, ts): no rowid, no second index; pruning by time scans, which is cheap
-- every ten minutes and keeps the per-sample cost to the three values.
CREATE TABLE samples (
    series INTEGER NOT NULL REFERENCES series(id),
    ts     INTEGER NOT NULL,
    value  REAL NOT NULL,
    PRIMARY KEY (series, ts)
) WITHOUT ROWID;
-- Downsampled history beyond the full-resolution window.
CREATE TABLE rollups (
    series INTEGER NOT NULL REFERENCES series(id),
    bucket INTEGER NOT NULL,          -- bucket start
    width  INTEGER NOT NULL,          -- seconds
    min    REAL NOT NULL,
    avg    REAL NOT NULL,
    max    REAL NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (series, bucket)
);
CREATE INDEX rollups_by_time ON rollups (bucket);
-- Intervals with no data: gpudash down, or the cluster watch stale.
CREATE TABLE gaps (
    id     INTEGER PRIMARY KEY,
    start  INTEGER NOT NULL,
    end    INTEGER,                   -- NULL while open
    reason TEXT NOT NULL
);
-- Pod lifecycle: pending and running intervals.
CREATE TABLE pod_intervals (
    id           INTEGER PRIMARY KEY,
    namespace    TEXT NOT NULL,
    name         TEXT NOT NULL,
    state        TEXT NOT NULL,       -- pending | running
    node         TEXT,
    gpu_resource TEXT,
    gpu_count    INTEGER,
    reasons      TEXT,                -- pending: the normalised reasons seen, '; '-joined
    start        INTEGER NOT NULL,
    end          INTEGER,             -- NULL while open
    end_known    INTEGER NOT NULL DEFAULT 1  -- 0 when it ended while gpudash was not watching
);
CREATE INDEX pod_intervals_by_pod ON pod_intervals (namespace, name, start);
CREATE INDEX pod_intervals_by_time ON pod_intervals (start);
CREATE TABLE diagnosis_events (
    id        INTEGER PRIMARY KEY,
    code      TEXT NOT NULL,
    severity  TEXT NOT NULL,
    kind      TEXT NOT NULL,
    namespace TEXT,
    name      TEXT NOT NULL,
    message   TEXT NOT NULL,
    raised    INTEGER NOT NULL,
    cleared   INTEGER
);
CREATE INDEX diagnosis_events_by_time ON diagnosis_events (raised);
-- The recorder's heartbeat: the last time a batch was committed.
INSERT OR IGNORE INTO gpudash_meta (key, value) VALUES ('heartbeat', '0');
