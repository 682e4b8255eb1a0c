//! HTTP hardening: security headers on every route, no path traversal or directory listing,
//! request size limits, auth on and off, Prometheus /metrics, graceful shutdown.

use std::process::Command;
use std::time::Duration;

use gpudash_tests::{first_load, Gpudash};

/// The first-load target the benchmark table reports (#56); the failure line stays 200 KiB.
const TARGET: usize = 140 * 1024;

const ROUTES: &[&str] = &[
    "/",
    "/pending",
    "/diagnoses",
    "/nodes/orin-agx-01",
    "/api/v1/cluster",
    "/metrics",
    "/healthz",
    "/readyz",
    "/pkg/gpudash.css",
    "/pkg/pages.css",
    "/no/such/page",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_carries_the_security_headers() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    for path in ROUTES {
        let r = reqwest::get(format!("{}{path}", gd.url)).await.unwrap();
        let h = r.headers();
        let get = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        assert!(get("content-security-policy").contains("frame-ancestors 'none'"), "{path}: {h:?}");
        assert_eq!(get("x-content-type-options"), "nosniff", "{path}");
        assert_eq!(get("referrer-policy"), "no-referrer", "{path}");
        assert_eq!(get("x-frame-options"), "DENY", "{path}");
    }
    let r = reqwest::get(format!("{}/no/such/page", gd.url)).await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    // Pages allow no inline script but the nonce'd hydration loader, fresh on every request.
    let mut nonces = Vec::new();
    for _ in 0..2 {
        let r = reqwest::get(format!("{}/", gd.url)).await.unwrap();
        let csp = r.headers().get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let script = csp.split(';').find(|d| d.trim().starts_with("script-src")).unwrap_or("").to_string();
        assert!(script.contains("'nonce-") && !script.contains("unsafe-inline"), "{csp}");
        let nonce = script.split("'nonce-").nth(1).and_then(|s| s.split('\'').next()).unwrap_or("").to_string();
        let html = r.text().await.expect("body");
        assert!(html.contains(&format!("nonce=\"{nonce}\"")), "the hydration script carries the nonce");
        nonces.push(nonce);
    }
    assert_ne!(nonces[0], nonces[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundle_is_sent_precompressed_and_every_page_weighs_under_200_kib() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let http = reqwest::Client::new();
    let get = |path: String, enc: &'static str| {
        let (http, url) = (http.clone(), format!("{}{path}", gd.url));
        async move {
            let r = http.get(url).header("accept-encoding", enc).send().await.unwrap();
            assert_eq!(r.status().as_u16(), 200, "{path}");
            let h = r.headers().clone();
            (h, r.bytes().await.unwrap_or_else(|e| panic!("{path}: body: {e}")))
        }
    };
    let bundles =
        ["gpudash", "gpudash-overview", "gpudash-lists"].map(|b| [format!("/pkg/{b}.js"), format!("/pkg/{b}_bg.wasm")]);
    let files = ["/pkg/gpudash.css".to_string(), "/pkg/pages.css".to_string()];
    for path in files.iter().chain(bundles.iter().flatten()) {
        let mut sizes = Vec::new();
        for enc in ["gzip", "br", "identity"] {
            let (h, body) = get(path.to_string(), enc).await;
            let got = h.get("content-encoding").and_then(|v| v.to_str().ok()).unwrap_or("identity").to_string();
            assert_eq!(got, enc, "{path}: asked for {enc}");
            let vary = h.get("vary").and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
            assert!(vary.contains("accept-encoding"), "{path}: {h:?}");
            sizes.push(body.len());
        }
        assert!(sizes[0] < sizes[2] && sizes[1] < sizes[2], "{path}: {sizes:?}");
    }
    // Every page, once its agents have reported (the overview grows as they do). Chromium asks
    // for brotli only over HTTPS: a kiosk on plain HTTP gets gzip.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let pages = [
        "/",
        "/?kiosk=1",
        "/pending",
        "/diagnoses",
        "/nodes/orin-agx-01",
        "/nodes/gpu-dra-01",
        "/history",
        "/fit",
        "/quotas",
        "/reports",
        "/?lang=ja",
        "/?kiosk=1&lang=ja",
        "/pending?lang=ja",
        "/diagnoses?lang=ja",
    ];
    let mut weights = Vec::new();
    for page in pages {
        let (_, html) = get(page.to_string(), "identity").await;
        let html = String::from_utf8_lossy(&html).into_owned();
        let (_, gz) = get(page.to_string(), "gzip").await;
        let mut total = gz.len();
        let parts = first_load(&html);
        assert!(parts.iter().any(|p| p.ends_with("/gpudash.css")), "{page}: {parts:?}");
        for part in &parts {
            total += get(part.clone(), "gzip").await.1.len();
        }
        // The demo's overview, pending and diagnoses pages stay the live ones: past the budget
        // the server would page the overview, and this says so before a browser test does.
        let live = !["/nodes/", "/history", "/fit", "/quotas", "/reports"].iter().any(|p| page.starts_with(p));
        assert_eq!(parts.iter().any(|p| p.ends_with(".wasm")), live, "{page}: {parts:?}");
        // The budget is 200 KiB (past it the server pages the list); the target the benchmark
        // table reports is 140 KiB (#56).
        let mark = if total <= TARGET { "within 140 KiB" } else { "OVER 140 KiB" };
        weights.push(format!("{page} {total} {mark} ({})", parts.join(" ")));
        assert!(total <= 200 * 1024, "{page} weighs {total} bytes with gzip: {parts:?}");
        // Each live page loads its own bundle (the kiosk the whole one: its overview turns
        // into the pending page).
        let own = match page {
            "/" | "/?lang=ja" => Some("/pkg/gpudash-overview_bg.wasm"),
            "/pending" | "/diagnoses" | "/pending?lang=ja" | "/diagnoses?lang=ja" => Some("/pkg/gpudash-lists_bg.wasm"),
            "/?kiosk=1" | "/?kiosk=1&lang=ja" => Some("/pkg/gpudash_bg.wasm"),
            _ => None,
        };
        if let Some(own) = own {
            assert!(parts.iter().any(|p| p == own), "{page}: {parts:?}");
        }
    }
    // The live pages load the bundle and not the server-rendered pages' styles; those load
    // their styles and not the bundle.
    let (_, html) = get("/".to_string(), "identity").await;
    let live = first_load(&String::from_utf8_lossy(&html));
    assert!(live.iter().any(|p| p.ends_with("_bg.wasm")) && !live.iter().any(|p| p.ends_with("pages.css")), "{live:?}");
    let (_, html) = get("/quotas".to_string(), "identity").await;
    let served = first_load(&String::from_utf8_lossy(&html));
    assert!(
        served.iter().any(|p| p.ends_with("pages.css")) && !served.iter().any(|p| p.ends_with(".wasm")),
        "{served:?}"
    );
    eprintln!("first loads (gzip bytes): {weights:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_files_refuse_traversal_and_listing() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let port = gd.url.rsplit(':').next().unwrap_or("0").to_string();
    // Raw requests: a client library would normalise the dots away before sending.
    for path in [
        "/pkg/../../Cargo.toml",
        "/pkg/%2e%2e/%2e%2e/Cargo.toml",
        "/pkg/..%2f..%2fCargo.toml",
        "/pkg/%2e%2e%2f%2e%2e%2fCargo.toml",
        "/pkg/....//....//Cargo.toml",
        "/pkg/",
    ] {
        let out = Command::new("curl")
            .args(["-s", "--path-as-is", "-o", "-", "-w", "\n%{http_code}", &format!("http://127.0.0.1:{port}{path}")])
            .output()
            .expect("curl");
        let text = String::from_utf8_lossy(&out.stdout);
        let code = text.rsplit('\n').next().unwrap_or("");
        assert!(!text.contains("[workspace]"), "{path} leaked Cargo.toml");
        assert!(code == "404" || code == "400", "{path}: {code}");
        assert!(!text.contains("gpudash_bg.wasm"), "{path} listed the directory");
    }
    // A body over the limit is refused from its declared length, before it is read (a client
    // still sending would see the connection close, so the request is written by hand).
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    s.write_all(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \
        2097152\r\n\r\ntoken=").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap_or(0);
    let head = String::from_utf8_lossy(&buf[..n]);
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_parse_as_prometheus_text_with_the_demo_gauges() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    gd.wait_view(Duration::from_secs(10), |v| v["nodes"][0]["memory"]["used_bytes"].is_u64()).await.unwrap();
    let text = reqwest::get(format!("{}/metrics", gd.url)).await.unwrap().text().await.expect("body");
    for want in [
        r#"gpudash_gpu_capacity{node="orin-agx-01",resource="nvidia.com/gpu"} 4"#,
        r#"gpudash_gpu_allocatable{node="gpu-x86-01",resource="nvidia.com/mig-1g.5gb"} 7"#,
        r#"gpudash_gpu_allocated{node="orin-nano-01",resource="nvidia.com/gpu"} 1"#,
        r#"gpudash_pending_pods_by_reason{reason="Insufficient nvidia.com/gpu"}"#,
        r#"gpudash_diagnoses{code="device-plugin-missing",severity="critical"} 1"#,
        r#"gpudash_node_memory_limits_bytes{node="orin-nx-02",unified="true"}"#,
        "gpudash_watch_stale 0",
        "gpudash_watch_synced 1",
        "process_resident_memory_bytes",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    // An independent parser: the official Python client's.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("metrics.txt");
    std::fs::write(&f, &text).unwrap();
    let out = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import sys\nfrom prometheus_client.parser import text_string_to_metric_families as p\nfams = \
            list(p(open(sys.argv[1]).read()))\nprint(len(fams), sum(len(f.samples) for f in fams))",
            &f.display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "prometheus_client could not parse /metrics: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let counts = String::from_utf8_lossy(&out.stdout);
    let fams: usize = counts.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(fams >= 15, "{counts}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_file_requires_the_token_and_probes_stay_open() {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("token");
    std::fs::write(&tf, "s3cret-token-for-the-factory-floor-7\n").unwrap();
    let gd = Gpudash::start(&[
        "--demo",
        "--auth-token-file",
        &tf.display().to_string(),
        "--trusted-proxy-header",
        "X-Forwarded-User",
        "--trusted-proxy",
        "127.0.0.2",
    ])
    .await
    .unwrap();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let code = |r: reqwest::Response| r.status().as_u16();
    assert_eq!(code(http.get(format!("{}/api/v1/cluster", gd.url)).send().await.unwrap()), 401);
    assert_eq!(code(http.get(format!("{}/metrics", gd.url)).send().await.unwrap()), 401);
    assert_eq!(code(http.get(format!("{}/healthz", gd.url)).send().await.unwrap()), 200);
    let r = http.get(format!("{}/", gd.url)).header("accept", "text/html").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 303);
    assert_eq!(r.headers().get("location").and_then(|v| v.to_str().ok()), Some("/login"));
    let wrong = http
        .get(format!("{}/api/v1/cluster", gd.url))
        .bearer_auth("s3cret-token-for-the-factory-floor-Y")
        .send()
        .await
        .unwrap();
    assert_eq!(code(wrong), 401);
    let ok = http
        .get(format!("{}/api/v1/cluster", gd.url))
        .bearer_auth("s3cret-token-for-the-factory-floor-7")
        .send()
        .await
        .unwrap();
    assert_eq!(code(ok), 200);
    // People: the login form sets an HttpOnly cookie that then opens the pages.
    let r =
        http.post(format!("{}/login", gd.url)).body("token=s3cret-token-for-the-factory-floor-7").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 303);
    let cookie = r.headers().get("set-cookie").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().unwrap_or("").to_string();
    let page = http.get(format!("{}/pending", gd.url)).header("cookie", pair).send().await.unwrap();
    assert_eq!(code(page), 200);
    let bad = http.post(format!("{}/login", gd.url)).body("token=guess").send().await.unwrap();
    assert_eq!(code(bad), 401);
    // An authenticating proxy in front — its header counts from its address (127.0.0.2) only.
    let forged = http
        .get(format!("{}/api/v1/cluster", gd.url))
        .header("X-Forwarded-User", "operator@factory")
        .send()
        .await
        .unwrap();
    assert_eq!(code(forged), 401, "the proxy's header sent by a client that reached gpudash directly");
    let proxy = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .unwrap();
    let proxied = proxy
        .get(format!("{}/api/v1/cluster", gd.url))
        .header("X-Forwarded-User", "operator@factory")
        .send()
        .await
        .unwrap();
    assert_eq!(code(proxied), 200);
    // Nothing of the cluster's credentials is ever in what the browser gets.
    let body = http
        .get(format!("{}/api/v1/cluster", gd.url))
        .bearer_auth("s3cret-token-for-the-factory-floor-7")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .expect("body");
    assert!(!body.contains("gpudash-sim-read-only") && !body.contains("s3cret"), "credentials leaked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_shuts_down_gracefully_even_with_open_streams() {
    let mut gd = Gpudash::start(&["--demo"]).await.unwrap();
    let stream = reqwest::get(format!("{}/api/v1/stream", gd.url)).await.unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    let st = Command::new("kill").args(["-TERM", &gd.proc.pid().to_string()]).status().unwrap();
    assert!(st.success());
    let code = gd.proc.wait_exit(Duration::from_secs(10));
    assert_eq!(code, Some(0), "did not exit cleanly:\n{}", gd.proc.output());
    drop(stream);
}

#[test]
fn a_short_or_missing_token_file_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("token");
    std::fs::write(&tf, "short\n").unwrap();
    for f in [tf.display().to_string(), "/nonexistent/token".to_string()] {
        let out = Command::new(gpudash_tests::bin())
            .args(["serve", "--demo", "--auth-token-file", &f, "--db", &dir.path().join("h.db").display().to_string()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("--auth-token-file"), "{err}");
    }
}
