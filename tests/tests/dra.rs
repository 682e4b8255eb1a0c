//! Dynamic Resource Allocation end to end: the DRA scenario files (`tests/scenarios/dra/`)
//! served by the simulator as `resource.k8s.io/v1`, read by kubectl (the API server's Table
//! columns) and the Python client, derived by `gpudash serve` and read through
//! `GET /api/v1/cluster`, the node page's devices in Chromium — and an older K3s without the
//! group, which must leave gpudash working with no DRA section and nothing stale.

use std::process::Command;
use std::time::Duration;

use fantoccini::Locator;
use gpudash_sim::{start, Scenario, Simulator, TimelineMode};
use gpudash_tests::browser::{shot, wait_text};
use gpudash_tests::{expect_kubectl, kubeconfig_file, kubectl, with_browser, Gpudash};
use serde_json::Value;

fn dra_files() -> Vec<String> {
    gpudash_tests::scenario_files("dra", 3)
}

fn node<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["nodes"].as_array().into_iter().flatten().find(|n| n["name"] == name).unwrap_or_else(|| panic!("node {name}"))
}

fn dra<'a>(v: &'a Value, name: &str) -> &'a Value {
    node(v, name)["gpu_resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|g| g["sharing"] == "dra")
        .unwrap_or_else(|| panic!("{name}: no DRA entry in {}", node(v, name)["gpu_resources"]))
}

fn has(v: &Value, code: &str, name: &str) -> bool {
    v["diagnoses"].as_array().into_iter().flatten().any(|d| d["code"] == code && d["name"] == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dra_case_is_told_right_through_the_api_and_on_the_node_page() {
    let mut args = vec!["--demo".to_string()];
    args.extend(dra_files());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let gd = Gpudash::start(&args).await.unwrap();
    // The DRA watchers start once the group is found; wait for their objects.
    let v = gd
        .wait_view(Duration::from_secs(30), |v| {
            v["source"]["synced"] == true
                && v["nodes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|n| n["name"] == "gpu-a100-01" && n["gpu_resources"].as_array().is_some_and(|g| !g.is_empty()))
                && v["diagnoses"].as_array().into_iter().flatten().any(|d| d["code"] == "dra-claim-unreserved")
        })
        .await
        .unwrap();

    // Whole GPUs on a two-GPU node, exactly placed; the older pool generation left out.
    let a = dra(&v, "gpu-a100-01");
    assert_eq!((&a["resource"], &a["capacity"], &a["allocated"]), (&"gpu.nvidia.com".into(), &2.into(), &2.into()));
    assert_eq!(a["placement_known"], true);
    assert_eq!(a["devices"][0]["holders"][0]["name"], "llm-serve-0");
    assert_eq!(a["devices"][0]["product"], "NVIDIA A100 80GB PCIe");
    // The unreserved claim.
    assert_eq!(a["devices"][1]["claims"][0]["name"], "warmup-gpu");
    assert_eq!(a["devices"][1]["holders"].as_array().map(Vec::len), Some(0));
    assert!(has(&v, "dra-claim-unreserved", "warmup-gpu"));
    // MIG partitions under their parent.
    let m = dra(&v, "gpu-a100-mig-01");
    let parents: Vec<&Value> = m["devices"].as_array().into_iter().flatten().map(|d| &d["parent"]).collect();
    assert_eq!(parents, [&Value::Null, &"gpu-0".into(), &"gpu-0".into(), &"gpu-0".into()]);
    assert_eq!(m["devices"][1]["type"], "mig");
    // One claim shared by three pods.
    let s = dra(&v, "gpu-l4-shared-01");
    assert_eq!(s["devices"][0]["holders"].as_array().map(Vec::len), Some(3));
    assert_eq!(s["devices"][0]["claims"].as_array().map(Vec::len), Some(1));
    // Consumable capacity shares.
    let h = dra(&v, "gpu-h100-01");
    assert_eq!(h["devices"][0]["shared"], true);
    assert!(h["devices"][0]["claims"].as_array().into_iter().flatten().all(|c| c["share_id"].is_string()));
    // The extended-resource-mapped pod holds its DRA device and no phantom nvidia.com/gpu.
    assert_eq!(dra(&v, "gpu-l4-ext-01")["holders"][0]["name"], "ocr-0");
    assert_eq!(node(&v, "gpu-l4-ext-01")["gpu_resources"].as_array().map(Vec::len), Some(1));
    // Both allocators on one node.
    assert!(has(&v, "gpu-dual-allocator", "gpu-l4-dual-01"));
    // A pod pending on a missing DeviceClass, and one waiting for a node whose DRA driver is missing.
    let pending = |name: &str| {
        v["pending"].as_array().into_iter().flatten().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{name}"))
    };
    let det = pending("detector-0");
    assert_eq!(det["claims"][0]["device_class"], "gpu.example.com");
    assert_eq!(det["reasons"][0]["reason"], "DeviceClass gpu.example.com does not exist");
    assert!(has(&v, "dra-deviceclass-missing", "detector-0"));
    assert_eq!(pending("inspector-0")["claims"][0]["state"], "pending");
    assert!(has(&v, "dra-driver-missing", "orin-agx-dra-01"));
    assert!(!has(&v, "device-plugin-missing", "gpu-a100-01"));
    assert!(v["source"]["stale_since"].is_null(), "{}", v["source"]);

    // The what-if check over HTTP: a template and a pod pasted as one YAML text.
    let body = r#"
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-l4, namespace: docs}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"}}]
---
apiVersion: v1
kind: Pod
metadata: {name: ocr-2, namespace: docs}
spec:
  containers: [{name: ocr, image: registry.factory.local/docs/paddleocr:3.0, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-l4}]
"#;
    let fit = gd.fit_yaml(body).await.unwrap();
    let fits: Vec<&str> = fit["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["fits"] == true)
        .filter_map(|n| n["node"].as_str())
        .collect();
    // Free L4s: the two on gpu-l4-dual-01 only (the other L4s are taken).
    assert_eq!(fits, ["gpu-l4-dual-01"], "{fit}");
    assert_eq!(fit["placeable"], 1, "{fit}");

    let url = gd.url.clone();
    with_browser(|c| async move {
        c.goto(&format!("{url}/nodes/gpu-a100-mig-01")).await?;
        let rows = c.find_all(Locator::Css("section.dra tbody tr")).await?;
        assert_eq!(rows.len(), 4, "the GPU and its three MIG devices");
        let child = c.find(Locator::Css("section.dra tr.child[data-device='gpu-0-mig-19-4-1']")).await?;
        let text = child.text().await?;
        assert!(text.contains("llm/embed-0") && text.contains("9.6 GiB"), "{text}");
        let slots = c.find_all(Locator::Css("article.node[data-node='gpu-a100-mig-01'] li.slot")).await?;
        assert_eq!(slots.len(), 3, "one slot per MIG partition");
        wait_text(&c, "article.node .slot-row-label", "GPU 0", Duration::from_secs(5)).await?;
        wait_text(&c, "article.node .gpu-caption", "DRA devices · 1/4 allocated", Duration::from_secs(5)).await?;
        shot(&c, "dra-node-mig.png").await?;
        c.goto(&format!("{url}/nodes/gpu-a100-01")).await?;
        let orphan = c.find(Locator::Css("section.dra tr[data-device='gpu-1']")).await?.text().await?;
        assert!(orphan.contains("llm/warmup-gpu") && orphan.contains("no pod"), "{orphan}");
        c.goto(&format!("{url}/pending")).await?;
        wait_text(&c, "article.pending[data-pod='detector-0'] .chip.claim", "gpu.example.com", Duration::from_secs(5))
            .await?;
        wait_text(
            &c,
            "article.pending[data-pod='inspector-0'] .diagnosis",
            "dra-driver-missing",
            Duration::from_secs(5),
        )
        .await?;
        shot(&c, "dra-pending.png").await?;
        Ok(())
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_and_the_python_client_read_dra_objects_with_the_servers_columns() {
    let scenario = Scenario::from_files(&dra_files()).unwrap();
    let mut demo = gpudash_sim::demo_scenario();
    demo.objects.extend(scenario.objects);
    let sim = start(Simulator::new(demo), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let (dir, kc) = kubeconfig_file(&sim.url());
    let cases: &[(&[&str], &[&str])] = &[
        (&["version"], &["Server Version: v1.34.2+k3s1"]),
        (
            &["api-resources", "--api-group", "resource.k8s.io"],
            &["resourceslices", "resourceclaimtemplates", "DeviceClass"],
        ),
        (&["get", "resourceslices"], &["NODE", "DRIVER", "POOL", "gpu-a100-01-gpu.nvidia.com-k2x9d"]),
        (
            &["get", "resourceclaims", "-A"],
            &["NAMESPACE", "STATE", "allocated,reserved", "warmup-gpu", "inspector-0-gpu-d8f2h"],
        ),
        (&["get", "deviceclasses"], &["gpu.nvidia.com", "mig.nvidia.com", "gpu-ext.nvidia.com"]),
        (&["get", "resourceclaimtemplates", "-n", "line3"], &["example-gpu", "jetson-gpu"]),
        (
            &["get", "resourceslices", "--field-selector", "spec.nodeName=gpu-h100-01"],
            &["gpu-h100-01-gpu.nvidia.com-b5n2c"],
        ),
        (
            &["get", "pods", "-A", "-o", "wide"],
            &["READY", "STATUS", "RESTARTS", "NOMINATED NODE", "READINESS GATES", "gpu-a100-01", "Running"],
        ),
        (&["get", "nodes"], &["STATUS", "ROLES", "VERSION", "Ready", "v1.34.2+k3s1"]),
        (&["get", "events", "-A"], &["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE", "FailedScheduling", "pod/"]),
        (
            &[
                "get",
                "resourceclaim",
                "-n",
                "llm",
                "warmup-gpu",
                "-o",
                "jsonpath={.status.allocation.devices.results[0].device}",
            ],
            &["gpu-1"],
        ),
    ];
    expect_kubectl(&kc, cases).await;
    let (_, claims) = kubectl(&kc, &["get", "resourceclaims", "-n", "line3"]);
    let line = claims.lines().find(|l| l.starts_with("inspector-0-gpu-d8f2h")).unwrap_or_default();
    assert_eq!(line.split_whitespace().nth(1), Some("pending"), "{claims}");
    // The Python client, through the generic custom-objects API (the resource.k8s.io/v1 kinds).
    let script = dir.path().join("dra.py");
    std::fs::write(
        &script,
        r#"
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
api = client.CustomObjectsApi()
slices = api.list_cluster_custom_object("resource.k8s.io", "v1", "resourceslices", field_selector="spec.nodeName=gpu-a100-mig-01")
for s in slices["items"]:
    print("SLICE", s["spec"]["nodeName"], len(s["spec"]["devices"]))
claims = api.list_cluster_custom_object("resource.k8s.io", "v1", "resourceclaims")
for c in claims["items"]:
    print("CLAIM", c["metadata"]["namespace"], c["metadata"]["name"], len(c.get("status", {}).get("reservedFor", [])))
print("DONE")
"#,
    )
    .unwrap();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("/usr/bin/python3").arg(&script).arg(&kc).output().expect("python3")
    })
    .await
    .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("SLICE gpu-a100-mig-01 4"), "{text}");
    assert!(text.contains("CLAIM vision shared-l4 3"), "{text}");
    assert!(text.contains("CLAIM llm warmup-gpu 0"), "{text}");
    assert!(text.contains("DONE"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_k3s_without_dra_leaves_gpudash_working_with_no_dra_section() {
    let scenario = Scenario::from_files(&dra_files()).unwrap();
    let mut demo = gpudash_sim::demo_scenario();
    demo.objects.extend(scenario.objects);
    let simulator = Simulator::new(demo);
    simulator.set_kubernetes_minor(31);
    let sim = start(simulator, ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let (_dir, kc) = kubeconfig_file(&sim.url());
    let (ok, out) = kubectl(&kc, &["get", "resourceslices"]);
    assert!(!ok && out.contains("the server doesn't have a resource type"), "{out}");
    let gd = Gpudash::watching(&sim.url(), &[]).await.unwrap();
    let v = gd.wait_view(Duration::from_secs(20), |v| v["source"]["synced"] == true).await.unwrap();
    // Two more seconds for anything that would turn stale or error.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let v2 = gd.json("/api/v1/cluster").await.unwrap();
    for v in [&v, &v2] {
        assert!(v["source"]["stale_since"].is_null(), "{}", v["source"]);
        let dra_entries = v["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|n| n["gpu_resources"].as_array().into_iter().flatten())
            .filter(|g| g["sharing"] == "dra")
            .count();
        assert_eq!(dra_entries, 0);
        let codes: Vec<&str> =
            v["diagnoses"].as_array().into_iter().flatten().filter_map(|d| d["code"].as_str()).collect();
        assert!(!codes.iter().any(|c| c.starts_with("dra-") || *c == "gpu-dual-allocator"), "{codes:?}");
    }
    // The demo's own nodes are there as ever.
    assert!(v2["nodes"].as_array().is_some_and(|n| n.iter().any(|n| n["name"] == "orin-agx-01")));
    let log = gd.proc.output();
    assert!(log.contains("is not served"), "gpudash says why there are no DRA devices:\n{log}");
    // No error from gpudash. The HTTP trace layer logs any 503 at ERROR level, and this test's own
    // readiness polling gets 503 until the first sync: those lines are the test's, not a fault.
    let errors: Vec<&str> =
        log.lines().filter(|l| l.contains("ERROR") && !l.contains("503 Service Unavailable")).collect();
    assert!(errors.is_empty(), "{log}");
}
