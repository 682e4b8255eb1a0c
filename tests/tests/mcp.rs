//! `gpudash mcp` (issue 57) as an assistant uses it: the official MCP Python SDK (PyPI `mcp`, in
//! `target/mcp-venv`, installed by ./test.sh) starts it over stdio against the demo, initialises,
//! lists the tools and calls each. What it answers is held against the site's own API.

use std::process::Command;
use std::time::Duration;

use gpudash_tests::{bin, root, Gpudash};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assistant_asks_gpudash_through_the_official_mcp_client() {
    let python = root().join("target/mcp-venv/bin/python");
    assert!(python.exists(), "{} is missing: ./test.sh installs the MCP SDK there", python.display());
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let v = gd
        .wait_view(Duration::from_secs(20), |v| v["source"]["synced"] == true && v["pending"][0].is_object())
        .await
        .unwrap();
    let (ns, pod) = (
        v["pending"][0]["namespace"].as_str().unwrap_or_default(),
        v["pending"][0]["name"].as_str().unwrap_or_default(),
    );
    let script = root().join("tests/mcp/client.py");
    let out = tokio::task::spawn_blocking({
        let (python, url, ns, pod) = (python.clone(), gd.url.clone(), ns.to_string(), pod.to_string());
        move || Command::new(python).arg(script).arg(bin()).arg(url).arg(ns).arg(pod).output()
    })
    .await
    .unwrap()
    .unwrap_or_else(|e| panic!("python: {e}"));
    assert!(out.status.success(), "the MCP client failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));

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
    let fit: Value = reqwest::Client::new()
        .post(format!("{}/api/v1/fit?lang=en", gd.url))
        .json(&serde_json::json!({"gpu_count": "1", "memory_request": "2Gi"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
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
