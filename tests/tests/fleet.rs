//! The fleet service end to end: three sites, each a `gpudash serve` watching its own simulator
//! (one requiring a token), and `gpudash fleet` on a real PostgreSQL (a throwaway cluster). A
//! change on a site reaches the fleet page in Chromium without a reload; a site killed goes
//! stale, then unreachable, and its history has a gap; the fleet service restarted keeps its
//! history; a bad sites file is refused naming the entry.

use std::time::{Duration, Instant};

use fantoccini::Locator;
use gpudash_sim::{start, Scenario, Simulator, TimelineMode};
use gpudash_tests::browser::{shot, wait_text};
use gpudash_tests::postgres::Postgres;
use gpudash_tests::{bin, free_port, root, site_root, wait_http_ok, with_browser, Gpudash, Proc};
use serde_json::Value;

fn scenario(rel: &str) -> Scenario {
    let text = std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    Scenario::from_text(rel, &text).unwrap_or_else(|e| panic!("{e}"))
}

async fn fleet(sites: &std::path::Path, db: &str) -> (Proc, String) {
    fleet_with(sites, db, &[]).await
}

async fn fleet_with(sites: &std::path::Path, db: &str, extra: &[&str]) -> (Proc, String) {
    let port = free_port();
    let mut args: Vec<String> = [
        "fleet",
        "--sites",
        &sites.display().to_string(),
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--database-url",
        db,
        "--stale-after",
        "20",
        "--unreachable-after",
        "6",
        "--history-resolution",
        "0.5",
        "--site-root",
        &site_root().display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let p = Proc::spawn(&bin(), &args).unwrap_or_else(|e| panic!("{e}"));
    let url = format!("http://127.0.0.1:{port}");
    if let Err(e) = wait_http_ok(&format!("{url}/readyz"), Duration::from_secs(60)).await {
        panic!("{e}\n{}", p.output());
    }
    (p, url)
}

async fn json(url: &str) -> Value {
    match reqwest::get(url).await {
        Ok(r) => r.json().await.unwrap_or_default(),
        Err(_) => Value::Null,
    }
}

async fn wait(url: &str, limit: Duration, pred: impl Fn(&Value) -> bool) -> Value {
    let t = Instant::now();
    loop {
        let v = json(url).await;
        if pred(&v) || t.elapsed() > limit {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn site<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["sites"].as_array().into_iter().flatten().find(|s| s["name"] == name).unwrap_or(&Value::Null)
}

const PENDING_POD: &str = r#"{"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "late-model-0", "namespace": "default", "creationTimestamp": null},
  "spec": {"containers": [{"name": "m", "image": "registry.factory.local/ml/late:1", "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]},
  "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/6 nodes are available: 6 Insufficient nvidia.com/gpu."}]}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_sites_on_one_screen_live_stale_unreachable_and_history_that_outlives_a_restart() {
    let pg = Postgres::start().unwrap_or_else(|e| panic!("{e}"));
    let sim_a = start(Simulator::new(gpudash_sim::demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let sim_b = start(
        Simulator::new(scenario("tests/scenarios/agent/agents.yaml")),
        ([127, 0, 0, 1], 0).into(),
        TimelineMode::Manual,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let sim_c = start(
        Simulator::new(scenario("tests/scenarios/onsite/gpu-unhealthy.yaml")),
        ([127, 0, 0, 1], 0).into(),
        TimelineMode::Manual,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let token = dir.path().join("c.token");
    std::fs::write(&token, "fleet-test-token-0123456789-abcdef\n").unwrap_or_default();
    let a = Gpudash::watching(&sim_a.url(), &[]).await.unwrap_or_else(|e| panic!("{e}"));
    let b = Gpudash::watching(&sim_b.url(), &[]).await.unwrap_or_else(|e| panic!("{e}"));
    let t = token.display().to_string();
    let mut c = Gpudash::watching(&sim_c.url(), &["--auth-token-file", &t]).await.unwrap_or_else(|e| panic!("{e}"));
    let sites = dir.path().join("sites.yaml");
    std::fs::write(
        &sites,
        format!(
            "sites:\n- {{name: plant-a, url: '{}'}}\n- {{name: plant-b, url: '{}'}}\n- {{name: plant-c, url: '{}', token_file: c.token}}\n",
            a.url, b.url, c.url
        ),
    )
    .unwrap_or_default();
    let (mut fp, furl) = fleet(&sites, &pg.url).await;
    let api = format!("{furl}/api/v1/fleet");
    let all_live = |v: &Value| {
        ["plant-a", "plant-b", "plant-c"]
            .iter()
            .all(|n| site(v, n)["state"] == "live" && site(v, n)["totals"].is_object())
    };
    let v = wait(&api, Duration::from_secs(30), all_live).await;
    assert!(all_live(&v), "{v}\n{}", fp.output());
    let pa = site(&v, "plant-a");
    assert_eq!(pa["url"], a.url.as_str());
    assert!(pa["totals"]["gpu_capacity"].as_u64().is_some_and(|c| c > 0), "{pa}");
    assert!(
        site(&v, "plant-c")["totals"]["warning"].as_u64().unwrap_or(0)
            + site(&v, "plant-c")["totals"]["critical"].as_u64().unwrap_or(0)
            > 0,
        "the unhealthy GPU site has diagnoses"
    );
    let pending_before = pa["totals"]["pending"].as_u64().unwrap_or(0);
    let metrics = reqwest::get(format!("{furl}/metrics"))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .text()
        .await
        .unwrap_or_default();
    assert!(metrics.contains(r#"gpudash_fleet_site_live{site="plant-a",state="live"} 1"#), "{metrics}");

    // A change on a site reaches the fleet page without a reload.
    let (furl2, sim_a2) = (furl.clone(), sim_a.sim.clone());
    with_browser(|cl| async move {
        cl.goto(&format!("{furl2}/")).await?;
        let card = "article.site[data-site='plant-a']";
        wait_text(&cl, &format!("{card} dd.pending"), &pending_before.to_string(), Duration::from_secs(10)).await?;
        cl.execute("window.__noReload = 42; return 1;", vec![]).await?;
        shot(&cl, "fleet-live.png").await?;
        let pod: Value = serde_json::from_str(PENDING_POD)?;
        sim_a2.apply(pod).map_err(|e| anyhow::anyhow!("{e}"))?;
        wait_text(&cl, &format!("{card} dd.pending"), &(pending_before + 1).to_string(), Duration::from_secs(15))
            .await?;
        let kept = cl.execute("return window.__noReload || 0;", vec![]).await?;
        assert_eq!(kept, serde_json::json!(42), "the page was not reloaded");
        Ok(())
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));

    // A site killed: stale, then unreachable — its last totals kept, never zeroed.
    let had = site(&json(&api).await, "plant-c")["totals"].clone();
    c.proc.kill();
    let v = wait(&api, Duration::from_secs(10), |v| site(v, "plant-c")["state"] == "stale").await;
    assert_eq!(site(&v, "plant-c")["state"], "stale", "{v}");
    assert!(site(&v, "plant-c")["stale_since"].is_string());
    assert_eq!(site(&v, "plant-c")["totals"], had, "the last view is kept while stale");
    let v = wait(&api, Duration::from_secs(20), |v| site(v, "plant-c")["state"] == "unreachable").await;
    assert_eq!(site(&v, "plant-c")["state"], "unreachable", "{v}");
    assert_eq!(v["sites"][0]["name"], "plant-c", "the most troubled site first");
    let furl3 = furl.clone();
    with_browser(|cl| async move {
        cl.goto(&format!("{furl3}/")).await?;
        let el = cl.find(Locator::Css("article.site[data-site='plant-c']")).await?;
        assert_eq!(el.attr("data-state").await?.as_deref(), Some("unreachable"));
        wait_text(&cl, "article.site[data-site='plant-c'] .badge", "unreachable since", Duration::from_secs(5)).await?;
        shot(&cl, "fleet-unreachable.png").await?;
        // The kiosk: dark, large, no links to follow on a wall screen; still live.
        cl.goto(&format!("{furl3}/?kiosk=1")).await?;
        let class = cl.find(Locator::Css("html")).await?.attr("class").await?.unwrap_or_default();
        assert!(class.contains("kiosk"), "{class}");
        assert!(cl.find_all(Locator::Css("article.site h2 a")).await?.is_empty(), "no links in kiosk mode");
        wait_text(&cl, "article.site[data-site='plant-c'] .badge", "unreachable since", Duration::from_secs(5)).await?;
        shot(&cl, "fleet-kiosk.png").await?;
        Ok(())
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));

    // Its history in PostgreSQL: samples while it was live, then a gap.
    let h = json(&format!("{furl}/api/v1/fleet/history?site=plant-c&metric=site_nodes&range=1h")).await;
    assert!(h["points"].as_array().is_some_and(|p| !p.is_empty()), "{h}");
    assert!(h["gaps"].as_array().is_some_and(|g| !g.is_empty()), "the outage is a gap: {h}");
    let before = json(&format!("{furl}/api/v1/fleet/history?site=plant-a&metric=site_pending&range=1h")).await;
    let first_ts = before["points"][0]["ts"].as_i64().unwrap_or(0);
    assert!(first_ts > 0, "{before}");
    let chart =
        reqwest::get(format!("{furl}/charts/site.svg?site=plant-c&range=1h")).await.unwrap_or_else(|e| panic!("{e}"));
    let svg = chart.text().await.unwrap_or_default();
    assert!(
        svg.contains("GPU units held") && svg.contains("pending pods") && svg.contains("plant-c"),
        "the site's chart from PostgreSQL"
    );

    // The fleet service restarted on the same database keeps its history.
    fp.kill();
    let (fp2, furl) = fleet(&sites, &pg.url).await;
    let after = json(&format!("{furl}/api/v1/fleet/history?site=plant-a&metric=site_pending&range=1h")).await;
    assert_eq!(after["points"][0]["ts"].as_i64(), Some(first_ts), "nothing already written is lost: {after}");
    let v =
        wait(&format!("{furl}/api/v1/fleet"), Duration::from_secs(30), |v| site(v, "plant-a")["state"] == "live").await;
    assert_eq!(site(&v, "plant-a")["totals"]["pending"].as_u64(), Some(pending_before + 1), "{v}");
    drop(fp2);
    drop((a, b, sim_b, sim_c));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_sites_file_is_refused_naming_the_entry() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sites = dir.path().join("sites.yaml");
    std::fs::write(&sites, "sites:\n- {name: ok, url: 'http://127.0.0.1:1'}\n- {name: broken, url: 'gpudash.local'}\n")
        .unwrap_or_default();
    let args: Vec<String> =
        ["fleet", "--sites", &sites.display().to_string(), "--database-url", "postgres://nobody@127.0.0.1:1/none"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let mut p = Proc::spawn(&bin(), &args).unwrap_or_else(|e| panic!("{e}"));
    let code = p.wait_exit(Duration::from_secs(20));
    assert!(code.is_some_and(|c| c != 0), "exits non-zero");
    let out = p.output();
    assert!(out.contains(r#"entry 2 ("broken"): url"#), "{out}");
}

/// The fleet page serves through gpudash's own accept loop: a connection that sends its headers
/// a byte at a time is closed at the header-read timeout while the page answers, and SIGTERM
/// (Kubernetes stopping the pod) ends the service cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_connections_are_closed_and_sigterm_ends_the_fleet_service() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let pg = Postgres::start().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sites = dir.path().join("sites.yaml");
    std::fs::write(&sites, "sites:\n- {name: far, url: 'http://127.0.0.1:1'}\n").unwrap_or_default();
    let (mut fp, furl) = fleet_with(&sites, &pg.url, &["--header-read-timeout", "1"]).await;
    let addr = furl.trim_start_matches("http://").to_string();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap_or_else(|e| panic!("{e}"));
    let t = Instant::now();
    let mut closed = false;
    for b in b"GET / HTTP/1.1\r\nHost: x\r\n".iter().take(20) {
        if slow.write_all(&[*b]).await.is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        let mut buf = [0u8; 256];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(10), slow.read(&mut buf)).await {
            if n == 0 || String::from_utf8_lossy(&buf[..n]).contains("408") {
                closed = true;
                break;
            }
        }
    }
    assert!(closed, "a connection dribbling its headers was still open after {:?}", t.elapsed());
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    wait_http_ok(&format!("{furl}/readyz"), Duration::from_secs(5)).await.unwrap_or_else(|e| panic!("{e}"));
    let pid = fp.pid().to_string();
    let killed = std::process::Command::new("kill").args(["-TERM", &pid]).status().is_ok_and(|s| s.success());
    assert!(killed);
    let code = fp.wait_exit(Duration::from_secs(15));
    assert_eq!(code, Some(0), "SIGTERM ends the fleet service cleanly:\n{}", fp.output());
}
