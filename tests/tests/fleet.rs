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
    Scenario::from_text(rel, &text).expect("the scenario")
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
    let p = Proc::spawn(&bin(), &args).expect("starting gpudash fleet");
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
    let pg = Postgres::start().unwrap();
    let sim_a = start(Simulator::new(gpudash_sim::demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual)
        .await
        .unwrap();
    let sim_b = start(
        Simulator::new(scenario("tests/scenarios/agent/agents.yaml")),
        ([127, 0, 0, 1], 0).into(),
        TimelineMode::Manual,
    )
    .await
    .unwrap();
    let sim_c = start(
        Simulator::new(scenario("tests/scenarios/onsite/gpu-unhealthy.yaml")),
        ([127, 0, 0, 1], 0).into(),
        TimelineMode::Manual,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("c.token");
    std::fs::write(&token, "fleet-test-token-0123456789-abcdef\n").unwrap_or_default();
    let a = Gpudash::watching(&sim_a.url(), &[]).await.unwrap();
    let b = Gpudash::watching(&sim_b.url(), &[]).await.unwrap();
    let t = token.display().to_string();
    let mut c = Gpudash::watching(&sim_c.url(), &["--auth-token-file", &t]).await.unwrap();
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
    let metrics = reqwest::get(format!("{furl}/metrics")).await.unwrap().text().await.unwrap_or_default();
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
    .unwrap();

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
        // The card's state and its badge read together, each time from the page as it is now
        // (the live page may redraw the card between a find and a read).
        let card = "article.site[data-site='plant-c'][data-state='unreachable'] .badge";
        wait_text(&cl, card, "unreachable since", Duration::from_secs(15)).await?;
        shot(&cl, "fleet-unreachable.png").await?;
        // The kiosk: dark, large, no links to follow on a wall screen; still live.
        cl.goto(&format!("{furl3}/?kiosk=1")).await?;
        let class = cl.find(Locator::Css("html")).await?.attr("class").await?.unwrap_or_default();
        assert!(class.contains("kiosk"), "{class}");
        assert!(cl.find_all(Locator::Css("article.site h2 a")).await?.is_empty(), "no links in kiosk mode");
        wait_text(&cl, "article.site[data-site='plant-c'] .badge", "unreachable since", Duration::from_secs(15))
            .await?;
        shot(&cl, "fleet-kiosk.png").await?;
        Ok(())
    })
    .await
    .unwrap();

    // Its history in PostgreSQL: samples while it was live, then a gap.
    let h = json(&format!("{furl}/api/v1/fleet/history?site=plant-c&metric=site_nodes&range=1h")).await;
    assert!(h["points"].as_array().is_some_and(|p| !p.is_empty()), "{h}");
    assert!(h["gaps"].as_array().is_some_and(|g| !g.is_empty()), "the outage is a gap: {h}");
    let before = json(&format!("{furl}/api/v1/fleet/history?site=plant-a&metric=site_pending&range=1h")).await;
    let first_ts = before["points"][0]["ts"].as_i64().unwrap_or(0);
    assert!(first_ts > 0, "{before}");
    let chart = reqwest::get(format!("{furl}/charts/site.svg?site=plant-c&range=1h")).await.unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    let sites = dir.path().join("sites.yaml");
    std::fs::write(&sites, "sites:\n- {name: ok, url: 'http://127.0.0.1:1'}\n- {name: broken, url: 'gpudash.local'}\n")
        .unwrap_or_default();
    let args: Vec<String> =
        ["fleet", "--sites", &sites.display().to_string(), "--database-url", "postgres://nobody@127.0.0.1:1/none"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let mut p = Proc::spawn(&bin(), &args).unwrap();
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
    let pg = Postgres::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sites = dir.path().join("sites.yaml");
    std::fs::write(&sites, "sites:\n- {name: far, url: 'http://127.0.0.1:1'}\n").unwrap_or_default();
    let (mut fp, furl) = fleet_with(&sites, &pg.url, &["--header-read-timeout", "1"]).await;
    let addr = furl.trim_start_matches("http://").to_string();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
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
    wait_http_ok(&format!("{furl}/readyz"), Duration::from_secs(5)).await.unwrap();
    let pid = fp.pid().to_string();
    let killed = std::process::Command::new("kill").args(["-TERM", &pid]).status().is_ok_and(|s| s.success());
    assert!(killed);
    let code = fp.wait_exit(Duration::from_secs(15));
    assert_eq!(code, Some(0), "SIGTERM ends the fleet service cleanly:\n{}", fp.output());
    assert!(fp.output().contains("last tick written"), "and writes its last history tick first:\n{}", fp.output());
}

/// The fleet takes the site's sign-in: a token file closes everything but the probes (the page
/// sends a browser to the login form, whose cookie then opens it; `POST /logout` ends it), and
/// an authenticating proxy's header counts only from the addresses named `--trusted-proxy`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_takes_the_sites_sign_in_and_a_proxy_only_from_its_address() {
    let pg = Postgres::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sites = dir.path().join("sites.yaml");
    std::fs::write(&sites, "sites:\n- {name: far, url: 'http://127.0.0.1:1'}\n").unwrap_or_default();
    let tf = dir.path().join("token");
    std::fs::write(&tf, "fleet-sign-in-token-0123456789-abcdef\n").unwrap_or_default();
    let t = tf.display().to_string();
    let extra =
        ["--auth-token-file", t.as_str(), "--auth-proxy-header", "X-Forwarded-User", "--trusted-proxy", "127.0.0.2"];
    let (_fp, furl) = fleet_with(&sites, &pg.url, &extra).await;
    let client = |from: [u8; 4]| {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .local_address(std::net::IpAddr::from(from))
            .build()
            .unwrap()
    };
    let (direct, proxy) = (client([127, 0, 0, 1]), client([127, 0, 0, 2]));
    let status = |r: reqwest::Result<reqwest::Response>| r.map(|r| r.status().as_u16()).unwrap();
    let api = format!("{furl}/api/v1/fleet");
    assert_eq!(status(direct.get(&api).send().await), 401);
    assert_eq!(status(direct.get(format!("{furl}/api/v1/fleet/stream")).send().await), 401);
    assert_eq!(status(direct.get(format!("{furl}/healthz")).send().await), 200);
    let page = direct.get(format!("{furl}/")).header("accept", "text/html").send().await.unwrap();
    assert_eq!(page.status().as_u16(), 303);
    assert_eq!(page.headers().get("location").and_then(|v| v.to_str().ok()), Some("/login"));
    // The proxy's header from anyone but the proxy is no sign-in.
    assert_eq!(status(direct.get(&api).header("X-Forwarded-User", "mallory").send().await), 401);
    assert_eq!(status(proxy.get(&api).header("X-Forwarded-User", "operator@factory").send().await), 200);
    assert_eq!(status(proxy.get(&api).send().await), 401, "the proxy without the header");
    assert_eq!(status(direct.get(&api).bearer_auth("fleet-sign-in-token-0123456789-abcdef").send().await), 200);
    let login =
        direct.post(format!("{furl}/login")).body("token=fleet-sign-in-token-0123456789-abcdef").send().await.unwrap();
    assert_eq!(login.status().as_u16(), 303);
    let cookie = login.headers().get("set-cookie").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().unwrap_or("").to_string();
    let page = direct.get(format!("{furl}/")).header("cookie", &pair).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let body = page.text().await.unwrap_or_default();
    assert!(body.contains("data-site=\"far\""), "{body}");
    let out = direct
        .post(format!("{furl}/logout"))
        .header("cookie", &pair)
        .header("origin", furl.clone())
        .send()
        .await
        .unwrap();
    assert!(out.status().is_redirection() || out.status().is_success(), "{}", out.status());
    assert_eq!(status(direct.get(&api).header("cookie", &pair).send().await), 401, "the session ended");
}

/// A fake site on 127.0.0.1 that answers every request with an event stream and then `body`
/// (once, or with `repeat` in 1 MiB pieces up to `limit` bytes), then holds the connection open.
async fn fake_site(body: &'static [u8], repeat: bool, limit: usize) -> (String, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port for the fake site");
    let url = format!("http://{}", l.local_addr().expect("the fake site's address"));
    let task = tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 << 10 {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                if s.write_all(head).await.is_err() {
                    return;
                }
                let piece: Vec<u8> = if repeat {
                    body.iter().copied().cycle().take(body.len().max(1 << 20)).collect()
                } else {
                    body.to_vec()
                };
                let mut sent = 0;
                loop {
                    if s.write_all(&piece).await.is_err() {
                        return;
                    }
                    sent += piece.len();
                    if !repeat || sent >= limit {
                        break;
                    }
                }
                tokio::time::sleep(Duration::from_secs(120)).await;
            });
        }
    });
    (url, task)
}

/// Sites that send garbage, a view that is not one, bytes that are not UTF-8, an event that
/// never ends (past 64 MiB), nothing but keep-alives, or nothing at all after the headers
/// (dropped after 40 s), beside a real site: each hostile one is
/// shown with a plain reason, the real one stays live, and the fleet's memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_sites_get_a_plain_reason_and_leave_the_others_alone() {
    let pg = Postgres::start().unwrap();
    let real = Gpudash::start(&["--demo"]).await.unwrap();
    let (garbage, _g) = fake_site(b"data: {\"revision\": \"not a view\"\n\n", false, 0).await;
    let (binary, _b) = fake_site(b"data: \xff\xfe\xfd\n\n", false, 0).await;
    let (endless, _e) = fake_site(b"data: xxxxxxxxxxxxxxxx", true, 80 << 20).await;
    let (chatty, _c) = fake_site(b": keep-alive\n\n", true, 200 << 20).await;
    let (silent, _s) = fake_site(b"", false, 0).await;
    let dir = tempfile::tempdir().unwrap();
    let sites = dir.path().join("sites.yaml");
    std::fs::write(
        &sites,
        format!(
            "sites:\n- {{name: real, url: '{}'}}\n- {{name: garbage, url: '{garbage}'}}\n\
             - {{name: binary, url: '{binary}'}}\n- {{name: endless, url: '{endless}'}}\n\
             - {{name: chatty, url: '{chatty}'}}\n- {{name: silent, url: '{silent}'}}\n",
            real.url
        ),
    )
    .unwrap_or_default();
    let (fp, furl) = fleet(&sites, &pg.url).await;
    let api = format!("{furl}/api/v1/fleet");
    let said = |v: &Value, n: &str, what: &str| site(v, n)["error"].as_str().is_some_and(|e| e.contains(what));
    let all = |v: &Value| {
        site(v, "real")["state"] == "live"
            && said(v, "garbage", "not a gpudash view")
            && said(v, "binary", "not UTF-8")
            && said(v, "endless", "an event larger than 64 MiB")
            && said(v, "silent", "silent for 40 s")
    };
    // The silent one is dropped after 40 s without a byte (sites send a keep-alive every 15 s).
    let v = wait(&api, Duration::from_secs(90), all).await;
    assert!(all(&v), "{v}\n{}", fp.output());
    assert!(site(&v, "real")["totals"]["nodes"].as_u64().is_some_and(|n| n > 0), "{v}");
    for n in ["garbage", "binary", "endless", "silent"] {
        assert_ne!(site(&v, n)["state"], "live", "{n}: {v}");
        assert!(site(&v, n)["totals"].is_null(), "{n}: never a view, never zeros: {v}");
    }
    // Keep-alives alone: heard from, no view, nothing held.
    assert!(site(&v, "chatty")["totals"].is_null(), "{v}");
    let rss_kib = std::fs::read_to_string(format!("/proc/{}/status", fp.pid()))
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("VmHWM:").and_then(|x| x.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(0);
    println!("fleet peak RSS beside hostile sites: {} MiB", rss_kib / 1024);
    assert!(rss_kib > 0 && rss_kib < 400 * 1024, "fleet peak RSS {rss_kib} KiB");
    assert!(fp.output().contains("an event larger than 64 MiB"), "logged per site:\n{}", fp.output());
}
