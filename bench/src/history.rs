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
    // The first tick writes every series once and opens every pod's interval: not growth.
    rec.record(&v, 1_000_000).await?;
    let base = retention::used_bytes(&pool).await?;
    let ticks = hours * 360;
    for t in 1..=ticks {
        churn(&mut v, t);
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
    sqlx::query("INSERT INTO series (id, node, metric, resource) VALUES (1, 'n', 'gpu_allocated', 'nvidia.com/gpu'), (2, 'n', 'gpu_allocatable', \
        'nvidia.com/gpu'), (3, 'n', 'gpu_capacity', 'nvidia.com/gpu')").execute(&pool).await?;
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

/// Writes the month of history [`report_30d`] reads: pod intervals, waits, busy series with a
/// sample a minute, and an hour's gap.
async fn fill_month(pool: &sqlx::SqlitePool, nodes: i64, start: i64, now: i64) -> anyhow::Result<()> {
    fill(pool, nodes, (start, now), 4, 60).await
}

/// History of `nodes` nodes over `[start, now)`: 30 pods a node each replaced every week and a
/// half (`replacements` intervals each), four of them holding a quarter GPU; 20 Pending waits a
/// day; each GPU's busy % on 100 agent nodes every `step` seconds; an hour's gap.
pub async fn fill(
    pool: &sqlx::SqlitePool,
    nodes: i64,
    (start, now): (i64, i64),
    replacements: i64,
    step: i64,
) -> anyhow::Result<()> {
    let week = 7 * 86_400 + 43_200;
    let days = (now - start) / 86_400;
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?1),
                       p(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM p WHERE j + 1 < 30),
                       k(w) AS (SELECT 0 UNION ALL SELECT w + 1 FROM k WHERE w + 1 < ?4)
         INSERT INTO pod_intervals (namespace, name, state, node, gpu_resource, gpu_count, start, end, workload, gpu_share, mem_request_bytes, unified)
         SELECT 'ns-' || (j % 7), printf('p-%04d-%02d-%d', i, j, w), 'running', printf('node-%04d', i),
                CASE WHEN j < 4 THEN 'nvidia.com/gpu' END, CASE WHEN j < 4 THEN 1 END,
                ?2 + w * ?3, CASE WHEN w < ?4 - 1 THEN ?2 + (w + 1) * ?3 END,
                printf('Deployment/m-%d', j), CASE WHEN j < 4 THEN 0.25 END, 1073741824, 1
         FROM n, p, k",
    )
    .bind(nodes)
    .bind(start)
    .bind(week)
    .bind(replacements)
    .execute(pool)
    .await?;
    sqlx::query(
        "WITH RECURSIVE d(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM d WHERE x + 1 < ?2),
                       q(y) AS (SELECT 0 UNION ALL SELECT y + 1 FROM q WHERE y + 1 < 20)
         INSERT INTO pod_intervals (namespace, name, state, gpu_resource, gpu_count, start, end, workload)
         SELECT 'ml', printf('waiting-%d-%d', x, y), 'pending', 'nvidia.com/gpu', 1,
                ?1 + x * 86400 + y * 600, ?1 + x * 86400 + y * 600 + 7200, 'Deployment/waiting'
         FROM d, q",
    )
    .bind(start)
    .bind(days)
    .execute(pool)
    .await?;
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 100)
         INSERT INTO series (id, node, metric, resource) SELECT i + 1, printf('node-%04d', i * 10), 'gpu_busy', 'nvidia.com/gpu|gpu0' FROM n",
    )
    .execute(pool)
    .await?;
    sqlx::query(
        "WITH RECURSIVE t(ts) AS (SELECT ?1 UNION ALL SELECT ts + ?3 FROM t WHERE ts + ?3 < ?2)
         INSERT INTO samples (series, ts, value) SELECT s.id, ts, (ts / 60 + s.id) % 100 FROM t, series s",
    )
    .bind(start)
    .bind(now)
    .bind(step)
    .execute(pool)
    .await?;
    sqlx::query("INSERT INTO gaps (start, end, reason) VALUES (?1, ?1 + 3600, 'gpudash not running')")
        .bind(start + 10 * 86_400)
        .execute(pool)
        .await?;
    Ok(())
}

/// Fills 30 days of a 1,000-node site's history — 30 pods a node, each replaced weekly (four
/// intervals), four of them holding a quarter GPU; 20 Pending waits a day; each GPU's busy %
/// on 100 agent nodes every minute (rolled up beyond 7 days as retention does); an hour's gap
/// — and times the 30-day GPU-hours report per namespace and per pod.
pub async fn report_30d(nodes: i64) -> anyhow::Result<(Duration, Duration, usize)> {
    let dir = tempfile::tempdir()?;
    let pool = gpudash::db::open(&dir.path().join("h.db")).await?;
    let now = jiff::Timestamp::now().as_second();
    let start = now - 30 * 86_400;
    fill_month(&pool, nodes, start, now).await?;
    // Retention's pass: rolls the samples beyond 7 days up and (the first time, for the whole
    // month) sums each GPU's busy % per hour, as it does every ten minutes for the last hour.
    let t = Instant::now();
    retention::prune(&pool, &Config::default(), now).await?;
    let first_pass = t.elapsed();
    let t = Instant::now();
    gpudash::history::report::sum_busy_hours(&pool, now + 3600).await?;
    let next_hour = t.elapsed();
    println!(
        "retention, first pass (rollups and 30 days of hourly busy sums): {:.0} ms; the next hour's sums: {:.1} ms",
        first_pass.as_secs_f64() * 1000.0,
        next_hour.as_secs_f64() * 1000.0
    );
    let cfg = Config::default();
    let max_step =
        ((cfg.heartbeat.as_secs() + 2 * cfg.resolution.as_secs()) as i64).max(2 * cfg.rollup_width.as_secs() as i64);
    use gpudash::history::report::{report, By};
    // The benchmark times the whole computation: a deadline it does not meet.
    let deadline = Instant::now() + std::time::Duration::from_secs(3600);
    let t = Instant::now();
    let by_ns = report(&pool, start, now, now, By::Namespace, 0, max_step, deadline).await?;
    let ns = t.elapsed();
    let t = Instant::now();
    let by_pod = report(&pool, start, now, now, By::Pod, 0, max_step, deadline).await?;
    let pods = t.elapsed();
    anyhow::ensure!(
        by_ns.rows.len() == 8 && by_ns.totals.used_gpu_seconds.is_some(),
        "unexpected report: {:?}",
        by_ns.rows.len()
    );
    Ok((ns, pods, by_pod.rows.len()))
}

/// Prints the history figures.
pub async fn report() -> anyhow::Result<()> {
    let d = chart_30d().await?;
    println!("30-day chart (3 series, 7 days full resolution + rollups) render: {:.1} ms", d.as_secs_f64() * 1000.0);
    let (ns, pods, rows) = report_30d(1000).await?;
    println!(
        "30-day GPU-hours report, 1,000 nodes (120,000 pod intervals, 600 waits, 100 busy series): by namespace {:.0} ms, by pod {:.0} ms ({rows} rows)",
        ns.as_secs_f64() * 1000.0,
        pods.as_secs_f64() * 1000.0
    );
    Ok(())
}

/// `gpudash-bench --history-month N`: what 30 days of an N-node site's history take on disk.
/// The generated cluster (as `--derive` makes it) is derived in process and recorded for
/// `hours` simulated hours at the default 10 s resolution with the same churn as
/// [`growth_per_day`]; then retention rolls all of it up as it does past the full-resolution
/// window. 30 days = what stays (series, intervals) + 7 days at full resolution + 23 rolled up.
pub async fn month(nodes: usize, hours: u64) -> anyhow::Result<()> {
    use gpudash::derive::{derive_cached, Cache, Inputs, Options};
    let generated = crate::cluster::generate(nodes, 30);
    let o = &generated.objects;
    let inputs = Inputs {
        nodes: crate::derive::decode(o, "Node"),
        pods: crate::derive::decode(o, "Pod"),
        events: crate::derive::decode(o, "Event"),
        ..Inputs::default()
    };
    let source = app::model::Source { synced: true, ..app::model::Source::default() };
    let view = derive_cached(&inputs, &Options::default(), source, 1, jiff::Timestamp::now(), &mut Cache::default());
    let series = gpudash::history::recorder::values(&view).len();
    let dir = tempfile::tempdir()?;
    let pool = gpudash::db::open(&dir.path().join("h.db")).await?;
    let cfg = Config::default();
    let base = retention::used_bytes(&pool).await?;
    let t0 = 1_000_000i64;
    let mut rec = Recorder::open(pool.clone(), cfg, t0).await?;
    let mut v = view.clone();
    let ticks = hours * 360;
    let started = Instant::now();
    // The first tick writes every series once and opens every pod's interval: what stays.
    rec.record(&v, t0).await?;
    let first = retention::used_bytes(&pool).await?;
    // Up to and including the tick `hours` after the first, so the window holds `hours` of
    // every periodic write (heartbeats included), no more and no less.
    for t in 1..=ticks {
        churn(&mut v, t);
        rec.record(&v, t0 + (t as i64) * 10).await?;
    }
    let recorded = started.elapsed();
    let full = retention::used_bytes(&pool).await?;
    let (samples,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM samples").fetch_one(&pool).await?;
    let end = t0 + (ticks as i64) * 10 + 600;
    let all_rolled = Config { full_window: Duration::ZERO, ..cfg };
    retention::prune(&pool, &all_rolled, end).await?;
    let rolled = retention::used_bytes(&pool).await?;
    let (rollups,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM rollups").fetch_one(&pool).await?;
    pool.close().await;
    let mib = |b: f64| b / 1_048_576.0;
    let per_day = |b: u64| b.saturating_sub(first) as f64 * 24.0 / hours as f64;
    let (full_day, rolled_day) = (per_day(full), per_day(rolled));
    let stays = first.saturating_sub(base) as f64;
    let month = stays + 7.0 * full_day + 23.0 * rolled_day;
    println!(
        "history, {nodes} nodes ({series} series, {} pods), {hours} simulated hours recorded in {:.1} s:",
        view.nodes.iter().map(|n| n.pods.len()).sum::<usize>(),
        recorded.as_secs_f64()
    );
    println!(
        "  full resolution: {:.1} MiB a day ({samples} samples in {hours} h); rolled up: {:.1} MiB a day ({rollups} rollups); \
         series and intervals: {:.1} MiB",
        mib(full_day),
        mib(rolled_day),
        mib(stays)
    );
    println!("  30 days (7 at full resolution, 23 rolled up): {:.0} MiB", mib(month));
    Ok(())
}

/// The bench's value churn at tick `t`: every node's memory use moves, and GPU allocation on a
/// tenth of the nodes.
fn churn(v: &mut ClusterView, t: u64) {
    for (i, n) in v.nodes.iter_mut().enumerate() {
        let n = std::sync::Arc::make_mut(n);
        n.memory.used_bytes = Some(n.memory.allocatable_bytes / 2 + (t * 7919 + i as u64 * 104_729) % (1 << 28));
        if (t as usize + i).is_multiple_of(10) {
            if let Some(g) = n.gpu_resources.first_mut() {
                g.allocated = (g.allocated + 1) % (g.allocatable + 1);
            }
        }
    }
}
