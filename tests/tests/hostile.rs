//! What a hostile page, tenant, peer or load tried (issue 34), each against a running gpudash or
//! gpudash-agent: markup in every form field, cross-site posts, nested YAML, slow and silent
//! connections under a descriptor limit, DNS rebinding, guessed tokens, nonsense quantities, and
//! the agent under thousands of idle connections, a 100 MiB line and a command that never stops
//! printing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use gpudash_tests::{free_port, with_browser, Gpudash, Proc};

const HOSTILE: &str =
    r#"</textarea>"><h1 id="injected">X</h1><meta http-equiv="refresh" content="0;url=about:blank"><x-injected>"#;

fn addr(url: &str) -> String {
    url.trim_start_matches("http://").split('/').next().unwrap_or("").to_string()
}

/// `/healthz` on a fresh connection: how long the answer took (a failure counts as 10 s).
fn healthz_time(url: &str) -> Duration {
    let t = Instant::now();
    let ok = (|| -> std::io::Result<bool> {
        let mut s = TcpStream::connect(addr(url))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")?;
        let mut buf = [0u8; 256];
        let n = s.read(&mut buf)?;
        Ok(buf[..n].starts_with(b"HTTP/1.1 200"))
    })()
    .unwrap_or(false);
    if ok {
        t.elapsed()
    } else {
        Duration::from_secs(10)
    }
}

/// Whether the server closed `s` (a read returns end of file or a reset).
fn closed_by_server(s: &mut TcpStream) -> bool {
    let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
    let mut b = [0u8; 512];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => true,
        Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_in_every_fit_field_stays_text_in_chromium() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    // The server's HTML: the paste is text inside the textarea, never markup.
    let http = reqwest::Client::new();
    let html = http
        .post(format!("{}/fit", gd.url))
        .form(&[("yaml", HOSTILE), ("memory_request", HOSTILE)])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap_or_default();
    assert!(!html.contains(r#"<h1 id="injected">"#), "markup reflected:\n{html}");
    assert!(html.contains("&lt;/textarea>"), "the textarea's text is escaped");
    let fields = [
        "gpu_resource",
        "gpu_count",
        "cpu_request",
        "cpu_limit",
        "memory_request",
        "memory_limit",
        "node_selector",
        "tolerations",
        "runtime_class",
        "replicas",
        "namespace",
    ];
    let url = gd.url.clone();
    with_browser(|c| async move {
        c.goto(&format!("{url}/fit")).await?;
        // Every field, then the paste, filled with markup and submitted as a person would.
        let fill = format!(
            "const v = arguments[0]; for (const n of {fields:?}) {{ document.querySelector(`input[name=${{n}}]`).value = v; }} \
                document.querySelector('textarea[name=yaml]').value = v; document.querySelector('form.fit-form').submit();"
        );
        c.execute(&fill, vec![serde_json::json!(HOSTILE)]).await?;
        let t = Instant::now();
        loop {
            let u = c.current_url().await?;
            let ready = c.execute("return document.readyState === 'complete' && !!document.querySelector('form.fit-form')", vec![]).await?;
            if u.as_str().contains("/fit") && ready == serde_json::json!(true) {
                break;
            }
            anyhow::ensure!(t.elapsed() < Duration::from_secs(20), "the form's answer did not load: {u}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let u = c.current_url().await?;
        anyhow::ensure!(u.as_str().starts_with(&url), "redirected away by injected markup: {u}");
        let injected = c.execute("return document.querySelectorAll('#injected, meta[http-equiv], x-injected').length", vec![]).await?;
        anyhow::ensure!(injected == serde_json::json!(0), "injected elements in the DOM: {injected}");
        let yaml = c.execute("return document.querySelector('textarea[name=yaml]').value", vec![]).await?;
        anyhow::ensure!(yaml == serde_json::json!(HOSTILE), "the paste comes back as the text pasted: {yaml}");
        for f in fields {
            let v = c.execute(&format!("return document.querySelector('input[name={f}]').value"), vec![]).await?;
            anyhow::ensure!(v == serde_json::json!(HOSTILE), "{f} comes back as typed: {v}");
        }
        Ok(())
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posts_from_other_sites_are_refused_and_other_hosts_get_421() {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("token");
    std::fs::write(&tf, "a-factory-token-of-32-characters-at-least\n").unwrap();
    let open = Gpudash::start(&["--demo", "--allowed-host", "gpu.factory.example"]).await.unwrap();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let post = |path: &str, headers: &[(&'static str, String)]| {
        let mut r =
            http.post(format!("{}{path}", open.url)).header("content-type", "application/x-www-form-urlencoded");
        for (k, v) in headers {
            r = r.header(*k, v.clone());
        }
        r.body("gpu_count=1").send()
    };
    let host = addr(&open.url);
    for path in ["/fit", "/api/v1/fit", "/logout", "/login"] {
        for h in [
            vec![("sec-fetch-site", "cross-site".to_string())],
            vec![("sec-fetch-site", "same-site".to_string())],
            vec![("origin", "http://evil.example".to_string())],
            vec![("origin", "null".to_string())],
        ] {
            let r = post(path, &h).await.unwrap();
            assert_eq!(r.status().as_u16(), 403, "{path} {h:?}");
        }
        let same = post(path, &[("sec-fetch-site", "same-origin".into()), ("origin", format!("http://{host}"))])
            .await
            .unwrap();
        assert_ne!(same.status().as_u16(), 403, "{path} from gpudash's own page");
    }
    let curl = post("/fit", &[]).await.unwrap();
    assert_eq!(curl.status().as_u16(), 200, "no browser headers: a script");
    // DNS rebinding: a page on evil.example, its name now resolving to gpudash.
    let get = |h: &'static str| http.get(format!("{}/api/v1/cluster", open.url)).header("host", h).send();
    assert_eq!(get("evil.example").await.unwrap().status().as_u16(), 421);
    assert_eq!(get("evil.example:8080").await.unwrap().status().as_u16(), 421);
    for ok in ["gpu.factory.example", "localhost:8080", "gpudash.gpudash.svc.cluster.local:8080", "10.42.0.7:8080"] {
        assert_eq!(get(ok).await.unwrap().status().as_u16(), 200, "{ok}");
    }
    // With sign-in on, the Host does not matter (a rebinding page has no session), but a
    // cross-site sign-out is still refused.
    let signed = Gpudash::start(&["--demo", "--auth-token-file", &tf.display().to_string()]).await.unwrap();
    let r = http
        .get(format!("{}/api/v1/cluster", signed.url))
        .header("host", "evil.example")
        .header("Authorization", "bearer a-factory-token-of-32-characters-at-least")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "a lower-case bearer scheme is accepted");
    let r = http.post(format!("{}/logout", signed.url)).header("sec-fetch-site", "cross-site").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guessing_the_token_is_slowed_then_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("token");
    std::fs::write(&tf, "a-factory-token-of-32-characters-at-least\n").unwrap();
    let gd = Gpudash::start(&["--demo", "--auth-token-file", &tf.display().to_string()]).await.unwrap();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let t = Instant::now();
    let mut codes = Vec::new();
    for i in 0..12 {
        let r = http.post(format!("{}/login", gd.url)).body(format!("token=guess-{i}")).send().await.unwrap();
        codes.push(r.status().as_u16());
    }
    let took = t.elapsed();
    eprintln!("figure: 12 wrong sign-ins took {took:?}: {codes:?}");
    assert_eq!(&codes[..10], &[401; 10], "{codes:?}");
    assert_eq!(&codes[10..], &[429, 429], "{codes:?}");
    // 0.25 s × (1 + 2 + … + 10) for the ten wrong ones.
    assert!(took >= Duration::from_secs(13), "1,000 guesses must not take 0.3 s: 12 took {took:?}");
    let r = http
        .post(format!("{}/login", gd.url))
        .body("token=a-factory-token-of-32-characters-at-least")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 429, "still refused within the minute, even the right token");
    assert!(r.headers().get("retry-after").is_some());
    // Bearer tokens (scripts, Prometheus) are not throttled by sign-in guesses.
    let ok = http
        .get(format!("{}/api/v1/cluster", gd.url))
        .bearer_auth("a-factory-token-of-32-characters-at-least")
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status().as_u16(), 200);
    // Behind the proxy (loopback: the trusted one when none is named) each client is its own:
    // another client signs in while the first is locked out.
    let other = http
        .post(format!("{}/login", gd.url))
        .header("x-forwarded-for", "203.0.113.9")
        .body("token=a-factory-token-of-32-characters-at-least")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status().as_u16(), 303, "one client's guesses locked out another");
    // Bearer guesses are throttled too (6,301 went through in 5 s): ten, then 429; the right
    // token still passes.
    let mut codes = Vec::new();
    for i in 0..12 {
        let r = http
            .get(format!("{}/api/v1/cluster", gd.url))
            .header("x-forwarded-for", "198.51.100.7")
            .bearer_auth(format!("guess-{i}"))
            .send()
            .await
            .unwrap();
        codes.push(r.status().as_u16());
    }
    assert_eq!(&codes[..10], &[401; 10], "{codes:?}");
    assert_eq!(&codes[10..], &[429, 429], "{codes:?}");
    // A 16-character token is refused at start.
    std::fs::write(&tf, "passwordpassword\n").unwrap();
    let out = std::process::Command::new(gpudash_tests::bin())
        .args(["serve", "--demo", "--auth-token-file", &tf.display().to_string(), "--db"])
        .arg(dir.path().join("h.db"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("at least 32 characters"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_yaml_and_nonsense_quantities_are_refused_and_the_probes_stay_fast() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let http = reqwest::Client::new();
    let deep = format!("kind: Pod\nspec: {}{}", "[".repeat(32_000), "]".repeat(32_000));
    let t = Instant::now();
    let r = http
        .post(format!("{}/api/v1/fit", gd.url))
        .header("content-type", "application/yaml")
        .body(deep.clone())
        .send()
        .await
        .unwrap();
    let code = r.status().as_u16();
    let body = r.text().await.unwrap_or_default();
    assert!(matches!(code, 400 | 422) && body.contains("nested"), "{code} {body}");
    let refused_in = t.elapsed();
    assert!(refused_in < Duration::from_millis(500), "refused before parsing: {refused_in:?}");
    // Eight senders at once, for three seconds: /healthz still answers within 100 ms.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut senders = Vec::new();
    for _ in 0..8 {
        let (http, url, deep, stop) = (http.clone(), gd.url.clone(), deep.clone(), stop.clone());
        senders.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = http.post(format!("{url}/fit")).form(&[("yaml", deep.as_str())]).send().await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let url = gd.url.clone();
    let times = tokio::task::spawn_blocking(move || {
        (0..30)
            .map(|_| {
                std::thread::sleep(Duration::from_millis(100));
                healthz_time(&url)
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for s in senders {
        let _ = s.await;
    }
    // Nine in ten within 100 ms and none past 300 ms: a starved server fails both; one probe
    // that met a busy moment of the two cores (105 ms once, on a debug build) fails neither.
    let mut sorted = times.clone();
    sorted.sort();
    let (p90, worst) = (sorted.get(26).copied().unwrap_or_default(), sorted.last().copied().unwrap_or_default());
    eprintln!(
        "figure: /healthz p90 {p90:?}, worst {worst:?} of 30 under 8 senders of 32,000-deep YAML (refused in {refused_in:?})"
    );
    assert!(sorted.len() == 30, "{times:?}");
    assert!(p90 <= Duration::from_millis(100), "/healthz p90 {p90:?} under 8 senders of nested YAML: {sorted:?}");
    assert!(worst <= Duration::from_millis(300), "/healthz took {worst:?} under 8 senders of nested YAML: {sorted:?}");
    // Quantities the API server refuses are refused, in its words.
    for (field, value, words) in [
        ("memory_request", "-5Gi", "must be greater than or equal to 0"),
        ("gpu_count", "-3", "must be greater than or equal to 0"),
        ("gpu_count", "0.5", "must be an integer"),
        ("cpu_request", "-1", "must be greater than or equal to 0"),
    ] {
        let r = http
            .post(format!("{}/api/v1/fit", gd.url))
            .json(&serde_json::json!({ field: value }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 422, "{field}={value}");
        let v: serde_json::Value = r.json().await.unwrap_or_default();
        assert_eq!(v["error"]["field"], field, "{v}");
        assert!(v["error"]["message"].as_str().unwrap_or("").contains(words), "{field}={value}: {v}");
    }
    // Too large to count: taken, as the API server takes it, and placed nowhere (it was "5/8
    // nodes can run it").
    let r = http
        .post(format!("{}/api/v1/fit", gd.url))
        .json(&serde_json::json!({"memory_request": "999999999999999999999Ei"}))
        .send()
        .await
        .unwrap();
    let v: serde_json::Value = r.json().await.unwrap_or_default();
    assert_eq!(v["placeable"], 0, "{v}");
    assert!(v["nodes"].as_array().is_some_and(|n| !n.is_empty() && n.iter().all(|n| n["fits"] == false)), "{v}");
    assert!(v["summary"].as_str().unwrap_or("").contains("Insufficient memory"), "{v}");
    // No store of live data in caches.
    for path in ["/metrics", "/api/v1/history/status", "/api/v1/cluster"] {
        let r = http.get(format!("{}{path}", gd.url)).send().await.unwrap();
        assert_eq!(r.headers().get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"), "{path}");
    }
    let svg = http
        .get(format!("{}/charts/gpu.svg?node=%00%1b&resource=nvidia.com/gpu&range=1h", gd.url))
        .send()
        .await
        .unwrap();
    let csp = svg.headers().get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    let text = svg.text().await.unwrap_or_default();
    assert!(!text.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')), "valid XML");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_silent_connections_are_closed_and_healthz_answers_while_1000_are_held() {
    let gd = Gpudash::start(&["--demo", "--header-read-timeout", "2"]).await.unwrap();
    let url = gd.url.clone();
    let (held, times, closed) = tokio::task::spawn_blocking(move || {
        let mut conns: Vec<TcpStream> = Vec::new();
        for i in 0..1000 {
            let Ok(mut s) = TcpStream::connect(addr(&url)) else { break };
            // Half send nothing; half start a request and stall.
            if i % 2 == 0 {
                let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
            }
            conns.push(s);
        }
        let held = conns.len();
        let times: Vec<Duration> = (0..10).map(|_| healthz_time(&url)).collect();
        // A slowloris: one header byte a second; the header-read timeout ends it all the same.
        let mut slow = TcpStream::connect(addr(&url)).ok();
        if let Some(s) = slow.as_mut() {
            let _ = s.write_all(b"GET / HTTP/1.1\r\n");
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(4) {
            if let Some(s) = slow.as_mut() {
                let _ = s.write_all(b"X");
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        let closed = conns.iter_mut().map(closed_by_server).filter(|c| *c).count()
            + usize::from(slow.as_mut().is_some_and(closed_by_server));
        (held, times, closed)
    })
    .await
    .unwrap();
    assert_eq!(held, 1000, "all connections opened");
    let worst = times.iter().max().copied().unwrap_or_default();
    eprintln!("figure: /healthz worst {worst:?} of 10 with 1,000 silent and stalled connections held; {closed} of 1,001 closed by the 2 s header-read timeout");
    assert!(worst <= Duration::from_millis(100), "/healthz took {worst:?} with 1,000 hostile connections held");
    assert_eq!(closed, 1001, "the header-read timeout closed every silent and slow connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_a_descriptor_limit_a_flood_leaves_no_accept_errors_and_healthz_comes_back() {
    // gpudash under a 512-descriptor limit: its cap is 384 connections; 600 are opened.
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let bin = gpudash_tests::bin();
    let args: Vec<String> = [
        "--nofile=512:512",
        &bin.display().to_string(),
        "serve",
        "--demo",
        "--demo-agents",
        "false",
        "--header-read-timeout",
        "2",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--db",
        &dir.path().join("h.db").display().to_string(),
        "--site-root",
        &gpudash_tests::site_root().display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let gd = Proc::spawn(std::path::Path::new("/usr/bin/prlimit"), &args).unwrap();
    let url = format!("http://127.0.0.1:{port}");
    gpudash_tests::wait_http_ok(&format!("{url}/readyz"), Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", gd.output()));
    let u = url.clone();
    let back = tokio::task::spawn_blocking(move || {
        let conns: Vec<TcpStream> = (0..600).filter_map(|_| TcpStream::connect(addr(&u)).ok()).collect();
        // Within the header-read timeout and a little, /healthz answers again.
        let t = Instant::now();
        let mut back = None;
        while t.elapsed() < Duration::from_secs(6) {
            if healthz_time(&u) < Duration::from_secs(1) {
                back = Some(t.elapsed());
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        drop(conns);
        back
    })
    .await
    .unwrap();
    // The refusal is logged by the server as it happens; read its log until it shows (bounded).
    let t = Instant::now();
    let mut log = gd.output();
    while !log.contains("connection cap reached") && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        log = gd.output();
    }
    eprintln!("figure: 600 connections under a 512-descriptor limit: /healthz answered again after {back:?}");
    assert!(back.is_some(), "/healthz did not come back:\n{log}");
    assert!(!log.contains("Too many open files"), "accept ran out of descriptors:\n{log}");
    assert!(log.contains("connection cap lowered") && log.contains("connection cap reached"), "{log}");
}

/// The agent, serving on a free port with `--pod-resources off` and `tegrastats` played by `cmd`.
fn agent(cmd: &str) -> (Proc, String) {
    let port = free_port();
    let exe = gpudash_tests::bin().with_file_name("gpudash-agent");
    let args: Vec<String> =
        ["--listen", &format!("127.0.0.1:{port}"), "--pod-resources", "off", "--interval", "1", "--tegrastats", cmd]
            .iter()
            .map(|s| s.to_string())
            .collect();
    (
        Proc::spawn(&exe, &args)
            .unwrap_or_else(|e| panic!("{} (build it with cargo build -p gpudash-agent): {e}", exe.display())),
        format!("http://127.0.0.1:{port}"),
    )
}

/// A report from the agent, asked in two packets with a query string.
fn split_report(url: &str) -> Option<serde_json::Value> {
    let mut s = TcpStream::connect(addr(url)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /v1/re").ok()?;
    std::thread::sleep(Duration::from_millis(50));
    s.write_all(b"port?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    let text = String::from_utf8_lossy(&out);
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| serde_json::from_str(body).ok())?
}

/// A real AGX Orin tegrastats line (agent/fixtures/tegrastats, with its source in the README there).
fn orin_line() -> String {
    let p = gpudash_tests::root().join("agent/fixtures/tegrastats/agx-orin-64gb.txt");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_keeps_answering_in_10_mib_under_2000_idle_connections_and_a_100_mib_line() {
    let cmd = format!(
        "head -c 104857600 /dev/zero | tr '\\0' x; echo; while true; do echo '{}'; sleep 0.5; done",
        orin_line()
    );
    let (a, url) = agent(&cmd);
    let pid = a.pid();
    let got = tokio::task::spawn_blocking(move || {
        gpudash_tests::wait_tcp(&addr(&url), Duration::from_secs(10));
        let mut peak = 0f64;
        // The long line is read through and dropped; a good line follows.
        let t = Instant::now();
        let mut report = None;
        while t.elapsed() < Duration::from_secs(30) {
            peak = peak.max(gpudash_tests::rss_mib(pid));
            if let Some(r) = split_report(&url) {
                if r["tegrastats"]["value"]["ram_total_bytes"].as_u64().is_some() {
                    report = Some(r);
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut conns: Vec<TcpStream> = Vec::new();
        for _ in 0..2000 {
            match TcpStream::connect(addr(&url)) {
                Ok(s) => conns.push(s),
                Err(_) => break,
            }
        }
        let opened = conns.len();
        peak = peak.max(gpudash_tests::rss_mib(pid));
        // Still answering: within the 3 s a silent connection is given, a report comes.
        let t = Instant::now();
        let mut answered = None;
        while t.elapsed() < Duration::from_secs(8) {
            peak = peak.max(gpudash_tests::rss_mib(pid));
            if split_report(&url).is_some() {
                answered = Some(t.elapsed());
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let threads = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("Threads:").map(|n| n.trim().parse::<u32>().unwrap_or(0)))
            .unwrap_or(0);
        drop(conns);
        (report, opened, answered, peak, threads)
    })
    .await
    .unwrap();
    let (report, opened, answered, peak, threads) = got;
    eprintln!("figure: agent peak RSS {peak:.1} MiB, {threads} threads, answered {answered:?} after 2,000 idle connections and a 100 MiB line");
    let r = report.unwrap_or_else(|| panic!("no good tegrastats reading after the 100 MiB line:\n{}", a.output()));
    assert!(r["tegrastats"]["value"]["ram_total_bytes"].as_u64().is_some(), "{r}");
    assert_eq!(opened, 2000);
    assert!(answered.is_some(), "the agent stopped answering under 2,000 idle connections:\n{}", a.output());
    assert!(peak <= 10.0, "agent peak RSS {peak:.1} MiB");
    assert!(threads <= 8, "{threads} threads: connections do not get threads");
    assert!(a.output().is_empty() || !a.output().contains("panicked"), "{}", a.output());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_printing_flat_out_costs_the_agent_little_and_sigterm_stops_its_group() {
    // `yes` prints as fast as the pipe takes it; its shell and children share one group.
    let (mut a, url) = agent(&format!("yes '{}' & sleep 300", orin_line()));
    let pid = a.pid();
    let ticks = |p: u32| -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let f: Vec<&str> = stat.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
        f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
            + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
    };
    gpudash_tests::wait_tcp(&addr(&url), Duration::from_secs(10));
    // Reading: a first good line is in the report.
    let u = url.clone();
    let first = tokio::task::spawn_blocking(move || {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(15) {
            if split_report(&u).is_some_and(|r| r["tegrastats"]["value"]["gpu_busy_percent"].is_number()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(first, "no tegrastats reading from the flat-out command:\n{}", a.output());
    let (t0, c0) = (Instant::now(), ticks(pid));
    tokio::time::sleep(Duration::from_secs(4)).await;
    let cpu = (ticks(pid) - c0) as f64 / 100.0 / t0.elapsed().as_secs_f64() * 100.0;
    eprintln!("figure: agent CPU {cpu:.1} % reading a command that prints flat out");
    assert!(cpu < 20.0, "agent at {cpu:.0} % CPU reading a flat-out command");
    let r = tokio::task::spawn_blocking(move || split_report(&url)).await.ok().flatten();
    assert!(r.is_some_and(|r| r["tegrastats"]["value"]["gpu_busy_percent"].is_number()), "{}", a.output());
    // The command's process group: the shell that the agent started, and what it started.
    let group: Vec<u32> = gpudash_tests::children_of(pid);
    assert!(!group.is_empty(), "the tegrastats shell runs");
    let pgid = group[0];
    let t = Instant::now();
    while gpudash_tests::group_members(pgid).len() < 3 && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        gpudash_tests::group_members(pgid).len() >= 3,
        "sh, yes and sleep: {:?}",
        gpudash_tests::group_members(pgid)
    );
    let st = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(st.success());
    assert_eq!(a.wait_exit(Duration::from_secs(5)), Some(0), "{}", a.output());
    let t = Instant::now();
    while !gpudash_tests::group_members(pgid).is_empty() && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gpudash_tests::group_members(pgid).is_empty(), "left behind: {:?}", gpudash_tests::group_members(pgid));
}
