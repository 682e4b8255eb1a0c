//! The dashboard in Japanese, in headless Chromium at 1920×1080: overview, pending and the
//! kiosk, with a check that no card's text overflows its box. Screenshots go to `screenshots/`.

use std::time::Duration;

use anyhow::bail;
use fantoccini::Client;
use gpudash_tests::browser::{hydrated, shot, text, viewport, wait_text};
use gpudash_tests::{with_browser, Gpudash};

/// Every element of a card, total or status line that sticks out of its box, or whose text is
/// clipped without an ellipsis (slot names are ellipsised on purpose).
const OVERFLOW: &str = r#"
const bad = [];
for (const box of document.querySelectorAll('.card, .total, .status, .diagnosis-item')) {
  const r = box.getBoundingClientRect();
  for (const el of box.querySelectorAll('*')) {
    const cs = getComputedStyle(el);
    if (cs.textOverflow === 'ellipsis' || cs.display === 'none') continue;
    const e = el.getBoundingClientRect();
    if (e.width === 0 || e.height === 0) continue;
    const out = e.right > r.right + 1 || e.left < r.left - 1;
    const clipped = cs.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1 && !el.matches('.mem-track, .mem-fill');
    if (out || clipped) bad.push((el.className || el.tagName) + ': ' + (el.textContent || '').trim().slice(0, 60));
  }
}
return bad;
"#;

async fn no_overflow(c: &Client, page: &str) -> anyhow::Result<()> {
    let bad = c.execute(OVERFLOW, vec![]).await?;
    match bad.as_array() {
        Some(a) if a.is_empty() => Ok(()),
        _ => bail!("{page}: text overflows its box: {bad}"),
    }
}

fn japanese(s: &str) -> usize {
    s.chars().filter(|c| matches!(c, '\u{3040}'..='\u{30ff}' | '\u{4e00}'..='\u{9fff}')).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overview_pending_and_kiosk_in_japanese_fit_a_1920x1080_screen() {
    let gd = Gpudash::start(&["--demo", "--kiosk-rotate", "6"]).await.unwrap();
    let url = gd.url.clone();
    let result = with_browser(|c| async move {
        viewport(&c, 1920, 1080).await?;

        // Overview: the page, its header and the cards in Japanese; the switch offers English.
        c.goto(&format!("{url}/?lang=ja")).await?;
        hydrated(&c).await?;
        let lang = c.execute("return document.documentElement.lang", vec![]).await?;
        assert_eq!(lang, "ja");
        assert_eq!(text(&c, "h1.page-title").await?, "GPU の概要");
        let status = text(&c, ".status").await?;
        assert!(status.contains("シミュレーション") && status.contains("ライブ"), "{status}");
        let nano = text(&c, "article.node[data-node='orin-nano-01']").await?;
        assert!(nano.contains("GPU 1 基（専有） · 1/1 使用中") && nano.contains("Pending 1"), "{nano}");
        let switch = text(&c, "a.lang-switch").await?;
        assert_eq!(switch, "English");
        no_overflow(&c, "overview").await?;
        shot(&c, "ja-overview.png").await?;

        // Pending: normalised reasons and the wait in Japanese; the scheduler's own message
        // kept verbatim (and marked English) beside them; diagnoses from the live stream.
        c.goto(&format!("{url}/pending?lang=ja")).await?;
        hydrated(&c).await?;
        let card = wait_text(&c, "article.pending", "nvidia.com/gpu が不足しています", Duration::from_secs(10)).await?;
        assert!(card.contains("待機中") && card.contains("Node 中"), "{card}");
        let raw =
            c.execute("return document.querySelector('article.pending pre[lang=en]').textContent", vec![]).await?;
        assert!(raw.as_str().is_some_and(|s| s.contains("nodes are available")), "{raw}");
        let diag = text(&c, "article.pending .diagnosis").await?;
        assert!(japanese(&diag) > 20, "{diag}");
        no_overflow(&c, "pending").await?;
        shot(&c, "ja-pending.png").await?;

        // Kiosk pinned to Japanese by its URL: large, dark, and it stays Japanese when it
        // rotates to the pending page on its own (rendered in the browser from the stream).
        c.goto(&format!("{url}/?kiosk=1&lang=ja")).await?;
        hydrated(&c).await?;
        assert_eq!(text(&c, "h1.page-title").await?, "GPU の概要");
        let size = c
            .execute("return parseFloat(getComputedStyle(document.querySelector('.card-head h2')).fontSize)", vec![])
            .await?;
        assert!(size.as_f64().unwrap_or(0.0) >= 26.0, "kiosk node names too small: {size}");
        no_overflow(&c, "kiosk overview").await?;
        shot(&c, "ja-kiosk.png").await?;
        wait_text(&c, "h1.page-title", "Pending の Pod", Duration::from_secs(15)).await?;
        let diag = text(&c, "article.pending .diagnosis").await?;
        assert!(japanese(&diag) > 20, "{diag}");
        no_overflow(&c, "kiosk pending").await?;
        shot(&c, "ja-kiosk-pending.png").await?;

        // The switch back: English, same page.
        c.goto(&format!("{url}/pending?lang=en")).await?;
        hydrated(&c).await?;
        assert_eq!(text(&c, "h1.page-title").await?, "Pending pods");
        assert_eq!(text(&c, "a.lang-switch").await?, "日本語");
        Ok(())
    })
    .await;
    if let Err(e) = result {
        panic!("{e:#}\n--- gpudash output ---\n{}", gd.proc.output());
    }
}
