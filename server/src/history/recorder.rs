//! The recorder: turns each view into change-based samples, pod intervals and diagnosis events,
//! one transaction per tick, and records gaps when gpudash was down or the watch was stale.

mod run;

use std::collections::{HashMap, HashSet};

use app::model::ClusterView;
use sqlx::{Sqlite, SqlitePool, Transaction};

use super::Config;
pub use run::run;

pub use gpudash_core::series::SeriesKey;
type PodKey = (String, String, &'static str);

/// What the recorder keeps between ticks (it mirrors the open rows in the database).
pub struct Recorder {
    pool: SqlitePool,
    cfg: Config,
    series: HashMap<SeriesKey, i64>,
    last: HashMap<i64, (f64, i64)>,
    open_pods: HashMap<PodKey, (i64, String)>,
    open_diags: HashMap<(String, String, String, String), i64>,
    stale_gap: Option<i64>,
}

/// What the recorder sees of one pod in one state.
#[derive(Default)]
struct Seen {
    node: Option<String>,
    gpu: Option<(String, u64)>,
    reasons: String,
    workload: Option<String>,
    share: Option<f64>,
    mem: Option<u64>,
    unified: Option<bool>,
}

pub use gpudash_core::series::{band, deadbands, gpu_share_of, gpu_share_per_unit, values};

async fn heartbeat(pool: &SqlitePool) -> Result<i64, sqlx::Error> {
    let v: Option<(String,)> =
        sqlx::query_as("SELECT value FROM gpudash_meta WHERE key = 'heartbeat'").fetch_optional(pool).await?;
    Ok(v.and_then(|(s,)| s.parse().ok()).unwrap_or(0))
}

impl Recorder {
    /// Opens the recorder: records the downtime since the last heartbeat as a gap and closes
    /// what was left open (its end is not known).
    pub async fn open(pool: SqlitePool, cfg: Config, now: i64) -> Result<Self, sqlx::Error> {
        let hb = heartbeat(&pool).await?;
        let mut tx = pool.begin().await?;
        let closed_at = if hb > 0 { hb } else { now };
        sqlx::query("UPDATE gaps SET end = ? WHERE end IS NULL").bind(closed_at).execute(&mut *tx).await?;
        sqlx::query("UPDATE pod_intervals SET end = ?, end_known = 0 WHERE end IS NULL")
            .bind(closed_at)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE diagnosis_events SET cleared = ? WHERE cleared IS NULL")
            .bind(closed_at)
            .execute(&mut *tx)
            .await?;
        // Timestamps are whole seconds: a restart within two seconds is not a visible gap.
        if hb > 0 && now - hb > (2 * cfg.resolution.as_secs() as i64).max(2) {
            sqlx::query("INSERT INTO gaps (start, end, reason) VALUES (?, ?, 'gpudash not running')")
                .bind(hb)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        let rows: Vec<(i64, String, String, String)> =
            sqlx::query_as("SELECT id, node, metric, resource FROM series").fetch_all(&pool).await?;
        let series = rows.into_iter().map(|(id, n, m, r)| ((n, m, r), id)).collect();
        Ok(Self {
            pool,
            cfg,
            series,
            last: HashMap::new(),
            open_pods: HashMap::new(),
            open_diags: HashMap::new(),
            stale_gap: None,
        })
    }

    async fn series_id(&mut self, tx: &mut Transaction<'_, Sqlite>, key: &SeriesKey) -> Result<i64, sqlx::Error> {
        if let Some(id) = self.series.get(key) {
            return Ok(*id);
        }
        sqlx::query("INSERT OR IGNORE INTO series (node, metric, resource) VALUES (?, ?, ?)")
            .bind(&key.0)
            .bind(&key.1)
            .bind(&key.2)
            .execute(&mut **tx)
            .await?;
        let (id,): (i64,) = sqlx::query_as("SELECT id FROM series WHERE node = ? AND metric = ? AND resource = ?")
            .bind(&key.0)
            .bind(&key.1)
            .bind(&key.2)
            .fetch_one(&mut **tx)
            .await?;
        Ok(id)
    }

    /// Records one view at `now` (Unix seconds) in one transaction. On error nothing of this
    /// tick is written and the in-memory state is unchanged, so the next tick retries.
    #[tracing::instrument(skip_all, fields(revision = view.revision))]
    pub async fn record(&mut self, view: &ClusterView, now: i64) -> Result<(), sqlx::Error> {
        let pool = self.pool.clone();
        let mut tx = pool.begin().await?;
        let mut tick = Tick { stale_gap: self.stale_gap, ..Tick::default() };
        let down = view.source.stale_since.is_some() || !view.source.synced;
        if down {
            // What the cluster did meanwhile is unknown: record a gap, not values.
            if tick.stale_gap.is_none() {
                let start = view
                    .source
                    .stale_since
                    .as_deref()
                    .and_then(|s| s.parse::<jiff::Timestamp>().ok())
                    .map_or(now, |t| t.as_second());
                let r = sqlx::query("INSERT INTO gaps (start, reason) VALUES (?, 'cluster watch stale')")
                    .bind(start)
                    .execute(&mut *tx)
                    .await?;
                tick.stale_gap = Some(r.last_insert_rowid());
            }
        } else {
            if let Some(id) = tick.stale_gap.take() {
                sqlx::query("UPDATE gaps SET end = ? WHERE id = ?").bind(now).bind(id).execute(&mut *tx).await?;
                // After a gap every line starts again with a sample.
                tick.restart = true;
            }
            self.samples(&mut tx, view, now, &mut tick).await?;
            self.pod_intervals(&mut tx, &pods_seen(view), now, &mut tick).await?;
            self.diagnoses(&mut tx, view, now, &mut tick).await?;
        }
        sqlx::query("UPDATE gpudash_meta SET value = ? WHERE key = 'heartbeat'")
            .bind(now.to_string())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.apply(tick);
        Ok(())
    }

    /// Each series' value where it moved past its deadband (or a heartbeat is due), and a stop
    /// for each line that was known and is no more.
    async fn samples(
        &mut self,
        tx: &mut Transaction<'_, Sqlite>,
        view: &ClusterView,
        now: i64,
        tick: &mut Tick,
    ) -> Result<(), sqlx::Error> {
        let hb = self.cfg.heartbeat.as_secs() as i64;
        let deadband = deadbands(view);
        let mut live = HashSet::new();
        for (key, v) in values(view) {
            let known = self.series.contains_key(&key);
            let id = self.series_id(tx, &key).await?;
            if !known {
                tick.new_series.push((key.clone(), id));
            }
            // Memory use moves all the time: record it when it moved by more than the
            // deadband (1/256 of the board), so a board that idles costs heartbeats only;
            // GPU busy likewise by more than two points.
            let band = band(&deadband, &key);
            live.insert(id);
            let due = match self.last.get(&id).filter(|_| !tick.restart) {
                Some((lv, lt)) => (*lv - v).abs() > band.max(f64::EPSILON) || now - lt >= hb,
                None => true,
            };
            if due {
                sqlx::query("INSERT OR REPLACE INTO samples (series, ts, value) VALUES (?, ?, ?)")
                    .bind(id)
                    .bind(now)
                    .bind(v)
                    .execute(&mut **tx)
                    .await?;
                tick.new_last.push((id, (v, now)));
            }
        }
        // A line that was known and is no more (its node removed, its agent silent, its
        // resource withdrawn) stops here, so that it is not drawn on.
        let gone: Vec<i64> = if tick.restart {
            Vec::new()
        } else {
            self.last.keys().filter(|id| !live.contains(*id)).copied().collect()
        };
        for id in gone {
            sqlx::query("INSERT OR IGNORE INTO series_stops (series, ts) VALUES (?, ?)")
                .bind(id)
                .bind(now)
                .execute(&mut **tx)
                .await?;
            tick.stopped.push(id);
        }
        Ok(())
    }

    /// Pod intervals: each one open that the view no longer has ends; a pending one that waits
    /// for a new reason keeps every reason seen; each new one opens.
    async fn pod_intervals(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        current: &HashMap<PodKey, Seen>,
        now: i64,
        tick: &mut Tick,
    ) -> Result<(), sqlx::Error> {
        for (key, (id, reasons)) in &self.open_pods {
            match current.get(key) {
                None => {
                    sqlx::query("UPDATE pod_intervals SET end = ? WHERE id = ?")
                        .bind(now)
                        .bind(id)
                        .execute(&mut **tx)
                        .await?;
                    tick.closed_pods.push(key.clone());
                }
                Some(Seen { reasons: r, .. }) if key.2 == "pending" && r != reasons && !r.is_empty() => {
                    // Keep every reason seen while it waited.
                    let merged = if reasons.is_empty() || reasons.contains(r.as_str()) {
                        r.clone()
                    } else {
                        format!("{reasons} | {r}")
                    };
                    sqlx::query("UPDATE pod_intervals SET reasons = ? WHERE id = ?")
                        .bind(&merged)
                        .bind(id)
                        .execute(&mut **tx)
                        .await?;
                    tick.opened_pods.push((key.clone(), *id, merged));
                }
                Some(_) => {}
            }
        }
        for (key, seen) in current {
            if self.open_pods.contains_key(key) {
                continue;
            }
            let Seen { node, gpu, reasons, workload, share, mem, unified } = seen;
            let r = sqlx::query(
                "INSERT INTO pod_intervals (namespace, name, state, node, gpu_resource, gpu_count, reasons, \
                start, workload, gpu_share, mem_request_bytes, unified) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \
                ?)",
            )
            .bind(&key.0)
            .bind(&key.1)
            .bind(key.2)
            .bind(node)
            .bind(gpu.as_ref().map(|g| g.0.clone()))
            .bind(gpu.as_ref().map(|g| g.1 as i64))
            .bind(reasons)
            .bind(now)
            .bind(workload)
            .bind(share)
            .bind(mem.and_then(|m| i64::try_from(m).ok()))
            .bind(unified.map(i64::from))
            .execute(&mut **tx)
            .await?;
            tick.opened_pods.push((key.clone(), r.last_insert_rowid(), reasons.clone()));
        }
        Ok(())
    }

    /// Diagnoses raised (recorded in both languages and as the sentences that made them) and cleared.
    async fn diagnoses(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        view: &ClusterView,
        now: i64,
        tick: &mut Tick,
    ) -> Result<(), sqlx::Error> {
        let mut cur_diags = HashSet::new();
        for d in &view.diagnoses {
            let key = (d.code.to_string(), d.kind.to_string(), d.namespace.clone().unwrap_or_default(), d.name.clone());
            if !self.open_diags.contains_key(&key) {
                let sev = serde_json::to_value(d.severity)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                // How the message was made (catalogue sentences and their arguments), where it was.
                let form = d.message.form.as_deref().and_then(|f| serde_json::to_string(f).ok());
                let r = sqlx::query(
                    "INSERT INTO diagnosis_events (code, severity, kind, namespace, name, message, message_ja, message_form, \
                     raised) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                )
                .bind(d.code.as_str())
                .bind(sev)
                .bind(d.kind.as_str())
                .bind(&d.namespace)
                .bind(&d.name)
                .bind(&d.message.en)
                .bind(&d.message.ja)
                .bind(form)
                .bind(now)
                .execute(&mut **tx)
                .await?;
                tick.opened_diags.push((key.clone(), r.last_insert_rowid()));
            }
            cur_diags.insert(key);
        }
        for (key, id) in &self.open_diags {
            if !cur_diags.contains(key) {
                sqlx::query("UPDATE diagnosis_events SET cleared = ? WHERE id = ?")
                    .bind(now)
                    .bind(id)
                    .execute(&mut **tx)
                    .await?;
                tick.closed_diags.push(key.clone());
            }
        }
        Ok(())
    }

    /// After the tick's transaction committed: mirrors it in memory.
    fn apply(&mut self, tick: Tick) {
        self.stale_gap = tick.stale_gap;
        self.series.extend(tick.new_series);
        if tick.restart {
            self.last.clear();
        }
        for id in tick.stopped {
            self.last.remove(&id);
        }
        self.last.extend(tick.new_last);
        for k in tick.closed_pods {
            self.open_pods.remove(&k);
        }
        for (k, id, r) in tick.opened_pods {
            self.open_pods.insert(k, (id, r));
        }
        for k in tick.closed_diags {
            self.open_diags.remove(&k);
        }
        self.open_diags.extend(tick.opened_diags);
    }
}

/// What one tick changes, kept apart until its transaction commits.
#[derive(Default)]
struct Tick {
    new_series: Vec<(SeriesKey, i64)>,
    new_last: Vec<(i64, (f64, i64))>,
    opened_pods: Vec<(PodKey, i64, String)>,
    closed_pods: Vec<PodKey>,
    opened_diags: Vec<((String, String, String, String), i64)>,
    closed_diags: Vec<(String, String, String, String)>,
    stale_gap: Option<i64>,
    stopped: Vec<i64>,
    /// After a gap: every line starts again with a sample.
    restart: bool,
}

/// Where each pod is, what it holds, what it waits for.
fn pods_seen(view: &ClusterView) -> HashMap<PodKey, Seen> {
    let mut current: HashMap<PodKey, Seen> = HashMap::new();
    for p in &view.pending {
        let reasons = p.reasons.iter().map(|r| r.reason.en.as_ref()).collect::<Vec<_>>().join("; ");
        let gpu = p.gpu_request.as_ref().map(|g| (g.resource.clone(), g.count));
        let seen = Seen { gpu, reasons, workload: p.owner.clone(), mem: p.memory_request_bytes, ..Seen::default() };
        current.insert((p.namespace.clone(), p.name.clone(), "pending"), seen);
    }
    for n in &view.nodes {
        for pm in &n.pods {
            let held = n.gpu_resources.iter().find_map(|g| {
                g.holders.iter().find(|h| h.namespace == pm.namespace && h.name == pm.name).map(|h| (g, h))
            });
            let seen = Seen {
                node: Some(n.name.clone()),
                gpu: held.map(|(g, h)| (g.resource.clone(), h.count)),
                reasons: String::new(),
                workload: pm.workload.clone(),
                share: held.map(|(g, h)| gpu_share_of(g, h)),
                mem: Some(pm.requested_bytes),
                unified: Some(n.unified_memory),
            };
            current.insert((pm.namespace.clone(), pm.name.clone(), "running"), seen);
        }
    }
    current
}
