//! A phone in the hand: every page of the demo at 390 × 844 px in headless Chromium, in English
//! and Japanese — the page itself never scrolls sideways (wide tables scroll inside their own
//! box) and nothing sticks out past the screen's right edge. Screenshots: `screenshots/phone-*.png`.

use gpudash_tests::browser::{hydrated, shot, viewport};
use gpudash_tests::{with_browser, Gpudash};
use serde_json::Value;

/// Elements whose right edge is past the screen, outside any box that scrolls sideways.
const STICKING_OUT: &str = r#"
const w = window.innerWidth;
const scrolls = (e) => { for (let p = e.parentElement; p; p = p.parentElement) {
  const s = getComputedStyle(p); if (s.overflowX === 'auto' || s.overflowX === 'scroll' || s.overflowX === 'hidden') return true; }
  return false; };
const out = [];
for (const e of document.body.querySelectorAll('*')) {
  const r = e.getBoundingClientRect();
  if (r.width > 0 && r.right > w + 1 && !scrolls(e)) {
    const cls = e.className && e.className.baseVal === undefined ? '.' + String(e.className).split(' ').join('.') : '';
    out.push(e.tagName.toLowerCase() + cls + ' ' + Math.round(r.right));
  }
}
return out.slice(0, 12);
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_fits_a_phone_in_both_languages() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let v: Value = reqwest::get(format!("{}/api/v1/cluster", gd.url)).await.unwrap().json().await.unwrap_or_default();
    let node = v["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| n["gpu_resources"].as_array().is_some_and(|g| !g.is_empty()))
        .and_then(|n| n["name"].as_str())
        .unwrap_or_default()
        .to_string();
    let url = gd.url.clone();
    let problems = with_browser(|c| async move {
        viewport(&c, 390, 844).await?;
        let mut problems = Vec::new();
        let pages = [
            ("overview", "/".to_string()),
            ("pending", "/pending".into()),
            ("diagnoses", "/diagnoses".into()),
            ("history", "/history".into()),
            ("fit", "/fit".into()),
            ("quotas", "/quotas".into()),
            ("reports", "/reports".into()),
            ("node", format!("/nodes/{node}")),
            ("kiosk", "/?kiosk=1".into()),
        ];
        for lang in ["en", "ja"] {
            for (name, path) in &pages {
                let sep = if path.contains('?') { '&' } else { '?' };
                c.goto(&format!("{url}{path}{sep}lang={lang}")).await?;
                if *name == "overview" || *name == "pending" || *name == "diagnoses" {
                    hydrated(&c).await?;
                }
                let wide =
                    c.execute("return [document.documentElement.scrollWidth, window.innerWidth]", vec![]).await?;
                let out = c.execute(STICKING_OUT, vec![]).await?;
                let (sw, iw) = (wide[0].as_u64().unwrap_or(0), wide[1].as_u64().unwrap_or(0));
                if sw > iw + 1 || out.as_array().is_some_and(|a| !a.is_empty()) {
                    problems
                        .push(format!("{name} ({lang}): page {sw} px wide on a {iw} px screen; sticking out: {out}"));
                }
                shot(&c, &format!("phone-{name}-{lang}.png")).await?;
            }
        }
        Ok(problems)
    })
    .await
    .unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
