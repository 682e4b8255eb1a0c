//! Retention: full resolution for a window, then rollups (min/avg/max per bucket), everything
//! dropped after the keep period, and a hard size cap. Runs in small transactions in the
//! background; the live view never waits on it.

use sqlx::SqlitePool;

use super::Config;

/// What one pruning pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Samples folded into rollups.
    pub rolled_up: u64,
    /// Rows removed for age.
    pub expired: u64,
    /// Rows removed to stay under the size cap.
    pub capped: u64,
}

/// The database's used size (pages in use × page size).
pub async fn used_bytes(pool: &SqlitePool) -> Result<u64, sqlx::Error> {
    let (pages,): (i64,) = sqlx::query_as("PRAGMA page_count").fetch_one(pool).await?;
    let (free,): (i64,) = sqlx::query_as("PRAGMA freelist_count").fetch_one(pool).await?;
    let (size,): (i64,) = sqlx::query_as("PRAGMA page_size").fetch_one(pool).await?;
    Ok(u64::try_from((pages - free) * size).unwrap_or(0))
}

/// One pass at `now`.
pub async fn prune(pool: &SqlitePool, cfg: &Config, now: i64) -> Result<Pruned, sqlx::Error> {
    let mut done = Pruned::default();
    // The GPUs' busy % per hour first, while the samples are still at full resolution.
    super::report::sum_busy_hours(pool, now).await?;
    let cutoff = now - cfg.full_window.as_secs() as i64;
    let width = cfg.rollup_width.as_secs().max(1) as i64;
    // Only whole buckets are rolled up, so a bucket is never split between samples and rollups.
    let cutoff = cutoff - cutoff.rem_euclid(width);
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO rollups (series, bucket, width, min, avg, max, n)
         SELECT series, (ts / ?1) * ?1, ?1, MIN(value), AVG(value), MAX(value), COUNT(*) FROM samples WHERE ts < ?2 GROUP BY series, ts / ?1
         ON CONFLICT (series, bucket) DO UPDATE SET
           min = MIN(rollups.min, excluded.min), max = MAX(rollups.max, excluded.max),
           avg = (rollups.avg * rollups.n + excluded.avg * excluded.n) / (rollups.n + excluded.n), n = rollups.n + excluded.n",
    )
    .bind(width)
    .bind(cutoff)
    .execute(&mut *tx)
    .await?;
    done.rolled_up =
        sqlx::query("DELETE FROM samples WHERE ts < ?").bind(cutoff).execute(&mut *tx).await?.rows_affected();
    tx.commit().await?;
    let keep_from = now - cfg.keep.as_secs() as i64;
    let mut tx = pool.begin().await?;
    for sql in [
        "DELETE FROM rollups WHERE bucket < ?",
        "DELETE FROM busy_hours WHERE hour < ?",
        "DELETE FROM series_stops WHERE ts < ?",
        "DELETE FROM pod_intervals WHERE end IS NOT NULL AND end < ?",
        "DELETE FROM diagnosis_events WHERE cleared IS NOT NULL AND cleared < ?",
        "DELETE FROM gaps WHERE end IS NOT NULL AND end < ?",
    ] {
        done.expired += sqlx::query(sql).bind(keep_from).execute(&mut *tx).await?.rows_affected();
    }
    tx.commit().await?;
    // Size cap: drop the oldest tenth of the history until under it.
    for _ in 0..20 {
        if used_bytes(pool).await? <= cfg.max_bytes {
            break;
        }
        let oldest: Option<(Option<i64>, Option<i64>)> =
            sqlx::query_as("SELECT (SELECT MIN(bucket) FROM rollups), (SELECT MIN(ts) FROM samples)")
                .fetch_optional(pool)
                .await?;
        let Some((r, s)) = oldest else { break };
        let start = match (r, s) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(x) => x,
                None => break,
            },
        };
        let cut = start + (now - start).max(10) / 10;
        let mut tx = pool.begin().await?;
        for sql in [
            "DELETE FROM rollups WHERE bucket < ?",
            "DELETE FROM busy_hours WHERE hour < ?",
            "DELETE FROM samples WHERE ts < ?",
            "DELETE FROM series_stops WHERE ts < ?",
            "DELETE FROM pod_intervals WHERE end IS NOT NULL AND end < ?",
            "DELETE FROM diagnosis_events WHERE cleared IS NOT NULL AND cleared < ?",
        ] {
            done.capped += sqlx::query(sql).bind(cut).execute(&mut *tx).await?.rows_affected();
        }
        tx.commit().await?;
    }
    Ok(done)
}

/// One pruning pass that reports to its own health slot: a failure sets it, a success clears
/// it (and no other writer's problem).
pub async fn prune_reporting(pool: &SqlitePool, cfg: &Config, now: i64, health: &super::Health) {
    match prune(pool, cfg, now).await {
        Ok(p) => {
            tracing::debug!(?p, "history pruned");
            health.set(super::Writer::Retention, None);
        }
        Err(e) => {
            health.set(super::Writer::Retention, Some(crate::error::logged("history pruning failing; will retry", &e)));
        }
    }
}

/// Prunes shortly after start and then every ten minutes, until `shutdown` is set.
pub async fn run(
    pool: SqlitePool,
    cfg: Config,
    health: std::sync::Arc<super::Health>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mut wait = std::time::Duration::from_secs(30);
    loop {
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
        prune_reporting(&pool, &cfg, jiff::Timestamp::now().as_second(), &health).await;
        wait = std::time::Duration::from_secs(600);
    }
}
