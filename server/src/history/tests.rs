//! History against real SQLite files: migrations, batches, gaps, retention, charts.

use std::time::Duration;

use app::model::{ClusterView, Diagnosis, GpuResource, Holder, NodeView, PendingPod, PodMemory, Severity, Source};

use super::recorder::Recorder;
use super::report::tests::far;
use super::{charts, query, retention, Config};

async fn db() -> (tempfile::TempDir, sqlx::SqlitePool) {
    let dir = tempfile::tempdir().unwrap();
    let pool = crate::db::open(&dir.path().join("h.db")).await.unwrap();
    (dir, pool)
}

fn view(allocated: u64, pending: bool) -> ClusterView {
    let holders: Vec<Holder> = (0..allocated)
        .map(|i| Holder { namespace: "ml".into(), name: format!("m{i}"), count: 1, ..Holder::default() })
        .collect();
    ClusterView {
        revision: 1,
        source: Source { synced: true, ..Source::default() },
        nodes: vec![std::sync::Arc::new(NodeView {
            name: "orin".into(),
            gpu_resources: vec![GpuResource {
                resource: "nvidia.com/gpu".into(),
                capacity: 4,
                allocatable: 4,
                allocated,
                holders,
                ..GpuResource::default()
            }],
            pods: (0..allocated)
                .map(|i| PodMemory { namespace: "ml".into(), name: format!("m{i}"), ..PodMemory::default() })
                .collect(),
            ..NodeView::default()
        })],
        pending: if pending {
            vec![PendingPod { namespace: "ml".into(), name: "late".into(), ..PendingPod::default() }]
        } else {
            vec![]
        },
        diagnoses: if pending {
            vec![std::sync::Arc::new(Diagnosis {
                code: "insufficient-gpu".into(),
                severity: Severity::Critical,
                kind: "Pod".into(),
                namespace: Some("ml".into()),
                name: "late".into(),
                message: "m".into(),
                ..Diagnosis::default()
            })]
        } else {
            vec![]
        },
        ..ClusterView::default()
    }
}

async fn count(pool: &sqlx::SqlitePool, sql: &str) -> i64 {
    let q = sql.to_string();
    let (n,): (i64,) =
        sqlx::query_as(sqlx::AssertSqlSafe(q)).fetch_one(pool).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    n
}

/// The view of a scenario text, as the live loop would derive it.
fn derive(text: &str) -> ClusterView {
    let inputs = crate::derive::from_kubectl_yaml(text).expect("fixture");
    crate::derive::derive(
        &inputs,
        &crate::derive::Options::default(),
        Source { synced: true, ..Source::default() },
        1,
        jiff::Timestamp::UNIX_EPOCH,
    )
}

fn cfg() -> Config {
    Config { resolution: Duration::from_secs(10), heartbeat: Duration::from_secs(300), ..Config::default() }
}

#[tokio::test]
async fn samples_are_written_on_change_and_on_heartbeat_only() {
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 1000).await.unwrap();
    rec.record(&view(1, false), 1000).await.unwrap();
    let first = count(&pool, "SELECT COUNT(*) FROM samples").await;
    assert!(first >= 8, "every series gets a first sample: {first}");
    for t in (1010..1200).step_by(10) {
        rec.record(&view(1, false), t).await.unwrap();
    }
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM samples").await, first, "a flat line costs nothing");
    rec.record(&view(2, false), 1200).await.unwrap();
    let alloc = query::points(&pool, "orin", "gpu_allocated", "nvidia.com/gpu", 0, 2000).await.unwrap_or_default();
    assert_eq!(alloc.iter().map(|p| (p.ts, p.value)).collect::<Vec<_>>(), vec![(1000, 1.0), (1200, 2.0)]);
    rec.record(&view(2, false), 1500).await.unwrap();
    let alloc = query::points(&pool, "orin", "gpu_allocated", "nvidia.com/gpu", 0, 2000).await.unwrap_or_default();
    assert_eq!(alloc.len(), 3, "heartbeat after 300 s");
}

#[tokio::test]
async fn pod_intervals_and_diagnoses_open_and_close() {
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 100).await.unwrap();
    rec.record(&view(1, true), 100).await.unwrap();
    rec.record(&view(2, false), 160).await.unwrap();
    let ivs = query::pod_intervals(&pool, Some(("ml", "late")), 0, 1000).await.unwrap_or_default();
    assert_eq!(ivs.len(), 1);
    assert_eq!((ivs[0].state.as_str(), ivs[0].start, ivs[0].end), ("pending", 100, Some(160)));
    let running = query::pod_intervals(&pool, Some(("ml", "m1")), 0, 1000).await.unwrap_or_default();
    assert_eq!((running[0].state.as_str(), running[0].start, running[0].end), ("running", 160, None));
    assert_eq!(running[0].gpu_count, Some(1));
    let d = query::diagnoses(&pool, 0, 1000, app::i18n::Lang::En).await.unwrap_or_default();
    assert_eq!((d[0].raised, d[0].cleared), (100, Some(160)));
}

#[tokio::test]
async fn a_gpu_going_out_of_service_and_coming_back_is_recorded() {
    let failed = scenario_text("onsite/gpu-unhealthy.yaml");
    // The device plugin sees the GPU healthy again: allocatable back to capacity.
    let healed = failed.replacen("nvidia.com/gpu: \"1\", pods: \"110\"}", "nvidia.com/gpu: \"2\", pods: \"110\"}", 1);
    assert_ne!(failed, healed);
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 100).await.unwrap();
    rec.record(&derive(&failed), 100).await.unwrap();
    rec.record(&derive(&healed), 400).await.unwrap();
    let events = query::diagnoses(&pool, 0, 1000, app::i18n::Lang::En).await.unwrap_or_default();
    let unhealthy: Vec<_> = events.iter().filter(|e| e.code == "gpu-unhealthy").collect();
    assert_eq!(unhealthy.len(), 1, "{events:?}");
    assert_eq!((unhealthy[0].name.as_str(), unhealthy[0].raised, unhealthy[0].cleared), ("gpu-l4-02", 100, Some(400)));
    let out =
        query::points(&pool, "gpu-l4-02", "gpu_out_of_service", "nvidia.com/gpu", 0, 1000).await.unwrap_or_default();
    assert_eq!(out.iter().map(|p| (p.ts, p.value)).collect::<Vec<_>>(), vec![(100, 1.0), (400, 0.0)]);
}

#[tokio::test]
async fn dra_device_allocation_and_the_pods_on_devices_are_recorded_like_the_other_series() {
    let before = scenario_text("dra/whole-mig-shared-unreserved.yaml");
    // The unused claim is deleted: gpu-1 is free again.
    let start =
        before.find("  kind: ResourceClaim\n  metadata: {name: warmup-gpu").unwrap_or_else(|| panic!("fixture"));
    let end = before[start..].find("- apiVersion").map_or(before.len(), |e| start + e);
    let after = format!("{}{}", &before[..start - "- apiVersion: resource.k8s.io/v1\n".len()], &before[end..]);
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 100).await.unwrap();
    rec.record(&derive(&before), 100).await.unwrap();
    rec.record(&derive(&after), 400).await.unwrap();
    let alloc =
        query::points(&pool, "gpu-a100-01", "gpu_allocated", "gpu.nvidia.com", 0, 1000).await.unwrap_or_default();
    assert_eq!(alloc.iter().map(|p| (p.ts, p.value)).collect::<Vec<_>>(), vec![(100, 2.0), (400, 1.0)]);
    let cap =
        query::points(&pool, "gpu-a100-mig-01", "gpu_capacity", "gpu.nvidia.com", 0, 1000).await.unwrap_or_default();
    assert_eq!(cap.first().map(|p| p.value), Some(4.0));
    let ivs = query::pod_intervals(&pool, Some(("vision", "cam-ingest-1")), 0, 1000).await.unwrap_or_default();
    assert_eq!(
        (ivs[0].state.as_str(), ivs[0].node.as_deref(), ivs[0].gpu_resource.as_deref()),
        ("running", Some("gpu-l4-shared-01"), Some("gpu.nvidia.com"))
    );
    let events = query::diagnoses(&pool, 0, 1000, app::i18n::Lang::En).await.unwrap_or_default();
    let unreserved: Vec<_> = events.iter().filter(|e| e.code == "dra-claim-unreserved").collect();
    assert_eq!((unreserved.len(), unreserved[0].cleared), (1, Some(400)), "{events:?}");
}

#[tokio::test]
async fn a_retention_failure_shows_until_it_recovers_and_never_clears_another_writers_problem() {
    let (dir, pool) = db().await;
    let health = super::Health::default();
    health.set(super::Writer::Recorder, Some("history writes failing (disk full)".into()));
    pool.close().await;
    retention::prune_reporting(&pool, &cfg(), 1000, &health).await;
    let problems = health.problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[1].starts_with("history pruning failing"), "{problems:?}");
    let pool = crate::db::open(&dir.path().join("h.db")).await.unwrap();
    retention::prune_reporting(&pool, &cfg(), 1000, &health).await;
    assert_eq!(
        health.problems(),
        vec!["history writes failing (disk full)".to_string()],
        "retention cleared only its own"
    );
    health.set(super::Writer::Recorder, None);
    assert_eq!(health.problem(), None);
}

#[tokio::test]
async fn downtime_and_stale_watches_are_gaps_never_zeros() {
    let (dir, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 1000).await.unwrap();
    rec.record(&view(3, false), 1000).await.unwrap();
    let mut stale = view(0, false);
    stale.source.stale_since = Some("1970-01-01T00:16:50Z".into());
    rec.record(&stale, 1020).await.unwrap();
    rec.record(&view(3, false), 1100).await.unwrap();
    drop(rec);
    pool.close().await;
    // gpudash was down from 1100 to 5000.
    let pool = crate::db::open(&dir.path().join("h.db")).await.unwrap();
    let mut rec = Recorder::open(pool.clone(), cfg(), 5000).await.unwrap();
    rec.record(&view(3, false), 5000).await.unwrap();
    let gaps = query::gaps(&pool, 0, 6000).await.unwrap_or_default();
    assert_eq!(
        gaps,
        vec![(1010, 1100, "cluster watch stale".to_string()), (1100, 5000, "gpudash not running".to_string())]
    );
    let alloc = query::points(&pool, "orin", "gpu_allocated", "nvidia.com/gpu", 0, 6000).await.unwrap_or_default();
    assert!(alloc.iter().all(|p| p.value == 3.0), "no zeros were recorded: {alloc:?}");
    let segs = query::segments(&alloc, &gaps, 400, 6000);
    assert_eq!(segs.len(), 2, "the line breaks at the gaps: {segs:?}");
    assert!(segs.iter().flatten().all(|(t, _)| !(1010..5000).contains(t) || *t == 1010), "{segs:?}");
    // Intervals left open when gpudash stopped are closed at its last heartbeat, end unknown.
    let ivs = query::pod_intervals(&pool, Some(("ml", "m0")), 0, 6000).await.unwrap_or_default();
    assert_eq!((ivs[0].end, ivs[0].end_known), (Some(1100), false));
}

#[tokio::test]
async fn retention_rolls_up_then_expires_and_respects_the_size_cap() {
    let (_d, pool) = db().await;
    let c = Config {
        full_window: Duration::from_secs(86_400),
        keep: Duration::from_secs(10 * 86_400),
        rollup_width: Duration::from_secs(600),
        ..cfg()
    };
    let mut rec = Recorder::open(pool.clone(), c, 0).await.unwrap();
    let day = 86_400;
    for i in 0..(3 * day / 60) {
        let t = i * 60;
        rec.record(&view(((i / 2) % 4) as u64, false), t).await.unwrap();
    }
    let before = count(&pool, "SELECT COUNT(*) FROM samples").await;
    let now = 3 * day;
    let p = retention::prune(&pool, &c, now).await.unwrap();
    assert!(p.rolled_up > 0 && count(&pool, "SELECT COUNT(*) FROM samples").await < before);
    assert_eq!(count(&pool, &format!("SELECT COUNT(*) FROM samples WHERE ts < {}", 2 * day)).await, 0);
    let pts = query::points(&pool, "orin", "gpu_allocated", "nvidia.com/gpu", 0, day).await.unwrap_or_default();
    let rolled: Vec<_> = pts.iter().filter(|p| p.min.is_some()).collect();
    assert!(!rolled.is_empty());
    assert!(rolled.iter().all(|p| p.min <= Some(p.value) && Some(p.value) <= p.max && p.ts % 600 == 0));
    assert!(rolled.iter().any(|p| p.min == Some(0.0) && p.max == Some(3.0)), "min/max kept");
    // Past the keep period everything goes.
    retention::prune(&pool, &c, 20 * day).await.unwrap();
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM rollups").await, 0);
    // The size cap wins over the windows.
    let baseline = retention::used_bytes(&pool).await.unwrap_or(0);
    for i in 0..(2 * day / 60) {
        rec.record(&view((i % 4) as u64, i % 2 == 0), 20 * day + i * 60).await.unwrap();
    }
    let used = retention::used_bytes(&pool).await.unwrap_or(0);
    assert!(used > 2 * baseline, "{used} vs {baseline}");
    let cap = (baseline + used) / 2;
    let tiny = Config { max_bytes: cap, ..c };
    let p = retention::prune(&pool, &tiny, 22 * day).await.unwrap();
    assert!(p.capped > 0);
    assert!(retention::used_bytes(&pool).await.unwrap_or(u64::MAX) <= cap);
}

#[tokio::test]
async fn a_chart_from_recorded_data_has_axes_series_and_gaps() {
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 1000).await.unwrap();
    for (t, a) in [(1000, 1), (1600, 2), (2200, 3)] {
        rec.record(&view(a, false), t).await.unwrap();
    }
    let mut stale = view(0, false);
    stale.source.stale_since = Some("1970-01-01T00:40:00Z".into());
    rec.record(&stale, 2400).await.unwrap();
    rec.record(&view(1, false), 3000).await.unwrap();
    let svg = charts::series_chart(
        &pool,
        "orin · nvidia.com/gpu",
        charts::Unit::Count,
        "orin",
        &[("gpu_allocated", "nvidia.com/gpu", "allocated"), ("gpu_capacity", "nvidia.com/gpu", "capacity")],
        900,
        3600,
        700,
        false,
    )
    .await
    .unwrap();
    assert!(svg.contains("allocated") && svg.contains("capacity"), "legend");
    assert!(svg.contains("no data (cluster watch stale)"), "gap drawn and labelled");
    assert!(svg.contains("<text") && svg.contains("00:"), "time axis");
    assert!(svg.matches(r#"stroke-width="2" points"#).count() >= 3, "lines split at the gap:\n{svg}");
}

#[tokio::test]
async fn charts_render_a_30_day_range() {
    let (_d, pool) = db().await;
    let svg = charts::series_chart(
        &pool,
        "empty",
        charts::Unit::Bytes,
        "none",
        &[("mem_used", "", "used")],
        0,
        30 * 86_400,
        700,
        true,
    )
    .await
    .unwrap();
    assert!(svg.starts_with("<svg"));
}

#[tokio::test]
async fn long_ranges_are_bucketed_by_sqlite_and_keep_extremes() {
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 0).await.unwrap();
    for i in 0..2000i64 {
        let alloc = if i == 1234 { 4 } else { (i % 2) as u64 };
        rec.record(&view(alloc, false), i * 60).await.unwrap();
    }
    let all = query::points(&pool, "orin", "gpu_allocated", "nvidia.com/gpu", 0, 120_000).await.unwrap_or_default();
    let b = query::points_bucketed(&pool, "orin", "gpu_allocated", "nvidia.com/gpu", 0, 120_000, 1200)
        .await
        .unwrap_or_default();
    assert!(b.len() < all.len() / 5, "{} vs {}", b.len(), all.len());
    assert!(b.iter().any(|p| p.value == 4.0), "the spike survives bucketing");
    assert!(b.iter().any(|p| p.value == 0.0));
    assert!(b.windows(2).all(|w| w[0].ts <= w[1].ts));
}

/// `view(1, false)` with a node agent that measured `busy` on one GPU and the board's RAM.
/// With the default hourly heartbeat a flat line costs one sample an hour; a node that goes away
/// stops its lines where it went (nothing drawn after it, even within the hour), a node that
/// comes back starts them again, and after a stale watch every line starts again with a sample.
#[tokio::test]
async fn a_line_holds_until_its_next_sample_or_its_stop() {
    let (_d, pool) = db().await;
    let cfg = Config::default();
    assert_eq!(cfg.heartbeat, Duration::from_secs(3600));
    let mut rec = Recorder::open(pool.clone(), cfg, 0).await.unwrap();
    for t in (0..3600).step_by(10) {
        rec.record(&view(2, false), t).await.unwrap();
    }
    let pts = |to| query::points(&pool, "orin", "gpu_allocated", "nvidia.com/gpu", 0, to);
    assert_eq!(pts(4000).await.unwrap_or_default().len(), 1, "one sample for an hour of a flat line");
    rec.record(&view(2, false), 3600).await.unwrap();
    assert_eq!(pts(4000).await.unwrap_or_default().len(), 2, "and the hourly one");
    // The node is removed at 3700; a pending count goes on.
    let gone = ClusterView { nodes: vec![], ..view(0, false) };
    rec.record(&gone, 3700).await.unwrap();
    rec.record(&gone, 3710).await.unwrap();
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM series_stops").await, 8, "each of the node's lines stops once");
    let p = pts(4000).await.unwrap_or_default();
    assert!(p.last().is_some_and(query::Point::is_stop) && p.last().is_some_and(|p| p.ts == 3700), "{p:?}");
    let segs = query::segments(&p, &[], 3620, 5000);
    assert_eq!(segs.iter().flatten().map(|s| s.0).max(), Some(3700), "not drawn past its end: {segs:?}");
    // The value in force after the stop is none, even when asked from a later start.
    assert!(query::points(&pool, "orin", "gpu_allocated", "nvidia.com/gpu", 3800, 4000)
        .await
        .unwrap_or_default()
        .is_empty());
    // It comes back: a new sample at once.
    rec.record(&view(2, false), 4000).await.unwrap();
    let p = pts(5000).await.unwrap_or_default();
    assert_eq!(p.last().map(|p| (p.ts, p.value)), Some((4000, 2.0)));
    // A stale watch, then back: every line gets a sample after the gap, even unchanged.
    let mut stale = view(2, false);
    stale.source.stale_since = Some("1970-01-01T01:06:50Z".into());
    rec.record(&stale, 4020).await.unwrap();
    rec.record(&view(2, false), 4100).await.unwrap();
    let p = pts(5000).await.unwrap_or_default();
    assert_eq!(p.last().map(|p| (p.ts, p.value)), Some((4100, 2.0)));
    let gaps = query::gaps(&pool, 0, 5000).await.unwrap_or_default();
    let segs = query::segments(&p, &gaps, 3620, 5000);
    assert_eq!(segs.last().and_then(|s| s.first()).copied(), Some((4100, 2.0)), "drawn again from the gap's end");
    // The API gives a stop as a null value.
    let json = serde_json::to_value(query::Point::stop(1)).unwrap_or_default();
    assert!(json["value"].is_null(), "{json}");
}

fn measured(busy: u32, board: u64, stale: bool) -> ClusterView {
    let mut v = view(1, false);
    let n = std::sync::Arc::make_mut(&mut v.nodes[0]);
    n.agent = Some(app::model::AgentView {
        seen_at: Some("1970-01-01T00:16:40Z".into()),
        stale,
        error: None,
        gpu_busy_percent: None,
    });
    n.memory.board_used_bytes = Some(board);
    n.gpu_resources[0].devices = vec![app::model::DeviceView {
        name: "tegra".into(),
        busy_percent: Some(busy),
        ..app::model::DeviceView::default()
    }];
    v
}

#[tokio::test]
async fn gpu_busy_and_board_use_are_recorded_while_the_agent_is_fresh_and_gap_when_it_is_silent() {
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 1000).await.unwrap();
    rec.record(&measured(10, 2 << 30, false), 1000).await.unwrap();
    rec.record(&measured(11, 2 << 30, false), 1010).await.unwrap();
    rec.record(&measured(95, 3 << 30, false), 1020).await.unwrap();
    // Silent agent from 1030 to 2000: nothing is recorded for its series, not zero.
    for t in (1030..2000).step_by(10) {
        rec.record(&measured(95, 3 << 30, true), t).await.unwrap();
    }
    rec.record(&measured(40, 2 << 30, false), 2000).await.unwrap();
    let busy = query::points(&pool, "orin", "gpu_busy", "nvidia.com/gpu|tegra", 0, 3000).await.unwrap_or_default();
    let got: Vec<(i64, Option<f64>)> = busy.iter().map(|p| (p.ts, (!p.is_stop()).then_some(p.value))).collect();
    assert_eq!(
        got,
        [(1000, Some(10.0)), (1020, Some(95.0)), (1030, None), (2000, Some(40.0))],
        "a 1-point move is noise; a silent agent stops the line where it fell silent"
    );
    let segs = query::segments(&busy, &[], 3600, 3000);
    assert_eq!(segs, [vec![(1000, 10.0), (1020, 10.0), (1020, 95.0), (1030, 95.0)], vec![(2000, 40.0), (3000, 40.0)]]);
    let board = query::points(&pool, "orin", "mem_board_used", "", 0, 3000).await.unwrap_or_default();
    assert_eq!(board.iter().map(|p| p.ts).collect::<Vec<_>>(), [1000, 1020, 1030, 2000]);
    assert!(board[2].is_stop());
    let found = query::resources_like(&pool, "orin", "gpu_busy", "nvidia.com/gpu|").await.unwrap_or_default();
    assert_eq!(found, ["nvidia.com/gpu|tegra"]);
    let svg = charts::series_chart(
        &pool,
        "orin · GPU busy",
        charts::Unit::Percent,
        "orin",
        &[("gpu_busy", "nvidia.com/gpu|tegra", "GPU 0 · tegra")],
        900,
        2100,
        320,
        false,
    )
    .await
    .unwrap();
    assert!(svg.contains("GPU 0 · tegra") && svg.contains("100%"), "legend and a percent axis");
    assert!(svg.matches(r#"stroke-width="2" points"#).count() >= 2, "the line breaks over the silence:\n{svg}");
}

/// HAMi vGPUs over a known day (`tests/scenarios/sharing/hami.yaml`): each pod's GPU-hours
/// are its own share of a card — its cores where HAMi limits them, else its memory over the
/// card's — not 1/10 of a GPU per vGPU.
#[tokio::test]
async fn hami_vgpus_count_their_own_share_of_a_gpu_in_gpu_hours() {
    use super::report::{self, By};
    let (_d, pool) = db().await;
    let v = derive(include_str!("../../../tests/scenarios/sharing/hami.yaml"));
    let t0: i64 = 1_000_000;
    let mut rec = Recorder::open(pool.clone(), cfg(), t0).await.unwrap();
    for t in (t0..=t0 + 86_400).step_by(3_600) {
        rec.record(&v, t).await.unwrap();
    }
    let r = report::report(&pool, t0, t0 + 86_400, t0 + 86_400, By::Pod, 0, 100_000, far()).await.unwrap();
    let held = |name: &str| {
        r.rows
            .iter()
            .find(|row| row.pod.as_deref().is_some_and(|p| p.starts_with(name)))
            .map(|row| row.figures.held_gpu_seconds)
            .unwrap_or_else(|| panic!("no {name}: {:?}", r.rows))
    };
    assert_eq!(held("llm-chat"), 0.5 * 86_400.0, "50 % of a V100's cores for a day");
    assert_eq!(held("ocr"), 0.25 * 86_400.0, "a quarter of an A10's memory, cores not limited");
    assert_eq!(held("gpu-pod"), 0.245 * 86_400.0, "3000 + 5000 MiB of 32768, rounded up per card");
    // A pod HAMi has not placed yet counts as its vGPUs' even split (1 of 10).
    assert!((held("whisper") - 0.1 * 86_400.0).abs() < 1e-6);
}

/// A known history — pods holding known shares for known times, a busy series, a gap, an old
/// row without a share, a Pending wait — and every figure of the report to the second.
#[tokio::test]
async fn the_gpu_hours_report_adds_up_to_the_second() {
    use super::report::{self, By};
    let (_d, pool) = db().await;
    let t0: i64 = 1_000_000;
    type Row<'a> =
        (&'a str, &'a str, &'a str, Option<&'a str>, Option<f64>, Option<&'a str>, Option<i64>, i64, i64, Option<i64>);
    let gib: i64 = 1 << 30;
    let rows: [Row; 5] = [
        // (namespace, name, state, node, share, workload, memory, unified, start, end)
        (
            "vision",
            "detector-0",
            "running",
            Some("orin-1"),
            Some(0.25),
            Some("Deployment/detector"),
            Some(2 * gib),
            1,
            t0,
            Some(t0 + 7200),
        ),
        (
            "vision",
            "detector-1",
            "running",
            Some("orin-1"),
            Some(0.25),
            Some("Deployment/detector"),
            Some(gib),
            1,
            t0 + 3600,
            None,
        ),
        (
            "llm",
            "chat-0",
            "running",
            Some("x86-1"),
            Some(1.0),
            Some("StatefulSet/chat"),
            Some(gib),
            0,
            t0 - 1000,
            Some(t0 + 5000),
        ),
        ("llm", "chat-1", "pending", None, None, Some("StatefulSet/chat"), Some(gib), 0, t0 + 5000, Some(t0 + 8000)),
        // Written before gpudash recorded shares: counted apart, never as zero.
        ("vision", "debug", "running", Some("orin-1"), None, None, None, 1, t0, Some(t0 + 1000)),
    ];
    for (ns, name, state, node, share, workload, mem, unified, start, end) in rows {
        sqlx::query(
            "INSERT INTO pod_intervals (namespace, name, state, node, gpu_resource, gpu_count, start, end, \
            gpu_share, workload, mem_request_bytes, unified) VALUES (?, ?, ?, ?, 'nvidia.com/gpu', 1, ?, ?, \
            ?, ?, ?, ?)",
        )
        .bind(ns)
        .bind(name)
        .bind(state)
        .bind(node)
        .bind(start)
        .bind(end)
        .bind(share)
        .bind(workload)
        .bind(mem)
        .bind(unified)
        .execute(&pool)
        .await
        .unwrap();
    }
    sqlx::query("INSERT INTO gaps (start, end, reason) VALUES (?, ?, 'gpudash not running')")
        .bind(t0 + 6000)
        .bind(t0 + 6600)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO series (id, node, metric, resource) VALUES (1, 'orin-1', 'gpu_busy', 'nvidia.com/gpu|gpu0')",
    )
    .execute(&pool)
    .await
    .unwrap();
    for (ts, v) in [(t0, 80.0), (t0 + 1800, 2.0), (t0 + 3600, 50.0)] {
        sqlx::query("INSERT INTO samples (series, ts, value) VALUES (1, ?, ?)")
            .bind(ts)
            .bind(v)
            .execute(&pool)
            .await
            .unwrap();
    }
    let (from, to, now) = (t0, t0 + 10_000, t0 + 20_000);
    let run = |by| {
        let pool = pool.clone();
        async move { report::report(&pool, from, to, now, by, 0, 100_000, far()).await.unwrap() }
    };
    let r = run(By::Namespace).await;
    assert_eq!(r.gap_seconds, 600);
    let ns: Vec<&str> = r.rows.iter().map(|r| r.namespace.as_str()).collect();
    assert_eq!(ns, ["llm", "vision"], "most held first");
    let llm = &r.rows[0].figures;
    // chat-0 from t0 (the range's start) to t0+5000 on a server without an agent.
    assert_eq!((llm.held_gpu_seconds, llm.measured_gpu_seconds, llm.used_gpu_seconds), (5000.0, 0.0, None));
    assert_eq!((llm.idle_held_gpu_seconds, llm.memory_gib_seconds), (None, None));
    // chat-1 waited 3000 s, 600 of them in the gap.
    assert_eq!(llm.waited_seconds, 2400.0);
    let v = &r.rows[1].figures;
    // detector-0: 7200 s less the 600 s gap at a quarter GPU; detector-1: 6400 s less 600.
    assert_eq!(v.held_gpu_seconds, 0.25 * 6600.0 + 0.25 * 5800.0);
    // Busy was measured from t0 to the gap (the last sample holds until the gap begins).
    assert_eq!(v.measured_gpu_seconds, 0.25 * 6000.0 + 0.25 * 2400.0);
    // detector-0: 1800 s at 80 %, 1800 s at 2 %, 2400 s at 50 %; detector-1: 2400 s at 50 %.
    assert_eq!(v.used_gpu_seconds, Some(0.25 * (1440.0 + 36.0 + 1200.0) + 0.25 * 1200.0));
    assert_eq!(v.idle_held_gpu_seconds, Some(0.25 * 1800.0), "held while under 5 % busy");
    assert_eq!(v.unknown_share_seconds, 1000.0);
    assert_eq!(v.memory_gib_seconds, Some(2.0 * 6600.0 + 5800.0), "GiB-seconds on the unified board");
    assert_eq!(v.waited_seconds, 0.0);
    assert_eq!(r.totals.held_gpu_seconds, 5000.0 + 3100.0);
    assert_eq!(r.totals.used_gpu_seconds, Some(969.0));
    let days: Vec<(i64, &str, f64)> =
        r.days.iter().map(|d| (d.start, d.namespace.as_str(), d.held_gpu_seconds)).collect();
    assert_eq!(days, [(950_400, "llm", 5000.0), (950_400, "vision", 3100.0)]);
    // Days at UTC+9: Japan's midnight falls at t0 + 4400 s, splitting chat-0's 5000 s.
    let jst = report::report(&pool, from, to, now, By::Namespace, 540, 100_000, far()).await.unwrap();
    let llm_days: Vec<(i64, f64)> =
        jst.days.iter().filter(|d| d.namespace == "llm").map(|d| (d.start, d.held_gpu_seconds)).collect();
    assert_eq!(llm_days, [(918_000, 4400.0), (1_004_400, 600.0)]);

    let w = run(By::Workload).await;
    let keys: Vec<(&str, Option<&str>, f64)> =
        w.rows.iter().map(|r| (r.namespace.as_str(), r.workload.as_deref(), r.figures.held_gpu_seconds)).collect();
    assert_eq!(
        keys,
        [
            ("llm", Some("StatefulSet/chat"), 5000.0),
            ("vision", Some("Deployment/detector"), 3100.0),
            ("vision", Some("Pod/debug"), 0.0)
        ]
    );
    let p = run(By::Pod).await;
    let d1 = p.rows.iter().find(|r| r.pod.as_deref() == Some("detector-1")).unwrap_or_else(|| panic!("{p:?}"));
    assert_eq!(
        (d1.figures.held_gpu_seconds, d1.figures.used_gpu_seconds, d1.figures.idle_held_gpu_seconds),
        (1450.0, Some(300.0), Some(0.0))
    );
    assert_eq!(d1.workload.as_deref(), Some("Deployment/detector"));

    // The CSV, in Japanese, parsed back: BOM, headers intact, hours to two decimals.
    let heads = report::csv_heads(app::i18n::Lang::Ja);
    assert_eq!(heads[3], "確保 GPU 時間");
    let text = report::csv(&w, &heads);
    let body = text.strip_prefix('\u{feff}').unwrap_or_else(|| panic!("no BOM"));
    let lines: Vec<Vec<&str>> = body.split("\r\n").filter(|l| !l.is_empty()).map(|l| l.split(',').collect()).collect();
    assert_eq!(lines[0], heads);
    assert_eq!(lines[1], ["llm", "StatefulSet/chat", "", "1.39", "0.00", "", "", "", "0.67"]);
    assert_eq!(lines[2], ["vision", "Deployment/detector", "", "0.86", "0.58", "0.27", "0.13", "5.28", "0.00"]);
}

#[test]
fn report_windows_from_months_ranges_and_time_zones() {
    let q = |pairs: &[(&str, &str)]| -> super::http::ReportParams {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        gpudash_web::query::from_pairs(&pairs).unwrap()
    };
    let w = |pairs: &[(&str, &str)]| super::http::report_window(&q(pairs), 1_796_378_400);
    // 2026-11 in UTC and in Japan.
    assert_eq!(w(&[("month", "2026-11")]).ok(), Some((1_793_491_200, 1_796_083_200, 0)));
    assert_eq!(
        w(&[("month", "2026-11"), ("tz", "540")]).ok(),
        Some((1_793_491_200 - 32_400, 1_796_083_200 - 32_400, 540))
    );
    assert_eq!(w(&[("month", "2026-12")]).ok().map(|x| x.1), Some(1_798_761_600), "December ends at the new year");
    // Nothing given: the month now is in (2026-12-04 10:00 UTC).
    assert_eq!(w(&[]).ok(), Some((1_796_083_200, 1_798_761_600, 0)));
    assert_eq!(
        w(&[("from", "2026-11-01T00:00:00Z"), ("to", "1793577600")]).ok(),
        Some((1_793_491_200, 1_793_577_600, 0))
    );
    for bad in [
        &[("month", "2026-13")][..],
        &[("month", "11/2026")],
        &[("tz", "9999")],
        &[("from", "yesterday")],
        &[("from", "10"), ("to", "5")],
        &[("from", "0"), ("to", "99999999")],
        &[("to", "5")],
        // The probe of hardening round two: the subtraction wrapped in release builds (and
        // panicked in debug ones) and the whole history was read.
        &[("from", "-9223372036854775808"), ("to", "9223372036854775807")],
        &[("from", "-1"), ("to", "100")],
        &[("from", "253402300700"), ("to", "253402300800")],
    ] {
        assert!(w(bad).is_err(), "{bad:?}");
    }
    let e = w(&[("from", "-9223372036854775808"), ("to", "9223372036854775807")]).err().map(|e| e.to_string());
    assert!(e.as_deref().is_some_and(|e| e.contains("from 1970 to 9999")), "{e:?}");
}

/// The text of a scenario file under `tests/scenarios/` (`onsite/gpu-unhealthy.yaml`).
fn scenario_text(rel: &str) -> String {
    let path = format!("{}/../tests/scenarios/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[tokio::test]
async fn diagnoses_are_read_in_the_readers_language_and_older_rows_stay_readable() {
    let failed = scenario_text("onsite/gpu-unhealthy.yaml");
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 100).await.unwrap();
    rec.record(&derive(&failed), 100).await.unwrap();
    // A row as gpudash wrote them before it kept both languages.
    sqlx::query(
        "INSERT INTO diagnosis_events (code, severity, kind, namespace, name, message, raised) \
         VALUES ('gpu-node-down', 'critical', 'Node', NULL, 'old-board', 'old-board stopped reporting', 50)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let ja = query::diagnoses(&pool, 0, 1000, app::i18n::Lang::Ja).await.unwrap_or_default();
    let en = query::diagnoses(&pool, 0, 1000, app::i18n::Lang::En).await.unwrap_or_default();
    let pick = |v: &[query::DiagnosisEvent], code: &str| v.iter().find(|e| e.code == code).cloned();
    let (j, e) = (pick(&ja, "gpu-unhealthy"), pick(&en, "gpu-unhealthy"));
    let (j, e) = (j.unwrap_or_else(|| panic!("{ja:?}")), e.unwrap_or_else(|| panic!("{en:?}")));
    assert_eq!((j.message_lang.as_str(), e.message_lang.as_str()), ("ja", "en"));
    assert!(j.message.chars().any(|c| ('\u{3040}'..='\u{30ff}').contains(&c)), "Japanese: {}", j.message);
    assert!(
        e.message.is_ascii() || !e.message.chars().any(|c| ('\u{3040}'..='\u{30ff}').contains(&c)),
        "{}",
        e.message
    );
    let old = pick(&ja, "gpu-node-down").unwrap_or_else(|| panic!("{ja:?}"));
    assert_eq!(
        (old.message.as_str(), old.message_lang.as_str()),
        ("old-board stopped reporting", "en"),
        "kept, and said"
    );
    // Gap reasons are codes: read in the reader's language, an unknown one as it is.
    use crate::history::charts::gap_reason;
    assert_eq!(gap_reason("gpudash not running", app::i18n::Lang::Ja), "gpudash 停止中");
    assert_eq!(gap_reason("cluster watch stale", app::i18n::Lang::En), "cluster watch stale");
    assert_eq!(gap_reason("maintenance", app::i18n::Lang::Ja), "maintenance");
}

#[tokio::test]
async fn diagnoses_are_kept_as_sentences_with_their_arguments_and_said_again_in_the_readers_language() {
    let view = derive(&scenario_text("onsite/gpu-unhealthy.yaml"));
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 100).await.unwrap();
    rec.record(&view, 100).await.unwrap();
    let forms: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT code, message_form FROM diagnosis_events").fetch_all(&pool).await.unwrap();
    assert!(!forms.is_empty() && forms.iter().all(|(_, f)| f.is_some()), "every event keeps its form: {forms:?}");
    // The stored words are only a fallback: with them wiped, the messages are said again from
    // the forms, word for word as the derivation said them, in each language.
    sqlx::query("UPDATE diagnosis_events SET message = 'wiped', message_ja = 'wiped'").execute(&pool).await.unwrap();
    for lang in [app::i18n::Lang::En, app::i18n::Lang::Ja] {
        let read = query::diagnoses(&pool, 0, 1000, lang).await.unwrap();
        assert_eq!(read.len(), forms.len());
        for e in &read {
            let said = view.diagnoses.iter().any(|d| {
                d.code.as_str() == e.code && d.name == e.name && app::i18n::Say::say(&d.message, lang) == e.message
            });
            assert!(said && e.message_lang == lang.code(), "{e:?}");
        }
    }
    // A form whose sentence this build no longer has, and a row from before forms (both
    // languages stored): each read from its words.
    sqlx::query(
        "INSERT INTO diagnosis_events (code, severity, kind, namespace, name, message, message_ja, message_form, raised) \
         VALUES ('gpu-node-down', 'critical', 'Node', NULL, 'gone-board', 'gone-board is down', 'gone-board は停止', \
         '{\"sentence\":{\"key\":\"nodes.removed_since\",\"args\":[]}}', 60), \
         ('gpu-node-down', 'critical', 'Node', NULL, 'older-board', 'older-board is down', 'older-board は停止', NULL, 70)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let ja = query::diagnoses(&pool, 0, 1000, app::i18n::Lang::Ja).await.unwrap();
    for (name, want) in [("gone-board", "gone-board は停止"), ("older-board", "older-board は停止")] {
        let e = ja.iter().find(|e| e.name == name).unwrap();
        assert_eq!((e.message.as_str(), e.message_lang.as_str()), (want, "ja"));
    }
}

#[tokio::test]
async fn a_pods_timeline_marks_what_happened_to_it() {
    // The model OOM-killed on the Orin Nano (tests/scenarios/after/orin-nano-oom.yaml): its
    // diagnosis is recorded, and its timeline draws the code at the time it was raised.
    let view = derive(&scenario_text("after/orin-nano-oom.yaml"));
    let (_d, pool) = db().await;
    let mut rec = Recorder::open(pool.clone(), cfg(), 1_000).await.unwrap();
    rec.record(&view, 1_000).await.unwrap();
    let marks = query::pod_diagnoses(&pool, "assist", "llm-chat-6c5b4a39d-x8y9z", 0, 2_000).await.unwrap();
    assert_eq!(marks, vec![(1_000, "gpu-model-oom-killed".to_string())]);
    assert!(query::pod_diagnoses(&pool, "assist", "another-pod", 0, 2_000).await.unwrap().is_empty());
    assert!(query::pod_diagnoses(&pool, "assist", "llm-chat-6c5b4a39d-x8y9z", 1_001, 2_000).await.unwrap().is_empty());
    let svg = crate::history::charts::pod_timeline(&pool, "assist", "llm-chat-6c5b4a39d-x8y9z", 0, 2_000, false)
        .await
        .unwrap();
    assert!(svg.contains("gpu-model-oom-killed"), "{svg}");
}
