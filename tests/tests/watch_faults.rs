//! kube-rs' watcher over real HTTP survives every fault the simulator injects and ends with
//! exactly the simulator's state (the oracle).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use futures::StreamExt;
use gpudash_sim::{demo_scenario, start, Simulator, TimelineMode};
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::{reflector, watcher, WatchStreamExt};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

type Keys = BTreeSet<(String, String, String)>;

fn oracle(sim: &Simulator) -> Keys {
    sim.state("Pod").into_iter().map(|k| (k.namespace, k.name, k.resource_version)).collect()
}

fn mirror(store: &reflector::Store<Pod>) -> Keys {
    store
        .state()
        .iter()
        .map(|p| (p.namespace().unwrap_or_default(), p.name_any(), p.resource_version().unwrap_or_default()))
        .collect()
}

async fn converge(sim: &Simulator, store: &reflector::Store<Pod>, what: &str) {
    let t = Instant::now();
    loop {
        if mirror(store) == oracle(sim) {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "after {what}: watcher state differs from the simulator:\nmirror: {:?}\noracle: {:?}",
            mirror(store),
            oracle(sim)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn pod(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "faults"},
           "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_watcher_survives_every_injected_fault() {
    let running = start(
        Simulator::with_bookmark_interval(demo_scenario(), Duration::from_millis(500)),
        ([127, 0, 0, 1], 0).into(),
        TimelineMode::Manual,
    )
    .await
    .unwrap();
    let sim = running.sim.clone();
    let cfg = kube::Config::new(running.url().parse().unwrap());
    let client = Client::try_from(cfg).unwrap();
    let (store, writer) = reflector::store::<Pod>();
    let stream = watcher(Api::<Pod>::all(client), watcher::Config::default().timeout(5))
        .default_backoff()
        .reflect(writer)
        .for_each(|_| futures::future::ready(()));
    let task = tokio::spawn(stream);
    converge(&sim, &store, "initial sync").await;

    type Fault = Box<dyn Fn(&Simulator)>;
    let faults: Vec<(&str, Fault)> = vec![
        ("closing every watch", Box::new(|s: &Simulator| s.close_watches())),
        ("expiring versions (410 Gone)", Box::new(|s: &Simulator| s.expire_versions())),
        ("an API restart", Box::new(|s: &Simulator| s.restart(Duration::from_millis(700)))),
        ("slow responses", Box::new(|s: &Simulator| s.set_delay(Duration::from_millis(300)))),
    ];
    for (i, (what, inject)) in faults.iter().enumerate() {
        inject(&sim);
        sim.apply(pod(&format!("after-fault-{i}"))).unwrap();
        let _ = sim.advance();
        converge(&sim, &store, what).await;
    }
    sim.set_delay(Duration::ZERO);

    // A stall: watches are accepted and stay silent; changes made meanwhile arrive after it ends.
    sim.stall(true);
    sim.apply(pod("during-stall")).unwrap();
    assert!(sim.delete("Pod", "faults", "after-fault-0"));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(mirror(&store).iter().all(|k| k.1 != "during-stall"), "a stalled watch delivered an event");
    sim.stall(false);
    converge(&sim, &store, "a stall").await;
    task.abort();
}

/// Reads a raw watch stream until it ends or `limit` passes; returns what arrived.
async fn drain(resp: &mut reqwest::Response, limit: Duration) -> String {
    let mut got = Vec::new();
    let end = Instant::now() + limit;
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(end.into(), resp.chunk()).await {
        got.extend_from_slice(&chunk);
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// The stall is a hung server from the moment it begins: a change made right after it starts
/// never reaches a watch that was open, however the race between the watch's close and the
/// change falls (CI once saw one slip through). Forty rounds, each a fresh open watch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_made_just_after_a_stall_begins_never_reaches_an_open_watch() {
    let running =
        start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let sim = running.sim.clone();
    let http = reqwest::Client::new();
    for round in 0..40 {
        let rv = sim.resource_version();
        let url = format!("{}/api/v1/pods?watch=true&resourceVersion={rv}&timeoutSeconds=30", running.url());
        let mut resp = http.get(&url).send().await.unwrap();
        // The watch is live once a change made now arrives through it.
        sim.apply(pod(&format!("before-{round}"))).unwrap();
        let first = drain_until(&mut resp, &format!("before-{round}")).await;
        assert!(first, "round {round}: the open watch did not deliver a change");
        sim.stall(true);
        sim.apply(pod(&format!("during-{round}"))).unwrap();
        let after = drain(&mut resp, Duration::from_millis(300)).await;
        assert!(!after.contains(&format!("during-{round}")), "round {round}: a stalled watch sent {after}");
        sim.stall(false);
    }
}

/// Reads a watch until `needle` shows up (true) or 5 s pass (false).
async fn drain_until(resp: &mut reqwest::Response, needle: &str) -> bool {
    let mut got = Vec::new();
    let end = Instant::now() + Duration::from_secs(5);
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(end.into(), resp.chunk()).await {
        got.extend_from_slice(&chunk);
        if String::from_utf8_lossy(&got).contains(needle) {
            return true;
        }
    }
    false
}
