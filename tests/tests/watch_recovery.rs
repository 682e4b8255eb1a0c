//! Staying power under watch faults: `gpudash serve` against the simulator through 100 injected
//! faults — dropped streams, 410 Gone, API server restarts, and a 30 s stall. After each
//! recovery gpudash's view equals the simulator's state (the oracle) within 5 s; outages and the
//! stall are shown as staleness while they last.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use gpudash_sim::{demo_scenario, start, Simulator, TimelineMode};
use gpudash_tests::Gpudash;
use serde_json::{json, Value};

/// What is compared: the test's pods (all Pending) and the cordoned nodes.
type Fingerprint = (BTreeSet<String>, BTreeSet<String>);

fn oracle(sim: &Simulator) -> Fingerprint {
    let pods = sim.state("Pod").into_iter().filter(|k| k.namespace == "faults").map(|k| k.name).collect();
    let cordoned = sim
        .state("Node")
        .into_iter()
        .filter(|k| sim.get("Node", "", &k.name).is_some_and(|n| n["spec"]["unschedulable"] == true))
        .map(|k| k.name)
        .collect();
    (pods, cordoned)
}

fn seen(v: &Value) -> Fingerprint {
    let pods = v["pending"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["namespace"] == "faults")
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    let cordoned = v["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["unschedulable"] == true)
        .filter_map(|n| n["name"].as_str().map(str::to_string))
        .collect();
    (pods, cordoned)
}

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "faults", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
           "status": {"phase": "Pending"}})
}

fn toggle_cordon(sim: &Simulator, node: &str) {
    let mut n = sim.get("Node", "", node).unwrap_or_else(|| panic!("node {node} missing"));
    let on = n["spec"]["unschedulable"] != true;
    n["spec"]["unschedulable"] = json!(on);
    sim.apply(n).expect("the simulator takes the node");
}

/// Polls gpudash until its view matches the oracle and is not stale; returns how long it took.
async fn converge(gd: &Gpudash, sim: &Simulator, limit: Duration, what: &str) -> Duration {
    let t = Instant::now();
    loop {
        let v = gd.json("/api/v1/cluster").await.unwrap_or_default();
        if seen(&v) == oracle(sim) && v["source"]["stale_since"].is_null() {
            return t.elapsed();
        }
        if t.elapsed() > limit {
            panic!(
                "after {what}: gpudash's view differs from the simulator after {limit:?}\nview:   {:?}\noracle: {:?}\nsource: {}\n--- gpudash output ---\n{}",
                seen(&v),
                oracle(sim),
                v["source"],
                gd.proc.output()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls gpudash until its view is marked stale; returns the source block.
async fn wait_stale(gd: &Gpudash, limit: Duration, what: &str) -> Value {
    let t = Instant::now();
    loop {
        let v = gd.json("/api/v1/cluster").await.unwrap_or_default();
        if v["source"]["stale_since"].is_string() {
            return v["source"].clone();
        }
        assert!(
            t.elapsed() < limit,
            "{what}: the view was not marked stale within {limit:?}: {}\n--- gpudash output ---\n{}",
            v["source"],
            gd.proc.output()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_watch_faults_each_recover_to_the_simulators_state_within_5_s() {
    let running = start(
        Simulator::with_bookmark_interval(demo_scenario(), Duration::from_secs(1)),
        ([127, 0, 0, 1], 0).into(),
        TimelineMode::Manual,
    )
    .await
    .unwrap();
    let sim = running.sim.clone();
    // A short stall limit keeps the test short; the default (30 s) behaves the same, slower.
    let gd = Gpudash::watching(&running.url(), &["--watch-stall", "6"]).await.unwrap();
    converge(&gd, &sim, Duration::from_secs(10), "the initial sync").await;
    let nodes: Vec<String> = sim.state("Node").into_iter().map(|k| k.name).collect();

    let mut worst = Duration::ZERO;
    let mut kinds = std::collections::BTreeMap::<&str, u32>::new();
    for i in 0..100u32 {
        let what: &str;
        let mut settle = Duration::ZERO;
        if i == 50 {
            // The stall: watches are accepted and say nothing for 30 s.
            what = "a 30 s stall";
            let t = Instant::now();
            sim.stall(true);
            sim.apply(pod(&format!("during-stall-{i}"))).unwrap();
            let src = wait_stale(&gd, Duration::from_secs(20), what).await;
            let err = src["error"].as_str().unwrap_or("");
            assert!(err.contains("stalled"), "the stall is named: {src}");
            let v = gd.json("/api/v1/cluster").await.unwrap_or_default();
            assert!(
                !seen(&v).0.contains(&format!("during-stall-{i}")),
                "a change made during the stall arrived while it lasted\n--- gpudash output ---\n{}",
                gd.proc.output()
            );
            tokio::time::sleep(Duration::from_secs(30).saturating_sub(t.elapsed())).await;
            sim.stall(false);
        } else {
            match i % 3 {
                0 => {
                    what = "dropped streams";
                    sim.close_watches();
                }
                1 => {
                    what = "410 Gone";
                    sim.expire_versions();
                }
                _ => {
                    what = "an API server restart";
                    // Every fifth restart is long enough to look at: the view must say stale.
                    let down = if i % 5 == 2 { Duration::from_millis(2500) } else { Duration::from_millis(300) };
                    sim.restart(down);
                    if down > Duration::from_secs(1) {
                        let src = wait_stale(&gd, down, what).await;
                        assert!(src["error"].is_string(), "{src}");
                    }
                    settle = down;
                }
            }
            // Changes made while the fault is in effect.
            sim.apply(pod(&format!("fault-{i}"))).unwrap();
            if i >= 3 {
                sim.delete("Pod", "faults", &format!("fault-{}", i - 3));
            }
            if i % 7 == 0 {
                toggle_cordon(&sim, &nodes[(i as usize / 7) % nodes.len()]);
            }
        }
        *kinds.entry(what).or_default() += 1;
        tokio::time::sleep(settle).await;
        let took = converge(&gd, &sim, Duration::from_secs(5), what).await;
        worst = worst.max(took);
    }
    println!("100 faults {kinds:?}: slowest recovery to the simulator's state {worst:?}");
    let verbs = sim.verb_counts();
    assert!(verbs.keys().all(|v| v == "get" || v == "list" || v == "watch"), "gpudash wrote: {verbs:?}");
}
