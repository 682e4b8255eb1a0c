//! Helpers for what tests read in Chromium: text of an element, waiting for text, waiting for
//! hydration, screenshots into `screenshots/`.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use fantoccini::{Client, Locator};

use crate::screenshot_dir;

/// The text of the first element matching `css`.
pub async fn text(c: &Client, css: &str) -> anyhow::Result<String> {
    Ok(c.find(Locator::Css(css)).await.with_context(|| format!("finding {css}"))?.text().await?)
}

/// Waits until an element matching `css` contains `want`, and returns its text.
pub async fn wait_text(c: &Client, css: &str, want: &str, limit: Duration) -> anyhow::Result<String> {
    let t = Instant::now();
    loop {
        if let Ok(els) = c.find_all(Locator::Css(css)).await {
            for e in els {
                if let Ok(s) = e.text().await {
                    if s.contains(want) {
                        return Ok(s);
                    }
                }
            }
        }
        if t.elapsed() > limit {
            bail!("no {css} containing {want:?} within {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the page has hydrated (the app marks `<html data-hydrated>`).
pub async fn hydrated(c: &Client) -> anyhow::Result<()> {
    let t = Instant::now();
    loop {
        let v = c.execute("return document.documentElement.getAttribute('data-hydrated')", vec![]).await?;
        if v == "true" {
            return Ok(());
        }
        if t.elapsed() > Duration::from_secs(20) {
            bail!("the page did not hydrate (is target/site/pkg built? run `cargo xtask site`)");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Saves a screenshot into `screenshots/NAME`.
pub async fn shot(c: &Client, name: &str) -> anyhow::Result<()> {
    let png = c.screenshot().await?;
    std::fs::write(screenshot_dir().join(name), png)?;
    Ok(())
}

/// Makes the page's viewport itself `w`×`h` (a window's size includes the browser's frame).
pub async fn viewport(c: &Client, w: u32, h: u32) -> anyhow::Result<()> {
    c.set_window_size(w, h).await?;
    let inner = c.execute("return window.innerHeight", vec![]).await?.as_u64().unwrap_or(u64::from(h));
    let twice = 2 * u64::from(h);
    c.set_window_size(w, u32::try_from(twice - inner.min(twice)).unwrap_or(h)).await?;
    Ok(())
}
