//! `kubectl gpudash` (issue 57): the plugin binary found by the real kubectl on the PATH, as
//! kubectl finds plugins, against the demo — what it prints held against `/api/v1/cluster` and
//! `POST /api/v1/fit`, in both languages, with kubectl's exit statuses.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use gpudash_tests::{kubectl_program, target_dir, Gpudash};
use serde_json::{json, Value};

/// Runs `kubectl gpudash ARGS` with the plugin's directory first on the PATH.
fn plugin(args: &[&str], env: &[(&str, &str)]) -> Output {
    let dir: PathBuf = target_dir().join("debug");
    assert!(dir.join("kubectl-gpudash").exists(), "build it first: cargo build -p kubectl-gpudash (./test.sh does)");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = Command::new(kubectl_program());
    cmd.arg("gpudash").args(args).env("PATH", path).env("LANG", "C.UTF-8").env_remove("LC_ALL");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap_or_else(|e| panic!("kubectl: {e}"))
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_gpudash_prints_what_the_api_says() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let v = gd.wait_view(Duration::from_secs(20), |v| v["source"]["synced"] == true).await.unwrap();
    let server = gd.url.clone();
    let s = ["--server", server.as_str()];

    // pending -o json: the same pods, reasons (with node counts) and codes as the API.
    let got: Value = serde_json::from_str(&stdout(&plugin(&["pending", "-o", "json", s[0], s[1]], &[]))).unwrap();
    let want: Vec<Value> = v["pending"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            json!({"namespace": p["namespace"], "name": p["name"], "pending_since": p["pending_since"], "gpu_request": p["gpu_request"],
                   "reasons": p["reasons"].as_array().into_iter().flatten().map(|r| json!({"reason": r["reason"], "nodes": r["nodes"]})).collect::<Vec<_>>(),
                   "diagnoses": p["diagnoses"]})
        })
        .collect();
    assert!(!want.is_empty(), "the demo has Pending pods");
    assert_eq!(got, Value::Array(want));

    // The table names every pod and its codes.
    let table = stdout(&plugin(&["pending", s[0], s[1]], &[]));
    assert!(table.starts_with("NAMESPACE  NAME"), "{table}");
    for p in v["pending"].as_array().into_iter().flatten() {
        let line =
            table.lines().find(|l| l.contains(p["name"].as_str().unwrap_or("?"))).unwrap_or_else(|| panic!("{table}"));
        for c in p["diagnoses"].as_array().into_iter().flatten() {
            assert!(line.contains(c.as_str().unwrap_or("?")), "{line}");
        }
    }

    // why: the waiting model's reasons and its diagnosis, as the API words them; in Japanese
    // where the locale is.
    let waiting = v["pending"][0]["name"].as_str().unwrap_or("?").to_string();
    let ns = v["pending"][0]["namespace"].as_str().unwrap_or("?").to_string();
    let diag = v["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["name"] == waiting.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("no diagnosis for {waiting}"));
    let why = stdout(&plugin(&["why", "-n", &ns, &waiting, s[0], s[1]], &[]));
    assert!(why.contains(&format!("{ns}/{waiting} has been Pending for")), "{why}");
    assert!(why.contains(diag["message"].as_str().unwrap_or("?")), "{why}");
    let ja = gd.json("/api/v1/cluster?lang=ja").await.unwrap();
    let ja_msg = ja["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["name"] == waiting.as_str())
        .and_then(|d| d["message"].as_str().map(str::to_string))
        .unwrap_or_default();
    let why_ja = stdout(&plugin(&["why", &format!("{ns}/{waiting}"), s[0], s[1]], &[("LANG", "ja_JP.UTF-8")]));
    assert!(why_ja.contains("Pending です") && why_ja.contains(&ja_msg), "{why_ja}");

    // A pod gpudash knows nothing about: kubectl's exit status 1 and an `error:` line.
    let none = plugin(&["why", "no-such-pod", s[0], s[1]], &[]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).starts_with("error: gpudash knows nothing about pod \"no-such-pod\""));

    // nodes -o json: every GPU node the API has, with its resources; the text has the slots.
    let nodes: Value = serde_json::from_str(&stdout(&plugin(&["nodes", "-o", "json", s[0], s[1]], &[]))).unwrap();
    let names = |v: &Value| -> Vec<String> {
        v.as_array().into_iter().flatten().filter_map(|n| n["name"].as_str().map(str::to_string)).collect()
    };
    assert_eq!(names(&nodes), names(&v["nodes"]));
    let text = stdout(&plugin(&["nodes", s[0], s[1]], &[]));
    let holder = v["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| n["gpu_resources"].as_array().into_iter().flatten())
        .flat_map(|g| g["holders"].as_array().into_iter().flatten())
        .next()
        .cloned()
        .unwrap_or_default();
    assert!(
        text.contains(&format!(
            "{}/{}",
            holder["namespace"].as_str().unwrap_or("?"),
            holder["name"].as_str().unwrap_or("?")
        )),
        "{text}"
    );

    // fit -f: the what-if check's summary as the API gives it.
    let dir = tempfile::tempdir().unwrap();
    let pod = dir.path().join("model.yaml");
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: next-model, namespace: vision}\nspec:\n  runtimeClassName: nvidia\n  \
                containers: [{name: m, image: m:1, resources: {requests: {memory: 2Gi, nvidia.com/gpu: \"1\"}, \
                limits: {memory: 3Gi, nvidia.com/gpu: \"1\"}}}]\n";
    std::fs::write(&pod, yaml).unwrap();
    let api = gd.fit_yaml(yaml).await.unwrap();
    let fit = stdout(&plugin(&["fit", "-f", &pod.display().to_string(), s[0], s[1]], &[]));
    assert!(fit.starts_with(api["summary"].as_str().unwrap_or("?")), "{fit}\n{api}");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: m, resources: {limits: {memory: lots}}}]}\n").unwrap();
    let refused = plugin(&["fit", "-f", &bad.display().to_string(), s[0], s[1]], &[]);
    assert_eq!(refused.status.code(), Some(1), "{}", String::from_utf8_lossy(&refused.stdout));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("memory"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
