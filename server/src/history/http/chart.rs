//! `GET /charts/{kind}.svg`: history's charts, drawn on the server as SVG in the reader's
//! language, theme and time zone.

use sqlx::SqlitePool;

use super::*;

fn svg(body: String) -> Response {
    // An SVG opened on its own is a document: it may run nothing and load nothing.
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'"),
        ],
        body,
    )
        .into_response()
}

/// What every chart is drawn over: its window, how far a line may step, and how it looks.
struct Frame {
    from: i64,
    to: i64,
    max_step: i64,
    look: charts::Look,
}

impl Frame {
    /// `metrics` (metric, resource, label) of `node`'s series drawn as lines.
    async fn lines(
        &self,
        pool: &SqlitePool,
        title: &str,
        unit: Unit,
        node: &str,
        metrics: &[(&str, &str, &str)],
    ) -> Result<String, ChartError> {
        let look = self.look.clone();
        charts::series_chart(pool, title, unit, node, metrics, self.from, self.to, self.max_step, look).await
    }
}

/// `GET /charts/{kind}.svg?node=&resource=&namespace=&name=&quota=&range=&theme=&lang=`
pub async fn chart(
    State(h): State<History>,
    axum::extract::Path(file): axum::extract::Path<String>,
    headers: axum::http::HeaderMap,
    Params(q): Params<ChartParams>,
) -> Result<Response, ApiError> {
    let (from, to, pool) = scope(&h, q.range).map(|(f, t, p)| (f, t, p.clone()))?;
    let lang = lang_of(q.lang.as_deref()).unwrap_or_default();
    let (_, tz) = crate::http::zone::of_request(&headers, &h.zone);
    let look = charts::Look { dark: q.theme.as_deref() == Some("dark"), lang, tz };
    let f = Frame { from, to, max_step: max_step(&h.cfg), look };
    let s = lang.s();
    let node = q.node.as_str();
    let out = match file.as_str() {
        "gpu.svg" => {
            let r = q.resource.as_str();
            let lines = [
                ("gpu_allocated", r, s.chart_allocated),
                ("gpu_allocatable", r, s.chart_allocatable),
                ("gpu_capacity", r, s.chart_capacity),
            ];
            f.lines(&pool, &format!("{node} · {r}"), Unit::Count, node, &lines).await
        }
        "memory.svg" => {
            let lines = [
                ("mem_used", "", s.chart_used),
                ("mem_requests", "", "requests"),
                ("mem_limits", "", "limits"),
                ("mem_allocatable", "", s.chart_board),
                ("mem_board_used", "", s.chart_board_used),
            ];
            f.lines(&pool, &format!("{node} · {}", s.chart_memory), Unit::Bytes, node, &lines).await
        }
        "busy.svg" => busy_chart(&pool, &f, node, &q.resource).await,
        "gpumem.svg" => gpumem_chart(&pool, &f, node).await,
        "pending.svg" => {
            let lines = [("pending", "", s.chart_pending), ("pending_gpu", "", s.chart_pending_gpu)];
            f.lines(&pool, s.chart_pending_title, Unit::Count, "", &lines).await
        }
        "quota.svg" => {
            let (ns, quota, key) = (&q.namespace, &q.quota, &q.resource);
            let series = format!("{quota}/{key}");
            let lines = [("quota_used", series.as_str(), s.chart_used), ("quota_hard", series.as_str(), "hard")];
            f.lines(&pool, &format!("{ns} · {quota} · {key}"), Unit::Count, ns, &lines).await
        }
        "waits.svg" => waits_chart(&pool, from, to, f.look).await,
        "pod.svg" => charts::pod_timeline(&pool, &q.namespace, &q.name, from, to, f.look).await,
        _ => {
            return Err(ApiError::NotFound(
                "charts: gpu.svg, busy.svg, memory.svg, gpumem.svg, pending.svg, waits.svg, pod.svg, quota.svg".into(),
            ))
        }
    };
    out.map(svg).map_err(|e| ApiError::internal("chart", e))
}

/// Each GPU's busy % beside the resource's allocation chart (recorded by the agent).
async fn busy_chart(pool: &SqlitePool, f: &Frame, node: &str, resource: &str) -> Result<String, ChartError> {
    let devices = query::resources_like(pool, node, "gpu_busy", &format!("{resource}|")).await?;
    let labels: Vec<(String, String)> = devices
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let id = d.rsplit('|').next().unwrap_or(d);
            (d.clone(), format!("GPU {i} · {}", id.chars().take(12).collect::<String>()))
        })
        .collect();
    let metrics: Vec<(&str, &str, &str)> = labels.iter().map(|(d, l)| ("gpu_busy", d.as_str(), l.as_str())).collect();
    let title = format!("{node} · {resource} · {}", f.look.lang.s().chart_busy);
    f.lines(pool, &title, Unit::Percent, node, &metrics).await
}

/// GPU memory of each pod on a Jetson (the agent's nvmap reading), and nvmap's total.
async fn gpumem_chart(pool: &SqlitePool, f: &Frame, node: &str) -> Result<String, ChartError> {
    let s = f.look.lang.s();
    let pods = query::resources_like(pool, node, "gpu_mem", "").await?;
    let mut metrics: Vec<(&str, &str, &str)> =
        pods.iter().take(12).map(|p| ("gpu_mem", p.as_str(), p.as_str())).collect();
    metrics.push(("gpu_mem_nvmap", "", s.chart_nvmap));
    f.lines(pool, &format!("{node} · {}", s.chart_gpumem), Unit::Bytes, node, &metrics).await
}

/// Wait times: each pending interval drawn at its start with its length (still waiting: up to now).
async fn waits_chart(pool: &SqlitePool, from: i64, to: i64, look: charts::Look) -> Result<String, ChartError> {
    let s = look.lang.s();
    let ivs = query::pod_intervals(pool, None, from, to).await?;
    let segs: Vec<Vec<(i64, f64)>> = ivs
        .iter()
        .filter(|i| i.state == "pending")
        .map(|i| {
            let wait = (i.end.unwrap_or(to) - i.start).max(0) as f64;
            let t = i.start.max(from);
            vec![(t, 0.0), (t, wait)]
        })
        .collect();
    let gaps = query::gaps(pool, from, to).await?;
    Ok(charts::line_chart(
        s.alt_waits,
        Unit::Seconds,
        &[charts::Line { label: s.chart_wait.into(), color: 2, segments: segs }],
        &gaps,
        from,
        to,
        look,
        (900, 280),
    )?)
}
