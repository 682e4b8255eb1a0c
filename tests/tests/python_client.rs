//! A second, independent client: the official Python `kubernetes` client lists and watches pods
//! through the generated kubeconfig.

use std::process::Command;
use std::time::Duration;

use gpudash_sim::{demo_scenario, start, Simulator, TimelineMode};
use gpudash_tests::kubeconfig_file;

const SCRIPT: &str = r#"
import sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
pods = v1.list_pod_for_all_namespaces()
print("LIST", pods.metadata.resource_version, len(pods.items))
for p in pods.items:
    print("POD", p.metadata.namespace, p.metadata.name, p.status.phase)
nodes = client.CoreV1Api().list_node(label_selector="kubernetes.io/arch=arm64")
print("ARM64", ",".join(sorted(n.metadata.name for n in nodes.items)))
w = watch.Watch()
for ev in w.stream(v1.list_pod_for_all_namespaces, resource_version=pods.metadata.resource_version, timeout_seconds=15):
    print("EVENT", ev["type"], ev["object"].metadata.name, flush=True)
    if ev["object"].metadata.name.startswith("speech-tts"):
        w.stop()
        break
print("DONE")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_lists_and_watches_pods() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let (dir, kc) = kubeconfig_file(&sim.url());
    let script = dir.path().join("client.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let handle = tokio::task::spawn_blocking(move || {
        Command::new("/usr/bin/python3").arg(&script).arg(&kc).output().expect("python3")
    });
    // Once the script has listed and opened its watch, change the cluster.
    let t = std::time::Instant::now();
    while !sim.sim.verb_counts().contains_key("watch") {
        assert!(t.elapsed() < Duration::from_secs(30), "the Python client opened no watch");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(sim.sim.advance());
    let out = handle.await.unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "python client failed (is python3-kubernetes installed? ./test.sh installs it):\n{text}"
    );
    assert!(text.contains("POD vision anomaly-detector-6f8d7b5c4-r7zq9 Pending"), "{text}");
    assert!(text.contains("ARM64 orin-agx-01,orin-nano-01,orin-nx-02,xavier-nx-03"), "{text}");
    assert!(text.contains("EVENT ADDED speech-tts-6d5c4b3a2-z9y8x"), "{text}");
    assert!(text.contains("DONE"), "{text}");
}
