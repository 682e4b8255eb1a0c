//! History's charts: the recorded series and intervals read from SQLite and drawn by
//! [`gpudash_web::charts`] (shared with the fleet).

use sqlx::SqlitePool;

pub use gpudash_web::charts::*;

use super::query;
use gpudash_web::series::segments;

/// Why a chart could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// Reading the recorded series failed.
    #[error("reading history: {0}")]
    Query(#[from] sqlx::Error),
    /// plotters could not draw.
    #[error(transparent)]
    Draw(#[from] DrawError),
}

/// Loads a set of series and draws them.
#[allow(clippy::too_many_arguments)]
pub async fn series_chart(
    pool: &SqlitePool,
    title: &str,
    unit: Unit,
    node: &str,
    metrics: &[(&str, &str, &str)],
    from: i64,
    to: i64,
    max_step: i64,
    look: impl Into<Look>,
) -> Result<String, ChartError> {
    let look = look.into();
    let gaps = query::gaps(pool, from, to).await?;
    let mut lines = Vec::new();
    for (i, (metric, resource, label)) in metrics.iter().enumerate() {
        // Beyond two days, let SQLite bucket the samples to about one per pixel column.
        let long = to - from > 2 * 86_400;
        let width = (to - from) / 900;
        let pts = if long {
            query::points_bucketed(pool, node, metric, resource, from, to, width).await
        } else {
            query::points(pool, node, metric, resource, from, to).await
        }?;
        let max_step = if long { max_step.max(2 * width) } else { max_step };
        let pts: Vec<_> = pts.into_iter().filter(|p| p.ts <= to).collect();
        let segs = segments(&pts, &gaps, max_step, to)
            .into_iter()
            .map(|s| decimate(&s.into_iter().map(|(t, v)| (t.max(from), v)).collect::<Vec<_>>(), from, to, 900))
            .collect();
        lines.push(Line { label: (*label).to_string(), color: i, segments: segs });
    }
    Ok(line_chart(title, unit, &lines, &gaps, from, to, look, (900, 320))?)
}

/// A pod's pending and running intervals as bars on two rows.
pub async fn pod_timeline(
    pool: &SqlitePool,
    ns: &str,
    name: &str,
    from: i64,
    to: i64,
    look: impl Into<Look>,
) -> Result<String, ChartError> {
    let ivs = query::pod_intervals(pool, Some((ns, name)), from, to).await?;
    let gaps = query::gaps(pool, from, to).await?;
    let marks = query::pod_diagnoses(pool, ns, name, from, to).await?;
    let bars: Vec<Bar> =
        ivs.iter().map(|iv| Bar { start: iv.start, end: iv.end, pending: iv.state == "pending" }).collect();
    Ok(timeline(&format!("{ns}/{name}"), (&bars, &marks), &gaps, from, to, look)?)
}
