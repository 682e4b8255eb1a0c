-- The fleet service's history in PostgreSQL: per site, the same series each site records in
-- its own SQLite (see migrations/0002_history.sql), plus site totals. Time is Unix seconds
-- (UTC). Series are change-based (a sample when a value changes, and at least every
-- heartbeat); time a site was not live is a gap, never a zero.
CREATE TABLE sites (
    id   BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE series (
    id       BIGSERIAL PRIMARY KEY,
    site     BIGINT NOT NULL REFERENCES sites(id),
    node     TEXT NOT NULL,            -- '' for site-wide series
    metric   TEXT NOT NULL,            -- the site's metrics, and site_* totals
    resource TEXT NOT NULL DEFAULT '',
    UNIQUE (site, node, metric, resource)
);
CREATE TABLE samples (
    series BIGINT NOT NULL REFERENCES series(id),
    ts     BIGINT NOT NULL,
    value  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (series, ts)
);
CREATE INDEX samples_by_time ON samples (ts);
-- Downsampled history beyond the full-resolution window (10-minute min/avg/max).
CREATE TABLE rollups (
    series BIGINT NOT NULL REFERENCES series(id),
    bucket BIGINT NOT NULL,
    width  BIGINT NOT NULL,
    min    DOUBLE PRECISION NOT NULL,
    avg    DOUBLE PRECISION NOT NULL,
    max    DOUBLE PRECISION NOT NULL,
    n      BIGINT NOT NULL,
    PRIMARY KEY (series, bucket)
);
-- Intervals a site was not live (stale or unreachable), or the fleet service not running.
CREATE TABLE gaps (
    id     BIGSERIAL PRIMARY KEY,
    site   BIGINT NOT NULL REFERENCES sites(id),
    start  BIGINT NOT NULL,
    "end"  BIGINT,                    -- NULL while open
    reason TEXT NOT NULL
);
CREATE INDEX gaps_by_site ON gaps (site, start);
