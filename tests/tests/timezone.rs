//! The viewer's hours: a browser in Tokyo with a Japanese locale opens the demo served in UTC.
//! Its first page stores the browser's zone in a cookie and is made again once; from then on
//! every page says its times in JST (the status line within a minute of the test's own clock),
//! no page says UTC, charts name JST and label their axis in it, and the GPU-hours report
//! counts days in the reader's zone. A site zone (`--timezone`) is used for a reader who has
//! not said theirs, and a zone the database does not have is refused at start.

use std::time::Duration;

use fantoccini::Locator;
use gpudash_tests::browser::{shot, wait_text};
use gpudash_tests::{with_browser_in, Gpudash};

/// `HH:MM:SS` in `text` before ` JST`, as seconds of the day.
fn jst_clock(text: &str) -> Option<i64> {
    let at = text.find(" JST")?;
    let hms = text.get(at.checked_sub(8)?..at)?;
    let p: Vec<i64> = hms.split(':').filter_map(|x| x.parse().ok()).collect();
    (p.len() == 3).then(|| p[0] * 3600 + p[1] * 60 + p[2])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_in_tokyo_sees_every_time_in_jst_and_none_in_utc() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let url = gd.url.clone();
    with_browser_in(Some(("Asia/Tokyo", "ja")), |c| async move {
        c.goto(&format!("{url}/")).await?;
        // The first page was made in the site's zone (UTC); the script stores Tokyo and the
        // page is made again in it.
        let status = wait_text(&c, "div.status", "JST", Duration::from_secs(20)).await?;
        let cookie = c.get_named_cookie("gpudash_tz").await?;
        assert_eq!(cookie.value(), "Asia%2FTokyo");
        let now_jst = (jiff::Timestamp::now().as_second() + 9 * 3600).rem_euclid(86_400);
        let shown = jst_clock(&status).unwrap_or_else(|| panic!("no JST clock in {status:?}"));
        let diff = (shown - now_jst).rem_euclid(86_400);
        assert!(diff.min(86_400 - diff) <= 60, "status {status:?} is {diff} s from the test's clock in JST");
        assert_eq!(c.find(Locator::Css("html")).await?.attr("lang").await?.as_deref(), Some("ja"));
        shot(&c, "timezone-tokyo-overview.png").await?;
        for page in [
            "/",
            "/pending",
            "/diagnoses",
            "/history",
            "/quotas",
            "/fit",
            "/reports",
            "/nodes/orin-agx-01",
            "/?kiosk=1",
        ] {
            c.goto(&format!("{url}{page}")).await?;
            let body = c.find(Locator::Css("body")).await?.text().await?;
            assert!(!body.contains("UTC"), "{page} still says UTC:\n{body}");
            let status = c.find(Locator::Css("div.status")).await?.text().await?;
            assert!(status.contains("JST"), "{page}: {status}");
        }
        // The report counts its days in Tokyo and names the zone.
        c.goto(&format!("{url}/reports")).await?;
        let body = c.find(Locator::Css("body")).await?.text().await?;
        assert!(body.contains("JST (+09:00)"), "{body}");
        Ok(())
    })
    .await
    .unwrap();

    // Charts in the reader's zone: named in the caption, the axis in its hours.
    let http = reqwest::Client::new();
    let chart = |cookie: &'static str| {
        let req = http.get(format!("{}/charts/pending.svg?range=1h", gd.url));
        let req = if cookie.is_empty() { req } else { req.header("cookie", cookie) };
        async move { req.send().await.map(|r| r.text()).ok() }
    };
    let tokyo = match chart("gpudash_tz=Asia%2FTokyo").await {
        Some(f) => f.await.unwrap_or_default(),
        None => String::new(),
    };
    assert!(tokyo.contains("· JST"), "{tokyo}");
    let utc = match chart("").await {
        Some(f) => f.await.unwrap_or_default(),
        None => String::new(),
    };
    assert!(utc.contains("· UTC") && !utc.contains("JST"), "{utc}");
    // A cookie naming no zone is ignored, not trusted.
    let bad = match chart("gpudash_tz=..%2F..%2Fetc%2Fpasswd").await {
        Some(f) => f.await.unwrap_or_default(),
        None => String::new(),
    };
    assert!(bad.contains("· UTC"), "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sites_zone_serves_readers_who_have_not_said_theirs_and_a_bad_one_is_refused() {
    let gd = Gpudash::start(&["--demo", "--timezone", "Europe/Berlin"]).await.unwrap();
    let html = reqwest::get(format!("{}/pending", gd.url)).await.unwrap();
    let html = html.text().await.unwrap_or_default();
    let status = html.split("status-text\">").nth(1).and_then(|s| s.split('<').next()).unwrap_or("(no status line)");
    assert!(html.contains(" CET") || html.contains(" CEST"), "the site's zone with its name; status line: {status}");
    assert!(!html.contains(" UTC"), "no UTC time on a Berlin site's page");
    drop(gd);
    let out = std::process::Command::new(gpudash_tests::bin())
        .args(["serve", "--demo", "--listen", "127.0.0.1:0", "--timezone", "Tokio"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"Tokio\"") && err.contains("IANA"), "{err}");
}
