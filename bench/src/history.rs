//! History figures: SQLite growth per simulated day (the recorder driven with a synthetic clock
//! and value churn) and the render time of a 30-day chart.

use std::time::{Duration, Instant};

use app::model::ClusterView;
use gpudash::history::{charts, recorder::Recorder, retention, Config};

/// Records `hours` simulated hours of `view` at 10 s resolution, with memory use moving on every
/// node each tick and GPU allocation on a tenth of them; returns bytes per simulated day.
pub async fn growth_per_day(view: &ClusterView, hours: u64) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let pool = gpudash::db::open(&dir.path().join("h.db")).await?;
    let cfg = Config::default();
    let mut rec = Recorder::open(pool.clone(), cfg, 1).await?;
    let mut v = view.clone();
    let base = retention::used_bytes(&pool).await?;
    let ticks = hours * 360;
    for t in 0..ticks {
        for (i, n) in v.nodes.iter_mut().enumerate() {
            let n = std::sync::Arc::make_mut(n);
            n.memory.used_bytes = Some(n.memory.allocatable_bytes / 2 + (t * 7919 + i as u64 * 104_729) % (1 << 28));
            if (t as usize + i).is_multiple_of(10) {
                if let Some(g) = n.gpu_resources.first_mut() {
                    g.allocated = (g.allocated + 1) % (g.allocatable + 1);
                }
            }
        }
        rec.record(&v, 1_000_000 + (t as i64) * 10).await?;
    }
    let used = retention::used_bytes(&pool).await?;
    pool.close().await;
    Ok((used - base) as f64 * 24.0 / hours as f64)
}

/// Fills 30 days of one series (a change every 10 s, rolled up beyond 7 days as retention does)
/// and times the 30-day chart.
pub async fn chart_30d() -> anyhow::Result<Duration> {
    let dir = tempfile::tempdir()?;
    let pool = gpudash::db::open(&dir.path().join("h.db")).await?;
    let now = jiff::Timestamp::now().as_second();
    let start = now - 30 * 86_400;
    sqlx::query("INSERT INTO series (id, node, metric, resource) VALUES (1, 'n', 'gpu_allocated', 'nvidia.com/gpu'), (2, 'n', 'gpu_allocatable', 'nvidia.com/gpu'), (3, 'n', 'gpu_capacity', 'nvidia.com/gpu')").execute(&pool).await?;
    sqlx::query(
        "WITH RECURSIVE t(ts) AS (SELECT ?1 UNION ALL SELECT ts + 10 FROM t WHERE ts + 10 < ?2)
         INSERT INTO samples (series, ts, value) SELECT 1, ts, (ts / 10) % 5 FROM t",
    )
    .bind(start)
    .bind(now)
    .execute(&pool)
    .await?;
    sqlx::query("INSERT INTO samples (series, ts, value) VALUES (2, ?1, 4), (3, ?1, 4)")
        .bind(start)
        .execute(&pool)
        .await?;
    retention::prune(&pool, &Config::default(), now).await?;
    let t = Instant::now();
    let svg = charts::series_chart(
        &pool,
        "n · nvidia.com/gpu",
        charts::Unit::Count,
        "n",
        &[
            ("gpu_allocated", "nvidia.com/gpu", "allocated"),
            ("gpu_allocatable", "nvidia.com/gpu", "allocatable"),
            ("gpu_capacity", "nvidia.com/gpu", "capacity"),
        ],
        start,
        now,
        1200,
        true,
    )
    .await
    .map_err(|e| anyhow::anyhow!(e))?;
    let d = t.elapsed();
    anyhow::ensure!(svg.contains("allocated"), "chart is empty");
    Ok(d)
}

/// Prints the history figures.
pub async fn report() -> anyhow::Result<()> {
    let d = chart_30d().await?;
    println!("30-day chart (3 series, 7 days full resolution + rollups) render: {:.1} ms", d.as_secs_f64() * 1000.0);
    Ok(())
}
