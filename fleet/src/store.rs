//! The fleet's history in PostgreSQL (sqlx, one pool, `migrations-fleet/`): per site, the series
//! the site records itself plus its totals, written on change and at least every heartbeat while
//! the site is live; time a site is not live (or the fleet service is not running) is a gap.

use std::collections::HashMap;

use app::model::ClusterView;
use sqlx::PgPool;

use gpudash_web::series::Config;
use gpudash_web::series::Point;

/// (site, node, metric, resource).
type Key = (String, String, String, String);

/// Opens the pool and brings the schema up to date.
pub async fn open(url: &str) -> Result<PgPool, sqlx::Error> {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(std::time::Duration::from_secs(10))
        .connect(url)
        .await?;
    sqlx::migrate!("../migrations-fleet").run(&pool).await?;
    Ok(pool)
}

/// The site totals recorded beside the site's own series (node `''`).
pub fn site_values(v: &ClusterView) -> Vec<(String, String, f64)> {
    let cap: u64 = v.nodes.iter().flat_map(|n| &n.gpu_resources).map(|g| g.capacity).sum();
    vec![
        ("site_nodes".into(), String::new(), f64::from(v.totals.nodes)),
        ("site_nodes_ready".into(), String::new(), f64::from(v.totals.ready_nodes)),
        ("site_gpu_capacity".into(), String::new(), cap as f64),
        ("site_gpu_allocated".into(), String::new(), v.totals.gpu_allocated as f64),
        ("site_pending".into(), String::new(), f64::from(v.totals.pending)),
        ("site_critical".into(), String::new(), f64::from(v.totals.critical)),
        ("site_warning".into(), String::new(), f64::from(v.totals.warnings)),
    ]
}

/// Writes samples and gaps.
pub struct Recorder {
    pool: PgPool,
    cfg: Config,
    sites: HashMap<String, i64>,
    series: HashMap<Key, i64>,
    last: HashMap<i64, (f64, i64)>,
    open_gaps: HashMap<i64, i64>,
}

impl Recorder {
    /// Starts recording: the time the fleet service was not running is a gap for every site
    /// (from its last sample), and gaps left open by the previous run are closed now.
    pub async fn open(pool: PgPool, cfg: Config, now: i64) -> Result<Self, sqlx::Error> {
        let mut tx = pool.begin().await?;
        sqlx::query(
            r#"INSERT INTO gaps (site, start, "end", reason)
               SELECT se.site, MAX(sa.ts), $1, 'fleet service not running' FROM samples sa JOIN series se ON se.id = sa.series
               GROUP BY se.site HAVING $1 - MAX(sa.ts) > $2"#,
        )
        .bind(now)
        .bind(i64::try_from(cfg.heartbeat.as_secs()).unwrap_or(300))
        .execute(&mut *tx)
        .await?;
        sqlx::query(r#"UPDATE gaps SET "end" = $1 WHERE "end" IS NULL"#).bind(now).execute(&mut *tx).await?;
        tx.commit().await?;
        let sites = sqlx::query_as::<_, (String, i64)>("SELECT name, id FROM sites").fetch_all(&pool).await?;
        let series = sqlx::query_as::<_, (String, String, String, String, i64)>(
            "SELECT s.name, se.node, se.metric, se.resource, se.id FROM series se JOIN sites s ON s.id = se.site",
        )
        .fetch_all(&pool)
        .await?;
        Ok(Self {
            pool,
            cfg,
            sites: sites.into_iter().collect(),
            series: series.into_iter().map(|(s, n, m, r, id)| ((s, n, m, r), id)).collect(),
            last: HashMap::new(),
            open_gaps: HashMap::new(),
        })
    }

    async fn site_id(&mut self, name: &str) -> Result<i64, sqlx::Error> {
        if let Some(id) = self.sites.get(name) {
            return Ok(*id);
        }
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO sites (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id",
        )
        .bind(name)
        .fetch_one(&self.pool)
        .await?;
        self.sites.insert(name.to_string(), id);
        Ok(id)
    }

    async fn series_id(&mut self, site: i64, key: &Key) -> Result<i64, sqlx::Error> {
        if let Some(id) = self.series.get(key) {
            return Ok(*id);
        }
        let (id,): (i64,) = sqlx::query_as(
            r#"INSERT INTO series (site, node, metric, resource) VALUES ($1, $2, $3, $4)
               ON CONFLICT (site, node, metric, resource) DO UPDATE SET metric = EXCLUDED.metric RETURNING id"#,
        )
        .bind(site)
        .bind(&key.1)
        .bind(&key.2)
        .bind(&key.3)
        .fetch_one(&self.pool)
        .await?;
        self.series.insert(key.clone(), id);
        Ok(id)
    }

    /// Records one tick: each site's view when it is live, a gap when it is not.
    pub async fn record(
        &mut self,
        sites: &[(String, Option<std::sync::Arc<ClusterView>>, bool)],
        now: i64,
    ) -> Result<(), sqlx::Error> {
        let hb = i64::try_from(self.cfg.heartbeat.as_secs()).unwrap_or(300);
        let (mut ids, mut tss, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        let mut gap_ops: Vec<(i64, bool)> = Vec::new();
        for (name, view, live) in sites {
            let site = self.site_id(name).await?;
            let Some(v) = view.as_ref().filter(|_| *live) else {
                if !self.open_gaps.contains_key(&site) {
                    gap_ops.push((site, true));
                }
                continue;
            };
            if self.open_gaps.contains_key(&site) {
                gap_ops.push((site, false));
            }
            // The site's own rules: memory and busy move by more than a deadband, else nothing.
            let deadbands = gpudash_core::series::deadbands(v);
            let own = gpudash_core::series::values(v).into_iter().map(|((n, m, r), x)| (n, m, r, x));
            let totals = site_values(v).into_iter().map(|(m, r, x)| (String::new(), m, r, x));
            for (node, metric, resource, x) in own.chain(totals) {
                let band = gpudash_core::series::band(&deadbands, &(node.clone(), metric.clone(), resource.clone()));
                let key = (name.clone(), node, metric, resource);
                let id = self.series_id(site, &key).await?;
                let due = match self.last.get(&id) {
                    Some((lv, lt)) => (lv - x).abs() > band.max(f64::EPSILON) || now - lt >= hb,
                    None => true,
                };
                if due {
                    ids.push(id);
                    tss.push(now);
                    vals.push(x);
                }
            }
        }
        let mut tx = self.pool.begin().await?;
        if !ids.is_empty() {
            sqlx::query(
                r#"INSERT INTO samples (series, ts, value) SELECT * FROM UNNEST($1::bigint[], $2::bigint[], $3::float8[])
                   ON CONFLICT (series, ts) DO UPDATE SET value = EXCLUDED.value"#,
            )
            .bind(&ids)
            .bind(&tss)
            .bind(&vals)
            .execute(&mut *tx)
            .await?;
        }
        let mut opened = Vec::new();
        for (site, open) in &gap_ops {
            if *open {
                let (id,): (i64,) = sqlx::query_as(
                    "INSERT INTO gaps (site, start, reason) VALUES ($1, $2, 'site not live (stale or unreachable)') RETURNING id",
                )
                .bind(site)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                opened.push((*site, id));
            } else if let Some(id) = self.open_gaps.get(site) {
                sqlx::query(r#"UPDATE gaps SET "end" = $1 WHERE id = $2"#).bind(now).bind(id).execute(&mut *tx).await?;
            }
        }
        tx.commit().await?;
        // Only once written does the in-memory state move on (a failed tick is retried whole).
        for ((id, t), x) in ids.into_iter().zip(tss).zip(vals) {
            self.last.insert(id, (x, t));
        }
        for (site, open) in gap_ops {
            if !open {
                self.open_gaps.remove(&site);
            }
        }
        self.open_gaps.extend(opened);
        Ok(())
    }

    /// Rolls samples older than the full-resolution window up into 10-minute buckets and drops
    /// what is older than the retention.
    pub async fn retain(&self, now: i64) -> Result<(), sqlx::Error> {
        let full = now - i64::try_from(self.cfg.full_window.as_secs()).unwrap_or(i64::MAX / 2);
        let keep = now - i64::try_from(self.cfg.keep.as_secs()).unwrap_or(i64::MAX / 2);
        let w = i64::try_from(self.cfg.rollup_width.as_secs()).unwrap_or(600).max(1);
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            r#"INSERT INTO rollups (series, bucket, width, min, avg, max, n)
               SELECT series, (ts / $2) * $2, $2, MIN(value), AVG(value), MAX(value), COUNT(*) FROM samples
               WHERE ts < $1 GROUP BY series, (ts / $2) * $2
               ON CONFLICT (series, bucket) DO UPDATE SET min = LEAST(rollups.min, EXCLUDED.min),
                 max = GREATEST(rollups.max, EXCLUDED.max),
                 avg = (rollups.avg * rollups.n + EXCLUDED.avg * EXCLUDED.n) / (rollups.n + EXCLUDED.n),
                 n = rollups.n + EXCLUDED.n"#,
        )
        .bind(full)
        .bind(w)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM samples WHERE ts < $1").bind(full).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM rollups WHERE bucket < $1").bind(keep).execute(&mut *tx).await?;
        sqlx::query(r#"DELETE FROM gaps WHERE "end" IS NOT NULL AND "end" < $1"#).bind(keep).execute(&mut *tx).await?;
        tx.commit().await
    }
}

/// Points of one site series in `[from, to]` (rollups, then samples, the value in force at
/// `from` first).
pub async fn points(
    pool: &PgPool,
    site: &str,
    node: &str,
    metric: &str,
    resource: &str,
    from: i64,
    to: i64,
) -> Result<Vec<Point>, sqlx::Error> {
    let rows: Vec<(i64, f64, Option<f64>, Option<f64>)> = sqlx::query_as(
        r#"WITH s AS (SELECT se.id FROM series se JOIN sites si ON si.id = se.site
                      WHERE si.name = $1 AND se.node = $2 AND se.metric = $3 AND se.resource = $4)
           (SELECT ts, value, NULL::float8, NULL::float8 FROM samples WHERE series IN (SELECT id FROM s) AND ts < $5 ORDER BY ts DESC LIMIT 1)
           UNION ALL
           SELECT bucket, avg, min, max FROM rollups WHERE series IN (SELECT id FROM s) AND bucket BETWEEN $5 AND $6
           UNION ALL
           SELECT ts, value, NULL, NULL FROM samples WHERE series IN (SELECT id FROM s) AND ts BETWEEN $5 AND $6
           ORDER BY 1"#,
    )
    .bind(site)
    .bind(node)
    .bind(metric)
    .bind(resource)
    .bind(from)
    .bind(to)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|(ts, value, min, max)| Point { ts, value, min, max }).collect())
}

/// A site's gaps overlapping `[from, to]`; an open gap ends at `to`.
pub async fn gaps(pool: &PgPool, site: &str, from: i64, to: i64) -> Result<Vec<(i64, i64, String)>, sqlx::Error> {
    let gaps: Vec<(i64, Option<i64>, String)> = sqlx::query_as(
        r#"SELECT g.start, g."end", g.reason FROM gaps g JOIN sites si ON si.id = g.site
           WHERE si.name = $1 AND g.start <= $3 AND (g."end" IS NULL OR g."end" >= $2) ORDER BY g.start"#,
    )
    .bind(site)
    .bind(from)
    .bind(to)
    .fetch_all(pool)
    .await?;
    Ok(gaps.into_iter().map(|(s, e, r)| (s, e.unwrap_or(to), r)).collect())
}

/// The database's size in bytes.
pub async fn size(pool: &PgPool) -> Result<i64, sqlx::Error> {
    let (n,): (i64,) = sqlx::query_as("SELECT pg_database_size(current_database())").fetch_one(pool).await?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn view(pending: u32) -> Arc<ClusterView> {
        let mut v = ClusterView { revision: 1, ..ClusterView::default() };
        v.totals.pending = pending;
        v.totals.nodes = 2;
        Arc::new(v)
    }

    async fn count(pool: &PgPool, sql: &'static str) -> i64 {
        sqlx::query_as::<_, (i64,)>(sql).fetch_one(pool).await.map(|r| r.0).unwrap_or(-1)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn samples_gaps_restarts_rollups_and_retention_on_a_real_postgres() {
        let pg = gpudash_tests::postgres::Postgres::start().unwrap();
        let pool = open(&pg.url).await.unwrap();
        let cfg = Config { heartbeat: std::time::Duration::from_secs(300), ..Config::default() };
        let t0 = 1_800_000_000;
        let mut r = Recorder::open(pool.clone(), cfg, t0).await.unwrap();
        let row = |p: u32, live: bool| vec![("s1".to_string(), Some(view(p)), live)];
        r.record(&row(1, true), t0).await.unwrap();
        r.record(&row(1, true), t0 + 10).await.unwrap();
        r.record(&row(2, true), t0 + 20).await.unwrap();
        let pts = points(&pool, "s1", "", "site_pending", "", t0 - 1, t0 + 100).await.unwrap_or_default();
        assert_eq!(
            pts.iter().map(|p| (p.ts, p.value)).collect::<Vec<_>>(),
            [(t0, 1.0), (t0 + 20, 2.0)],
            "on change only"
        );
        // Not live: a gap opens once, closes when it is live again; nothing is written meanwhile.
        r.record(&row(2, false), t0 + 30).await.unwrap();
        r.record(&row(9, false), t0 + 40).await.unwrap();
        r.record(&row(3, true), t0 + 50).await.unwrap();
        let pts = points(&pool, "s1", "", "site_pending", "", t0 - 1, t0 + 100).await.unwrap_or_default();
        let found = gaps(&pool, "s1", t0 - 1, t0 + 100).await.unwrap_or_default();
        assert_eq!(found.iter().map(|g| (g.0, g.1)).collect::<Vec<_>>(), [(t0 + 30, t0 + 50)]);
        assert!(pts.iter().all(|p| p.value != 9.0), "no value from while it was not live");
        // A restart an hour later: the downtime is a gap, the samples are all there.
        drop(r);
        let r = Recorder::open(pool.clone(), cfg, t0 + 3600).await.unwrap();
        let pts = points(&pool, "s1", "", "site_pending", "", t0 - 1, t0 + 4000).await.unwrap_or_default();
        let found = gaps(&pool, "s1", t0 - 1, t0 + 4000).await.unwrap_or_default();
        assert_eq!(pts.len(), 3);
        assert!(found.iter().any(|g| g.2 == "fleet service not running" && g.1 == t0 + 3600), "{found:?}");
        // Retention: samples beyond the full window become 10-minute rollups, then expire.
        let samples = count(&pool, "SELECT COUNT(*) FROM samples").await;
        assert!(samples > 0);
        r.retain(t0 + 8 * 86_400).await.unwrap();
        assert_eq!(count(&pool, "SELECT COUNT(*) FROM samples").await, 0);
        assert!(count(&pool, "SELECT COUNT(*) FROM rollups").await > 0);
        let pts = points(&pool, "s1", "", "site_pending", "", t0 - 1, t0 + 4000).await.unwrap_or_default();
        assert!(pts.iter().any(|p| p.max == Some(3.0) && p.min == Some(1.0)), "{pts:?}");
        r.retain(t0 + 100 * 86_400).await.unwrap();
        assert_eq!(count(&pool, "SELECT COUNT(*) FROM rollups").await, 0);
        assert!(size(&pool).await.unwrap_or(0) > 0);
    }
}
