//! The HTTP API in process: the router with a fixed view, `oneshot` requests, milliseconds a
//! test. Processes and browsers are for `tests/`.

use std::sync::Arc;
use std::time::Duration;

use app::model::{ClusterView, GpuResource, NodeView, Source};
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;

use super::{router, AppState, FitSource};
use crate::auth::Access;
use crate::history::http::History;
use crate::history::{Config, Health, Writer};
use crate::publish::Snapshot;

fn demo_inputs() -> crate::derive::Inputs {
    crate::derive::from_kubectl_yaml(gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("fixture: {e}"))
}

/// A view of `n` nodes shaped like a real site's (labels, conditions, a GPU resource each).
fn big_view(n: usize) -> ClusterView {
    let nodes = (0..n)
        .map(|i| {
            Arc::new(NodeView {
                name: format!("orin-{i:04}"),
                ready: true,
                labels: (0..12).map(|l| (format!("example.com/label-{l}"), format!("value-{i}-{l}"))).collect(),
                gpu_resources: vec![GpuResource {
                    resource: "nvidia.com/gpu".into(),
                    capacity: 4,
                    allocatable: 4,
                    ..GpuResource::default()
                }],
                ..NodeView::default()
            })
        })
        .collect();
    ClusterView { revision: 3, source: Source { synced: true, ..Source::default() }, nodes, ..ClusterView::default() }
}

struct Setup {
    view: ClusterView,
    history: History,
    access: Access,
    site: Option<std::path::PathBuf>,
}

impl Setup {
    fn new(view: ClusterView) -> Self {
        Self {
            view,
            history: History { pool: None, health: Arc::new(Health::default()), cfg: Config::default() },
            access: Access::default(),
            site: None,
        }
    }

    fn router(self) -> axum::Router {
        let (_tx, rx) = tokio::sync::watch::channel(Arc::new(Snapshot::new(self.view)));
        let (_stop, stop_rx) = tokio::sync::watch::channel(false);
        let site = self.site.unwrap_or_else(|| std::path::PathBuf::from("/nonexistent-site"));
        let leptos = leptos::config::LeptosOptions::builder()
            .output_name("gpudash")
            .site_root(site.display().to_string())
            .site_pkg_dir("pkg")
            .build();
        let inputs = demo_inputs();
        let st = AppState {
            snapshots: rx,
            watch: crate::watchers::WatchState::new(
                app::model::SourceMode::Demo,
                "http://127.0.0.1:1".into(),
                Duration::from_secs(30),
            ),
            base: String::new(),
            leptos,
            rotate: 20,
            lang: app::i18n::Lang::En,
            shutdown: stop_rx,
            stream_clients: Arc::default(),
            readers: Arc::default(),
            access: Arc::new(self.access),
            history: self.history,
            fit: Some(FitSource { inputs: Arc::new(move || inputs.clone()), opts: crate::derive::Options::default() }),
            csp_base: super::csp_base(&[]).into(),
        };
        router(st, &[])
    }
}

async fn send(r: &axum::Router, req: Request<Body>) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    let resp = r.clone().oneshot(req).await.unwrap_or_else(|e| match e {});
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
    (parts.status, parts.headers, bytes)
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap_or_default()
}

fn json(b: &[u8]) -> serde_json::Value {
    serde_json::from_slice(b).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(b)))
}

#[tokio::test]
async fn the_cluster_endpoint_serves_the_published_view() {
    let r = Setup::new(big_view(3)).router();
    let (status, headers, body) = send(&r, get("/api/v1/cluster")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    let v = json(&body);
    assert_eq!(v["revision"], 3);
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(3));
    assert!(v["nodes"][0]["gpu_resources"][0]["out_of_service"].is_u64());
}

#[tokio::test]
async fn fit_takes_a_form_a_yaml_body_and_a_json_pod_and_says_which_forms_it_takes() {
    let r = Setup::new(big_view(1)).router();
    let post = |ct: &str, body: &str| {
        Request::post("/api/v1/fit")
            .header(header::CONTENT_TYPE, ct)
            .body(Body::from(body.to_string()))
            .unwrap_or_default()
    };
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: m}\nspec:\n  runtimeClassName: nvidia\n  containers:\n  - name: c\n    resources: {limits: {nvidia.com/gpu: \"1\", memory: 1Gi}}\n";
    let (status, _, body) = send(&r, post("application/yaml", pod)).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert!(json(&body)["summary"].as_str().is_some_and(|s| s.contains("nodes")), "{}", String::from_utf8_lossy(&body));
    // The same pod as kubectl prints it with -o json.
    let as_json =
        serde_json::to_string(&serde_yaml::from_str::<serde_json::Value>(pod).unwrap_or_default()).unwrap_or_default();
    let (status, _, _) = send(&r, post("application/json", &as_json)).await;
    assert_eq!(status, StatusCode::OK);
    // The form.
    let (status, _, body) = send(&r, post("application/json", r#"{"gpu_count": "1", "memory_limit": "lots"}"#)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(json(&body)["error"]["field"], "memory_limit");
    // Neither: the error names the accepted forms.
    let (status, _, body) = send(&r, post("application/json", "{not json")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let e = json(&body);
    assert_eq!((e["error"]["code"].as_str(), e["error"]["field"].as_str()), (Some("bad-request"), Some("body")));
    assert!(e["error"]["message"].as_str().is_some_and(|m| m.contains("application/yaml")), "{e}");
    let (status, _, _) = send(&r, post("application/yaml", "")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // No content type: YAML is tried when it is a Kubernetes object, else the forms are named.
    let (status, _, _) = send(&r, post("text/plain", pod)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, body) = send(&r, post("text/plain", "{not json")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{}", String::from_utf8_lossy(&body));
}

#[tokio::test]
async fn history_errors_share_one_shape_and_a_500_sends_no_internal_text() {
    // No history: 503 with gpudash's own words.
    let r = Setup::new(big_view(1)).router();
    let (status, _, body) = send(&r, get("/api/v1/history/series?metric=gpu_allocated")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(json(&body)["error"]["code"], "unavailable");
    // A bad range is 400, checked first.
    let (status, _, body) = send(&r, get("/api/v1/history/pods?range=1y")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(json(&body)["error"]["field"], "range");
    // The database fails under the query: 500, an id, and nothing of sqlx's text.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let pool = crate::db::open(&dir.path().join("h.db")).await.unwrap_or_else(|e| panic!("{e}"));
    pool.close().await;
    let mut s = Setup::new(big_view(1));
    s.history.pool = Some(pool);
    let r = s.router();
    for path in ["/api/v1/history/series?metric=pending", "/api/v1/history/pods", "/api/v1/history/diagnoses"] {
        let (status, _, body) = send(&r, get(path)).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path}");
        let e = json(&body);
        assert_eq!(e["error"]["code"], "internal", "{path}");
        let msg = e["error"]["message"].as_str().unwrap_or("").to_ascii_lowercase();
        assert!(msg.starts_with("internal error (id "), "{msg}");
        for leak in ["pool", "closed", "sqlx", "sqlite", "database"] {
            assert!(!msg.contains(leak), "{path} leaked {leak:?}: {msg}");
        }
    }
    let (status, _, _) = send(&r, get("/charts/gpu.svg?node=orin-0000&resource=nvidia.com/gpu")).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    let (status, _, body) = send(&r, get("/charts/nope.svg")).await;
    assert_eq!((status, json(&body)["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("not-found")));
}

#[tokio::test]
async fn history_status_lists_each_writers_problem() {
    let s = Setup::new(big_view(1));
    s.history.health.set(Writer::Retention, Some("history pruning failing: disk I/O error".into()));
    s.history.health.set(Writer::Recorder, Some("history writes failing (database is locked)".into()));
    let health = s.history.health.clone();
    let r = s.router();
    let (_, _, body) = send(&r, get("/api/v1/history/status")).await;
    let v = json(&body);
    assert_eq!(v["problems"].as_array().map(Vec::len), Some(2), "{v}");
    health.set(Writer::Retention, None);
    let (_, _, body) = send(&r, get("/api/v1/history/status")).await;
    assert_eq!(json(&body)["problems"], serde_json::json!(["history writes failing (database is locked)"]));
}

#[tokio::test]
async fn probes_and_metrics_answer() {
    let r = Setup::new(big_view(2)).router();
    assert_eq!(send(&r, get("/healthz")).await.0, StatusCode::OK);
    assert_eq!(send(&r, get("/readyz")).await.0, StatusCode::SERVICE_UNAVAILABLE, "no watcher has synced");
    let (status, _, body) = send(&r, get("/metrics")).await;
    assert_eq!(status, StatusCode::OK);
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains(r#"gpudash_gpu_out_of_service{node="orin-0000",resource="nvidia.com/gpu"} 0"#), "{text}");
}

#[tokio::test]
async fn public_files_are_served_and_unknown_paths_get_a_small_404_without_cluster_state() {
    let site = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let public = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../public");
    for f in ["favicon.ico", "robots.txt"] {
        std::fs::copy(public.join(f), site.path().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    let view = big_view(1000);
    let full = serde_json::to_vec(&view).unwrap_or_default().len();
    let mut s = Setup::new(view);
    s.site = Some(site.path().to_path_buf());
    let r = s.router();
    let (status, headers, body) = send(&r, get("/favicon.ico")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers[header::CONTENT_TYPE].to_str().is_ok_and(|t| t.contains("icon")), "{headers:?}");
    assert_eq!(body, std::fs::read(public.join("favicon.ico")).unwrap_or_default());
    assert_eq!(send(&r, get("/robots.txt")).await.0, StatusCode::OK);
    for path in ["/nope", "/nodes/a/b", "/pkg/missing.js", "/favicon.png"] {
        let (status, _, body) = send(&r, get(path)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert!(body.len() < 10 * 1024, "{path}: {} bytes (the view is {full} bytes)", body.len());
        assert!(!String::from_utf8_lossy(&body).contains("orin-0000"), "{path} embeds cluster state");
    }
    println!("404 at 1000 nodes: {} bytes (the view: {full} bytes)", send(&r, get("/nope")).await.2.len());
    let (status, _, body) = send(&r, get("/api/v2/cluster")).await;
    assert_eq!((status, json(&body)["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("not-found")));
}

#[tokio::test]
async fn login_issues_an_opaque_expiring_session_secure_behind_https_and_logout_ends_it() {
    let token = "s3cret-token-of-24-chars";
    let mut s = Setup::new(big_view(1));
    s.access = Access { token: Some(token.into()), ..Access::default() };
    let r = s.router();
    assert_eq!(send(&r, get("/api/v1/cluster")).await.0, StatusCode::UNAUTHORIZED);
    let login = Request::post("/login")
        .header("x-forwarded-proto", "https")
        .body(Body::from(format!("token={token}")))
        .unwrap_or_default();
    let (status, headers, _) = send(&r, login).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let cookie = headers[header::SET_COOKIE].to_str().unwrap_or("").to_string();
    assert!(!cookie.contains(token), "the token itself is never the cookie: {cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("Secure") && cookie.contains("Max-Age="), "{cookie}");
    let session = cookie.split(';').next().unwrap_or("").to_string();
    assert!(session.starts_with("gpudash_session=") && session.len() == "gpudash_session=".len() + 64, "{session}");
    let with = |path: &str, method: &str| {
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::COOKIE, session.clone())
            .body(Body::empty())
            .unwrap_or_default()
    };
    assert_eq!(send(&r, with("/api/v1/cluster", "GET")).await.0, StatusCode::OK);
    // Plain HTTP: no Secure flag.
    let (_, headers, _) =
        send(&r, Request::post("/login").body(Body::from(format!("token={token}"))).unwrap_or_default()).await;
    assert!(!headers[header::SET_COOKIE].to_str().unwrap_or("").contains("Secure"));
    let (status, headers, _) = send(&r, with("/logout", "POST")).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(headers[header::SET_COOKIE].to_str().unwrap_or("").contains("Max-Age=0"));
    assert_eq!(
        send(&r, with("/api/v1/cluster", "GET")).await.0,
        StatusCode::UNAUTHORIZED,
        "a copied cookie dies at logout"
    );
}

#[path = "lang_tests.rs"]
mod lang_tests;
