//! History end to end: kill -9 at any moment leaves a database that opens with no partial batch;
//! corrupt and newer-schema files are left untouched while the live view keeps working; the
//! history API and charts serve recorded data.

use std::process::Command;
use std::time::Duration;

use gpudash_tests::{bin, free_port, wait_http_ok, Gpudash, Proc};

/// Runs SQL through Python's sqlite3 (an independent reader) and returns stdout.
fn sqlite(db: &std::path::Path, script: &str) -> String {
    let out = Command::new("/usr/bin/python3")
        .args([
            "-c",
            &format!("import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\n{script}"),
            &db.display().to_string(),
        ])
        .output()
        .expect("python3");
    assert!(out.status.success(), "sqlite3 script failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Waits (at most 10 s) until history has recorded the AGX Orin's GPUs: the first batch is in.
async fn wait_recorded(url: &str) {
    let q =
        format!("{url}/api/v1/history/series?node=orin-agx-01&metric=gpu_allocated&resource=nvidia.com/gpu&range=1h");
    let t = std::time::Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        let v: serde_json::Value = match reqwest::get(&q).await {
            Ok(r) => r.json().await.unwrap_or_default(),
            Err(_) => serde_json::Value::Null,
        };
        if v["points"].as_array().is_some_and(|p| !p.is_empty()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing recorded within 10 s");
}

fn start(db: &std::path::Path, extra: &[&str]) -> (Proc, String) {
    let port = free_port();
    let mut args: Vec<String> = vec![
        "serve".into(),
        "--demo".into(),
        // The series a demo agent adds are not what these tests count.
        "--demo-agents".into(),
        "false".into(),
        "--listen".into(),
        format!("127.0.0.1:{port}"),
        "--db".into(),
        db.display().to_string(),
        "--site-root".into(),
        gpudash_tests::site_root().display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    (Proc::spawn(&bin(), &args).expect("starting gpudash"), format!("http://127.0.0.1:{port}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_writes_never_leaves_a_broken_or_partial_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut last_samples = 0i64;
    for i in 0..15u64 {
        let (mut p, url) = start(&db, &["--history-resolution", "0.02"]);
        wait_http_ok(&format!("{url}/readyz"), Duration::from_secs(30))
            .await
            .unwrap_or_else(|e| panic!("{e}\n{}", p.output()));
        // Kill at a different moment each round, while batches are being written.
        tokio::time::sleep(Duration::from_millis(150 + (i * 97) % 600)).await;
        p.kill();
        let check = sqlite(
            &db,
            "print(c.execute('PRAGMA integrity_check').fetchone()[0])\n\
             n = c.execute('SELECT COUNT(*) FROM samples').fetchone()[0]\n\
             hb = int(c.execute(\"SELECT value FROM gpudash_meta WHERE key = 'heartbeat'\").fetchone()[0])\n\
             mx = c.execute('SELECT COALESCE(MAX(ts), 0) FROM samples').fetchone()[0]\n\
             print(n, hb >= mx)",
        );
        let mut lines = check.lines();
        assert_eq!(lines.next(), Some("ok"), "round {i}: integrity check failed: {check}");
        let mut f = lines.next().unwrap_or("").split_whitespace();
        let n: i64 = f.next().and_then(|x| x.parse().ok()).unwrap_or(-1);
        assert_eq!(
            f.next(),
            Some("True"),
            "round {i}: samples newer than the batch's heartbeat (partial batch): {check}"
        );
        assert!(n >= last_samples, "round {i}: recorded samples were lost ({n} < {last_samples})");
        last_samples = n;
    }
    assert!(last_samples > 0, "nothing was ever recorded");
    // A longer outage is recorded as a gap when gpudash comes back.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (mut p, url) = start(&db, &["--history-resolution", "0.02"]);
    wait_http_ok(&format!("{url}/readyz"), Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", p.output()));
    wait_recorded(&url).await;
    p.kill();
    let gaps = sqlite(
        &db,
        "print(c.execute(\"SELECT COUNT(*) FROM gaps WHERE reason = 'gpudash not running'\").fetchone()[0])",
    );
    assert!(gaps.parse::<i64>().unwrap_or(0) >= 1, "restarts after kills are recorded as gaps");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_or_newer_databases_are_left_alone_and_the_live_view_works() {
    let dir = tempfile::tempdir().unwrap();
    // A corrupt file.
    let junk = dir.path().join("junk.db");
    let bytes: Vec<u8> = (0..65_536u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&junk, &bytes).unwrap();
    let (p, url) = start(&junk, &[]);
    wait_http_ok(&format!("{url}/readyz"), Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", p.output()));
    let v: serde_json::Value =
        reqwest::get(format!("{url}/api/v1/cluster")).await.unwrap().json().await.unwrap_or_default();
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(8), "live view works");
    let st: serde_json::Value =
        reqwest::get(format!("{url}/api/v1/history/status")).await.unwrap().json().await.unwrap_or_default();
    assert_eq!(st["available"], false);
    assert!(st["problem"].as_str().unwrap_or("").contains("left untouched"), "{st}");
    let page = reqwest::get(format!("{url}/history")).await.unwrap().text().await.unwrap_or_default();
    assert!(page.contains("history disabled"), "the history page says why");
    // Neither the file's path nor SQLite's words reach a client: they are in the log, under the
    // id the status quotes.
    let junk_path = junk.display().to_string();
    let id =
        st["problem"].as_str().and_then(|p| p.split("(id ").nth(1)).and_then(|r| r.split(';').next()).unwrap_or("");
    assert!(!id.is_empty(), "{st}");
    for text in [st.to_string(), page.clone()] {
        assert!(!text.contains(&junk_path) && !text.contains("file is not a database"), "{text}");
    }
    assert!(p.output().contains(id) && p.output().contains(&junk_path), "the log has the id and the cause");
    drop(p);
    assert_eq!(std::fs::read(&junk).unwrap_or_default(), bytes, "the corrupt file was modified");

    // A database written by a newer gpudash (a migration this build does not know).
    let db = dir.path().join("newer.db");
    let (p, url) = start(&db, &["--history-resolution", "0.05"]);
    wait_http_ok(&format!("{url}/readyz"), Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", p.output()));
    wait_recorded(&url).await;
    drop(p);
    let before = sqlite(&db, "c.execute(\"INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time) VALUES \
        (9999, 'from the future', CURRENT_TIMESTAMP, 1, x'00', 0)\")\nc.commit()\nprint(c.execute('SELECT COUNT(*) FROM samples').fetchone()[0])");
    assert!(before.parse::<i64>().unwrap_or(0) > 0);
    let (p, url) = start(&db, &[]);
    wait_http_ok(&format!("{url}/readyz"), Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", p.output()));
    let st: serde_json::Value =
        reqwest::get(format!("{url}/api/v1/history/status")).await.unwrap().json().await.unwrap_or_default();
    assert!(st["problem"].as_str().unwrap_or("").contains("newer gpudash"), "{st}");
    let r = reqwest::get(format!("{url}/api/v1/cluster")).await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    drop(p);
    let after = sqlite(&db, "print(c.execute('SELECT COUNT(*) FROM samples').fetchone()[0])");
    assert_eq!(before, after, "nothing already recorded was lost");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_api_and_charts_serve_recorded_data() {
    let gd = Gpudash::start(&["--demo", "--history-resolution", "0.1"]).await.unwrap();
    wait_recorded(&gd.url).await;
    let s = gd
        .json("/api/v1/history/series?node=orin-agx-01&metric=gpu_allocated&resource=nvidia.com/gpu&range=1h")
        .await
        .unwrap();
    let pts = s["points"].as_array().cloned().unwrap_or_default();
    assert!(!pts.is_empty() && pts[0]["value"] == 4.0, "{s}");
    let pods = gd.json("/api/v1/history/pods?range=1h").await.unwrap();
    let ivs = pods["intervals"].as_array().cloned().unwrap_or_default();
    assert!(ivs.iter().any(|i| i["name"] == "anomaly-detector-6f8d7b5c4-r7zq9" && i["state"] == "pending"), "{pods}");
    let d = gd.json("/api/v1/history/diagnoses?range=24h").await.unwrap();
    assert!(d["events"].as_array().is_some_and(|e| e.iter().any(|e| e["code"] == "device-plugin-missing")), "{d}");
    let bad = reqwest::get(format!("{}/api/v1/history/series?metric=x&range=2y", gd.url)).await.unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    for chart in [
        "gpu.svg?node=orin-agx-01&resource=nvidia.com/gpu",
        "memory.svg?node=orin-nx-02&theme=dark",
        "pending.svg?",
        "waits.svg?",
        "pod.svg?namespace=vision&name=anomaly-detector-6f8d7b5c4-r7zq9",
    ] {
        let r = reqwest::get(format!("{}/charts/{chart}&range=1h", gd.url)).await.unwrap();
        assert_eq!(r.headers().get("content-type").and_then(|v| v.to_str().ok()), Some("image/svg+xml"), "{chart}");
        let body = r.text().await.unwrap_or_default();
        assert!(body.starts_with("<svg") && body.contains("<text"), "{chart}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_database_pauses_history_but_not_the_live_view() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let (p, url) = start(&db, &["--history-resolution", "0.1"]);
    wait_http_ok(&format!("{url}/readyz"), Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", p.output()));
    wait_recorded(&url).await;
    // Another process holds an exclusive lock longer than gpudash's 5 s busy timeout.
    let db2 = db.clone();
    let locker = tokio::task::spawn_blocking(move || {
        sqlite(&db2, "c.isolation_level = None\nc.execute('BEGIN EXCLUSIVE')\nimport time\ntime.sleep(9)\nc.execute('COMMIT')\nprint('released')")
    });
    let t = std::time::Instant::now();
    let mut saw_problem = false;
    while t.elapsed() < Duration::from_secs(8) {
        let st: serde_json::Value =
            reqwest::get(format!("{url}/api/v1/history/status")).await.unwrap().json().await.unwrap_or_default();
        if st["problem"].as_str().is_some_and(|p| p.contains("history writes failing")) {
            saw_problem = true;
            assert!(!st.to_string().contains("database is locked"), "SQLite's words stay in the log: {st}");
        }
        let live = reqwest::get(format!("{url}/api/v1/cluster")).await.unwrap();
        assert_eq!(live.status().as_u16(), 200, "the live view must not wait on the database");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(saw_problem, "the write failure is reported");
    assert_eq!(locker.await.unwrap_or_default(), "released");
    // Once the lock is gone, recording resumes and the problem clears.
    let t = std::time::Instant::now();
    loop {
        let st: serde_json::Value =
            reqwest::get(format!("{url}/api/v1/history/status")).await.unwrap().json().await.unwrap_or_default();
        if st["problem"].is_null() {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(15), "history did not recover: {st}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(p);
    assert_eq!(sqlite(&db, "print(c.execute('PRAGMA integrity_check').fetchone()[0])"), "ok");
}
