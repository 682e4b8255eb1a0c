//! gpudash's MCP server (issue 57) as an assistant uses it: the official MCP Python SDK (PyPI
//! `mcp`, in `target/mcp-venv`, installed by ./test.sh) over both transports — `gpudash mcp`
//! started over stdio against the demo, and the streamable HTTP transport at a signed-in site's
//! `/mcp` — initialises, lists the tools and calls each. What it answers is held against the
//! site's own API.

use std::process::{Command, Output};
use std::time::Duration;

use gpudash_tests::{bin, root, Gpudash};
use serde_json::{json, Value};

/// Runs tests/mcp/client.py with `args`.
async fn client(args: Vec<String>) -> Output {
    let python = root().join("target/mcp-venv/bin/python");
    assert!(python.exists(), "{} is missing: ./test.sh installs the MCP SDK there", python.display());
    let script = root().join("tests/mcp/client.py");
    tokio::task::spawn_blocking(move || Command::new(python).arg(script).args(args).output())
        .await
        .unwrap_or_else(|e| panic!("the client's thread: {e}"))
        .unwrap_or_else(|e| panic!("python: {e}"))
}

fn answers(out: &Output) -> Value {
    assert!(out.status.success(), "the MCP client failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The first Pending pod of the view (namespace, name).
fn first_pending(v: &Value) -> (String, String) {
    let p = &v["pending"][0];
    (p["namespace"].as_str().unwrap_or_default().to_string(), p["name"].as_str().unwrap_or_default().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assistant_asks_gpudash_mcp_over_stdio() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let v = gd
        .wait_view(Duration::from_secs(20), |v| v["source"]["synced"] == true && v["pending"][0].is_object())
        .await
        .unwrap();
    let (ns, pod) = first_pending(&v);
    let got =
        answers(&client(vec!["stdio".into(), bin().display().to_string(), gd.url.clone(), ns, pod.clone()]).await);
    let fit = what_if(reqwest::Client::new().post(format!("{}/api/v1/fit?lang=en", gd.url))).await;
    held_against_the_api(&got, &v, &pod, &fit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assistant_asks_a_signed_in_site_over_streamable_http() {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("token");
    let token = "mcp-token-for-the-factory-floor-0042";
    std::fs::write(&tf, format!("{token}\n")).unwrap();
    let gd = Gpudash::start(&["--demo", "--auth-token-file", &tf.display().to_string()]).await.unwrap();
    let http = reqwest::Client::new();
    let mut v = Value::Null;
    for _ in 0..200 {
        let r = http.get(format!("{}/api/v1/cluster", gd.url)).bearer_auth(token).send().await.unwrap();
        v = r.json().await.unwrap_or_default();
        if v["source"]["synced"] == true && v["pending"][0].is_object() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (ns, pod) = first_pending(&v);
    let mcp = format!("{}/mcp", gd.url);
    let got = answers(&client(vec!["http".into(), mcp.clone(), token.into(), ns.clone(), pod.clone()]).await);
    let fit = what_if(http.post(format!("{}/api/v1/fit?lang=en", gd.url)).bearer_auth(token)).await;
    held_against_the_api(&got, &v, &pod, &fit);

    // Without the token the SDK is refused; the transport's edges, raw.
    let refused = client(vec!["http".into(), mcp.clone(), "-".into(), ns, pod]).await;
    assert!(!refused.status.success(), "answered without the token");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let code = |r: reqwest::Response| r.status().as_u16();
    assert_eq!(code(http.post(&mcp).json(&ping).send().await.unwrap()), 401);
    let r = http.post(&mcp).bearer_auth(token).json(&ping).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.json::<Value>().await.unwrap_or_default(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(code(http.post(&mcp).bearer_auth(token).json(&note).send().await.unwrap()), 202);
    assert_eq!(code(http.get(&mcp).bearer_auth(token).send().await.unwrap()), 405);
    let foreign =
        http.post(&mcp).bearer_auth(token).header("origin", "http://evil.example").json(&ping).send().await.unwrap();
    assert_eq!(code(foreign), 403, "a page of another origin");
}

/// The what-if check's own answer for the form the client asks about.
async fn what_if(rq: reqwest::RequestBuilder) -> Value {
    let r = rq.json(&json!({"gpu_count": "1", "memory_request": "2Gi"})).send().await;
    let r = r.unwrap_or_else(|e| panic!("POST /api/v1/fit: {e}"));
    r.json().await.unwrap_or_else(|e| panic!("the what-if answer: {e}"))
}

/// What the client saw (`got`) against the API's view `v`, its first Pending pod `pod`, and the
/// what-if answer `fit`.
fn held_against_the_api(got: &Value, v: &Value, pod: &str, fit: &Value) {
    assert_eq!(got["server"], "gpudash");
    assert_eq!(got["protocol"], "2025-06-18", "the SDK accepted the revision gpudash answered");
    let tools = got["tools"].as_object().cloned().unwrap_or_default();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    for want in ["gpu_overview", "why_pending", "will_it_fit", "gpu_hours", "diagnoses", "node_history"] {
        assert_eq!(tools.get(want), Some(&Value::Bool(true)), "{want} read-only: {names:?}");
    }
    for tool in
        ["gpu_overview", "why_pending", "why_pending_ja", "will_it_fit", "diagnoses", "gpu_hours", "node_history"]
    {
        assert_eq!(got[tool]["isError"], false, "{tool}: {}", got[tool]);
    }

    // The overview: the API's totals, every node.
    let overview = &got["gpu_overview"];
    assert_eq!(overview["structured"]["totals"], v["totals"]);
    assert_eq!(overview["structured"]["nodes"].as_array().map(Vec::len), v["nodes"].as_array().map(Vec::len));
    let allocated =
        format!("GPU units allocated {} of {}", v["totals"]["gpu_allocated"], v["totals"]["gpu_allocatable"]);
    assert!(overview["text"].as_str().unwrap_or_default().contains(&allocated), "{}", overview["text"]);

    // Why: the API's pending item and its diagnoses, their sentences in the language asked for.
    let why = &got["why_pending"];
    assert_eq!(why["structured"]["pending"]["name"], pod);
    assert_eq!(why["structured"]["pending"]["reasons"], v["pending"][0]["reasons"]);
    let codes: Vec<&Value> =
        why["structured"]["diagnoses"].as_array().map(|d| d.iter().map(|d| &d["code"]).collect()).unwrap_or_default();
    let want: Vec<&Value> = v["pending"][0]["diagnoses"].as_array().map(|d| d.iter().collect()).unwrap_or_default();
    assert!(!want.is_empty() && want.iter().all(|c| codes.contains(c)), "{codes:?} vs {want:?}");
    let ja = got["why_pending_ja"]["text"].as_str().unwrap_or_default();
    assert!(ja.contains("Pending です") && ja.chars().any(|c| ('\u{3040}'..='\u{30ff}').contains(&c)), "{ja}");
    // A pod that is nowhere: a tool error that says so, not a protocol error.
    assert_eq!(got["why_unknown"]["isError"], true);
    assert!(got["why_unknown"]["text"].as_str().unwrap_or_default().contains("no-such-pod is neither Pending"));

    // Will it fit: the what-if check's own answer for the same form.
    assert_eq!(got["will_it_fit"]["structured"]["summary"], fit["summary"]);
    assert_eq!(got["will_it_fit"]["structured"]["placeable"], fit["placeable"]);

    // Diagnoses: the critical ones, as the API lists them.
    let critical: Vec<&Value> = v["diagnoses"]
        .as_array()
        .map(|d| d.iter().filter(|d| d["severity"] == "critical").collect())
        .unwrap_or_default();
    assert_eq!(got["diagnoses"]["structured"]["diagnoses"].as_array().map(Vec::len), Some(critical.len()));
    assert!(!critical.is_empty(), "the demo has critical diagnoses");

    // GPU-hours and a node's history: the reports' and the series' own shapes.
    assert_eq!(got["gpu_hours"]["structured"]["by"], "namespace");
    assert!(got["gpu_hours"]["structured"]["rows"].is_array(), "{}", got["gpu_hours"]);
    assert_eq!(got["node_history"]["structured"]["node"], "orin-agx-01");
    assert!(got["node_history"]["structured"]["points"].is_array(), "{}", got["node_history"]);
}
