//! GPU quotas per team, end to end: the quota scenario files (`tests/scenarios/quota/`) served by
//! the simulator, read by kubectl, derived by `gpudash serve` (quotas, blocked workloads,
//! `gpu-quota-exhausted`), the what-if check refusing by quota in the API server's words, and
//! the quota page and pending page in Chromium.

use std::time::Duration;

use fantoccini::Locator;
use gpudash_sim::{start, Scenario, Simulator, TimelineMode};
use gpudash_tests::browser::{shot, text};
use gpudash_tests::{kubeconfig_file, root, with_browser, Gpudash};
use serde_json::Value;

fn files() -> Vec<std::path::PathBuf> {
    ["deployment-blocked.yaml", "scoped-job-blocked.yaml", "device-class.yaml"]
        .iter()
        .map(|f| root().join("tests/scenarios/quota").join(f))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quota_that_blocks_a_model_while_gpus_are_free_is_seen_everywhere() {
    let paths = files();
    let refs: Vec<&std::path::Path> = paths.iter().map(std::path::PathBuf::as_path).collect();
    let scenario = Scenario::from_files(&refs).unwrap();
    let sim = start(Simulator::new(scenario), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();

    // kubectl reads the quotas from the simulator as from an API server.
    let (_dir, kc) = kubeconfig_file(&sim.url());
    let out = gpudash_tests::kubectl_command(&kc).args(["get", "resourcequota", "-A"]).output().expect("kubectl");
    let listing = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{listing}{}", String::from_utf8_lossy(&out.stderr));
    for q in ["gpu-quota", "gpu-high-priority", "dra-gpus"] {
        assert!(listing.contains(q), "{q} not in:\n{listing}");
    }
    let out = gpudash_tests::kubectl_command(&kc)
        .args(["get", "quota", "gpu-quota", "-n", "team-a", "-o", "jsonpath={.status.used}"])
        .output()
        .expect("kubectl");
    assert!(String::from_utf8_lossy(&out.stdout).contains("requests.nvidia.com/gpu"));

    let gd = Gpudash::watching(&sim.url(), &[]).await.unwrap();
    let v = gd
        .wait_view(Duration::from_secs(20), |v| {
            v["source"]["synced"] == true && v["blocked"].as_array().is_some_and(|b| b.len() == 2)
        })
        .await
        .unwrap();
    let quotas: Vec<(String, String, u64, u64)> = v["quotas"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|q| {
            (
                q["namespace"].as_str().unwrap_or("").to_string(),
                q["resource"].as_str().unwrap_or("").to_string(),
                q["hard"].as_u64().unwrap_or(99),
                q["used"].as_u64().unwrap_or(99),
            )
        })
        .collect();
    assert_eq!(
        quotas,
        vec![
            ("team-a".to_string(), "requests.nvidia.com/gpu".to_string(), 1, 1),
            ("team-dra".to_string(), "gpu.nvidia.com.deviceclass.resource.k8s.io/devices".to_string(), 2, 2),
            ("team-ml".to_string(), "requests.nvidia.com/gpu".to_string(), 2, 2),
        ]
    );
    let codes: Vec<(&str, &str)> = v["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["code"] == "gpu-quota-exhausted")
        .map(|d| (d["kind"].as_str().unwrap_or(""), d["name"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(codes.len(), 2, "{codes:?}");
    assert!(
        codes.contains(&("ReplicaSet", "team-workload-7c9d8f6b5"))
            && codes.contains(&("Job", "train-nightly-29013120"))
    );
    assert_eq!(v["totals"]["blocked"], 2);

    // The what-if check applies quota admission first, in the API server's words.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: one-more, namespace: team-a}\nspec:\n  runtimeClassName: nvidia\n  containers:\n  - name: \
        m\n    resources: {limits: {nvidia.com/gpu: \"1\"}}\n";
    let r = reqwest::Client::new()
        .post(format!("{}/api/v1/fit", gd.url))
        .header("content-type", "application/yaml")
        .body(pod)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let fit: Value = r.json().await.unwrap_or_default();
    assert_eq!(
        fit["summary"],
        "pods \"one-more\" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: \
            requests.nvidia.com/gpu=1"
    );

    let url = gd.url.clone();
    with_browser(|c| async move {
        c.goto(&format!("{url}/quotas")).await?;
        let cards = c.find_all(Locator::Css("article.quota")).await?;
        assert_eq!(cards.len(), 3);
        let full = c.find_all(Locator::Css("article.quota[data-full='true']")).await?;
        assert_eq!(full.len(), 3, "every quota of the scenario is used up");
        // Two free replicas on the Orin and one whole GPU on the L40S server.
        let team_a = text(&c, "article.quota[data-namespace='team-a']").await?;
        assert!(team_a.contains("1 / 1 used") && team_a.contains("3 free nvidia.com/gpu in the cluster"), "{team_a}");
        assert!(team_a.contains("team-workload-7c9d8f6b5-m4n8p"), "{team_a}");
        shot(&c, "quotas.png").await?;
        c.goto(&format!("{url}/quotas?ns=team-ml")).await?;
        assert_eq!(c.find_all(Locator::Css("article.quota")).await?.len(), 1, "filtered by namespace");
        c.goto(&format!("{url}/pending")).await?;
        let blocked = c.find_all(Locator::Css("article.pending[data-blocked='true']")).await?;
        assert_eq!(blocked.len(), 2);
        let rs = text(&c, "article.pending[data-pod='team-workload-7c9d8f6b5']").await?;
        assert!(
            rs.contains("blocked by quota") && rs.contains("ReplicaSet team-a/") && rs.contains("gpu-quota-exhausted"),
            "{rs}"
        );
        shot(&c, "pending-blocked.png").await?;
        Ok(())
    })
    .await
    .unwrap();
}
