//! Alerts, with the real tools: `promtool` checks and unit-tests the rules, then a real
//! Prometheus scrapes a real `gpudash serve` watching the simulator, evaluates the chart's
//! rules, and a real Alertmanager routes the notifications to a webhook receiver here. A board
//! goes dark with models bound: the notification names the node, the pods and what to do; the
//! board comes back: the resolved notification arrives. Debian's `prometheus` 2.42 and
//! `prometheus-alertmanager` 0.25 (scripts/setup.sh installs them).

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpudash_sim::{demo_scenario, start, Simulator, TimelineMode};
use gpudash_tests::{free_port, wait_http_ok, Gpudash, Proc};
use serde_json::Value;

fn promtool(args: &[&str]) -> String {
    let out = Command::new("promtool")
        .args(args)
        .current_dir(gpudash_tests::root())
        .output()
        .unwrap_or_else(|e| panic!("promtool ({e}): scripts/setup.sh installs Debian's prometheus"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool {args:?}:\n{text}");
    text
}

#[test]
fn promtool_checks_the_rules_and_every_alert_fires_stays_quiet_and_resolves() {
    let check = promtool(&["check", "rules", "deploy/prometheus/gpudash-rules.yaml"]);
    assert!(check.contains("SUCCESS: 9 rules found"), "{check}");
    let test = promtool(&["test", "rules", "deploy/prometheus/gpudash-rules.test.yaml"]);
    assert!(test.contains("SUCCESS"), "{test}");
    // Every alert in the file has a unit test that expects it to fire.
    let tests = std::fs::read_to_string(gpudash_tests::root().join("deploy/prometheus/gpudash-rules.test.yaml"))
        .unwrap_or_default();
    let rules =
        std::fs::read_to_string(gpudash_tests::root().join("deploy/prometheus/gpudash-rules.yaml")).unwrap_or_default();
    for alert in rules.lines().filter_map(|l| l.trim().strip_prefix("- alert: ")) {
        let fires = tests.split("alertname: ").skip(1).any(|t| t.starts_with(alert) && t.contains("exp_labels"));
        assert!(fires, "no unit test expects {alert} to fire");
    }
}

/// The webhook receiver: every notification Alertmanager posts, in order.
async fn receiver() -> (String, Arc<Mutex<Vec<(Instant, Value)>>>, tokio::task::JoinHandle<()>) {
    let got: Arc<Mutex<Vec<(Instant, Value)>>> = Arc::default();
    let sink = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(v): axum::Json<Value>| {
            let sink = sink.clone();
            async move {
                sink.lock().unwrap_or_else(|e| e.into_inner()).push((Instant::now(), v));
                "ok"
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port for the webhook");
    let url = format!("http://{}/hook", l.local_addr().expect("the webhook's address"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, got, task)
}

/// Waits until a notification matches, returning it and when it came.
async fn wait_for(
    got: &Arc<Mutex<Vec<(Instant, Value)>>>,
    limit: Duration,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> (Instant, Value) {
    let t = Instant::now();
    loop {
        if let Some(hit) = got.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(_, v)| pred(v)).cloned() {
            return hit;
        }
        assert!(t.elapsed() < limit, "no {what} notification in {limit:?}; got:\n{:#?}", got.lock().map(|g| g.clone()));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn alerts<'a>(n: &'a Value, name: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    n["alerts"].as_array().into_iter().flatten().filter(move |a| a["labels"]["alertname"] == name)
}

/// The chart's PrometheusRule (its rules at `overrides`) as a rules file.
fn chart_rules(overrides: &str, dir: &Path) -> String {
    let docs = gpudash_tests::helm::chart(overrides, "gpudash", "edge-ops");
    let rule = docs
        .iter()
        .find(|d| d["kind"].as_str() == Some("PrometheusRule"))
        .unwrap_or_else(|| panic!("the chart renders no PrometheusRule"));
    let path = dir.join("rules.yaml");
    let text = serde_yaml::to_string(&rule["spec"]).expect("the rules as YAML");
    std::fs::write(&path, text).expect("writing the rules");
    path.display().to_string()
}

fn down(node: &mut Value, down: bool) {
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).map(|t| t.to_string()).unwrap_or_default();
    for c in node["status"]["conditions"].as_array_mut().into_iter().flatten() {
        if c["type"] == "Ready" {
            c["status"] = if down { "Unknown" } else { "True" }.into();
            c["reason"] = if down { "NodeStatusUnknown" } else { "KubeletReady" }.into();
            c["message"] =
                if down { "Kubelet stopped posting node status." } else { "kubelet is posting ready status" }.into();
            c["lastTransitionTime"] = now.clone().into();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_and_alertmanager_tell_a_webhook_a_board_went_dark_and_came_back() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let gd = Gpudash::watching(&sim.url(), &[]).await.unwrap();
    let v = gd.wait_view(Duration::from_secs(30), |v| v["source"]["synced"] == true).await.unwrap();
    let board = "orin-agx-01";
    let holders: Vec<String> = v["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["name"] == board)
        .flat_map(|n| n["gpu_resources"].as_array().into_iter().flatten())
        .flat_map(|g| g["holders"].as_array().into_iter().flatten())
        .filter_map(|h| h["name"].as_str().map(str::to_string))
        .collect();
    assert!(holders.len() >= 2, "the demo's {board} holds models: {holders:?}");

    let (hook, got, hook_task) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    // The chart's rules with thresholds a test can wait for.
    let rules = chart_rules("alerts: {prometheusRule: true, boardDownFor: 0s, pendingSeconds: \"0\"}", dir.path());
    let (am_port, prom_port) = (free_port(), free_port());
    std::fs::write(
        dir.path().join("alertmanager.yml"),
        format!(
            "route: {{receiver: hook, group_by: [alertname, node], group_wait: 1s, group_interval: 1s, repeat_interval: 1h}}\n\
             receivers:\n- name: hook\n  webhook_configs: [{{url: '{hook}', send_resolved: true}}]\n"
        ),
    )
    .unwrap();
    let gd_target = gd.url.trim_start_matches("http://").to_string();
    std::fs::write(
        dir.path().join("prometheus.yml"),
        format!(
            "global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n\
             rule_files: ['{rules}']\n\
             alerting: {{alertmanagers: [{{static_configs: [{{targets: ['127.0.0.1:{am_port}']}}]}}]}}\n\
             scrape_configs:\n- job_name: gpudash\n  static_configs: [{{targets: ['{gd_target}']}}]\n"
        ),
    )
    .unwrap();
    let p = |s: &str| dir.path().join(s).display().to_string();
    let _am = Proc::spawn(
        Path::new("prometheus-alertmanager"),
        &[
            format!("--config.file={}", p("alertmanager.yml")),
            format!("--storage.path={}", p("am-data")),
            format!("--web.listen-address=127.0.0.1:{am_port}"),
            "--cluster.listen-address=".into(),
            "--log.level=warn".into(),
        ],
    )
    .unwrap();
    let prom = Proc::spawn(
        Path::new("prometheus"),
        &[
            format!("--config.file={}", p("prometheus.yml")),
            format!("--storage.tsdb.path={}", p("prom-data")),
            format!("--web.listen-address=127.0.0.1:{prom_port}"),
            "--log.level=warn".into(),
        ],
    )
    .unwrap();
    for url in [format!("http://127.0.0.1:{am_port}/-/ready"), format!("http://127.0.0.1:{prom_port}/-/ready")] {
        wait_http_ok(&url, Duration::from_secs(30)).await.unwrap_or_else(|e| panic!("{e}\n{}", prom.output()));
    }

    // The demo's Pending model is named, with its code and the advice for it.
    let (_, pending) = wait_for(&got, Duration::from_secs(45), "GpuModelPending", |n| {
        alerts(n, "GpuModelPending").any(|a| a["labels"]["code"] == "insufficient-gpu" && a["status"] == "firing")
    })
    .await;
    let a = alerts(&pending, "GpuModelPending")
        .find(|a| a["labels"]["code"] == "insufficient-gpu")
        .cloned()
        .unwrap_or_default();
    assert_eq!(a["labels"]["kind"], "Pod");
    assert!(
        a["annotations"]["summary"].as_str().is_some_and(|s| s.contains(a["labels"]["name"].as_str().unwrap_or("?"))),
        "{a}"
    );
    assert!(a["annotations"]["description"].as_str().is_some_and(|s| s.contains("free one")), "{a}");

    // The board goes dark.
    let mut node = sim.sim.get("Node", "", board).unwrap_or_else(|| panic!("no {board}"));
    down(&mut node, true);
    let changed = Instant::now();
    sim.sim.apply(node.clone()).unwrap();
    let is_down = |status: &'static str| {
        move |n: &Value| {
            n["status"] == status
                && n["groupLabels"]["node"] == board
                && alerts(n, "GpuBoardDown").filter(|a| a["status"] == status).count() >= 2
        }
    };
    let (fired_at, fired) = wait_for(&got, Duration::from_secs(45), "GpuBoardDown firing", is_down("firing")).await;
    let to_webhook = fired_at - changed;
    let named: Vec<&str> = alerts(&fired, "GpuBoardDown").filter_map(|a| a["labels"]["pod"].as_str()).collect();
    for h in &holders {
        assert!(named.contains(&h.as_str()), "{h} not named in {named:?}");
    }
    for a in alerts(&fired, "GpuBoardDown") {
        assert_eq!(a["labels"]["node"], board);
        let d = a["annotations"]["description"].as_str().unwrap_or("");
        assert!(d.contains(board) && d.contains("power and network") && d.contains("tolerationSeconds"), "{d}");
    }

    // It comes back.
    down(&mut node, false);
    let restored = Instant::now();
    sim.sim.apply(node).unwrap();
    let (resolved_at, _) = wait_for(&got, Duration::from_secs(60), "GpuBoardDown resolved", is_down("resolved")).await;
    println!(
        "board dark → firing notification at the webhook: {:.1} s; back → resolved notification: {:.1} s",
        to_webhook.as_secs_f64(),
        (resolved_at - restored).as_secs_f64()
    );
    assert!(to_webhook < Duration::from_secs(30), "{to_webhook:?}");
    hook_task.abort();
}
