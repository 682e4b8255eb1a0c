//! The recorder's loop: a batch per tick from the latest published view, failures reported and
//! retried, a last batch on shutdown.

use sqlx::SqlitePool;

use super::super::Config;
use super::Recorder;

/// Runs the recorder: one batch per resolution tick from the latest published view. Write
/// failures (disk full, database locked) are reported in the recorder's health slot and
/// retried; the live view never waits on them. Ends after a last batch when `shutdown` is set.
pub async fn run(
    pool: SqlitePool,
    cfg: Config,
    views: tokio::sync::watch::Receiver<std::sync::Arc<crate::publish::Snapshot>>,
    health: std::sync::Arc<super::super::Health>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let set = |s: Option<String>| health.set(super::super::Writer::Recorder, s);
    let mut rec = loop {
        match Recorder::open(pool.clone(), cfg, jiff::Timestamp::now().as_second()).await {
            Ok(r) => break r,
            Err(e) => {
                set(Some(crate::error::logged("history recorder cannot start; retrying in 30 s", &e)));
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            }
        }
    };
    // Record the first view as soon as it exists, then once per tick; on shutdown, one last
    // batch of the latest view, so that what was shown last is what history ends with.
    let mut views = views;
    while views.borrow().view.revision == 0 {
        tokio::select! {
            changed = views.changed() => if changed.is_err() { return },
            _ = shutdown.wait_for(|s| *s) => return,
        }
    }
    let mut tick = tokio::time::interval(cfg.resolution);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut failing = false;
    loop {
        let last = tokio::select! {
            _ = tick.tick() => false,
            _ = shutdown.wait_for(|s| *s) => true,
        };
        let snap = views.borrow().clone();
        if snap.view.revision != 0 {
            match rec.record(&snap.view, jiff::Timestamp::now().as_second()).await {
                Ok(()) => {
                    if failing {
                        tracing::info!("history writes recovered");
                        set(None);
                        failing = false;
                    }
                }
                Err(e) => {
                    // Logged once per failing spell (with the id the status shows), not each tick.
                    if !failing {
                        set(Some(crate::error::logged(
                            "history writes failing; nothing of the batch was written, retrying each tick; the live \
                             view is unaffected and nothing recorded is lost",
                            &e,
                        )));
                    }
                    failing = true;
                }
            }
        }
        if last {
            tracing::info!("history flushed");
            return;
        }
    }
}
