//! Inputs from objects as `kubectl get -o yaml` prints them: the fixtures of the tests and the
//! benchmark, and any saved cluster dump.

use std::sync::Arc;

use super::Inputs;

fn typed<T: serde::de::DeserializeOwned>(kind: &str, v: serde_yaml::Value) -> Result<T, String> {
    serde_yaml::from_value(v).map_err(|e| format!("{kind}: {e}"))
}

/// Reads YAML documents (objects and `List`s) into inputs; kinds the derivation does not read
/// are skipped. Metrics count as served (empty) unless the text has some.
pub fn from_kubectl_yaml(text: &str) -> Result<Inputs, String> {
    let mut inputs =
        Inputs { node_metrics: Some(Arc::default()), pod_metrics: Some(Arc::default()), ..Inputs::default() };
    for doc in serde_yaml::Deserializer::from_str(text) {
        let v = <serde_yaml::Value as serde::Deserialize>::deserialize(doc).map_err(|e| e.to_string())?;
        let items = if v.get("kind").and_then(|k| k.as_str()) == Some("List") {
            v.get("items").and_then(|i| i.as_sequence()).cloned().unwrap_or_default()
        } else {
            vec![v]
        };
        for item in items {
            let kind = item.get("kind").and_then(|k| k.as_str()).unwrap_or("").to_string();
            let k = kind.as_str();
            match k {
                "Node" => inputs.nodes.push(Arc::new(typed(k, item)?)),
                "Pod" => inputs.pods.push(Arc::new(typed(k, item)?)),
                "Event" => inputs.events.push(Arc::new(typed(k, item)?)),
                "RuntimeClass" => inputs.runtime_classes.push(Arc::new(typed(k, item)?)),
                "ReplicaSet" => inputs.replica_sets.push(Arc::new(typed(k, item)?)),
                "Deployment" => inputs.deployments.push(Arc::new(typed(k, item)?)),
                "DaemonSet" => inputs.daemon_sets.push(Arc::new(typed(k, item)?)),
                "ResourceQuota" => inputs.quotas.push(Arc::new(typed(k, item)?)),
                "NodeMetrics" => {
                    Arc::make_mut(inputs.node_metrics.get_or_insert_with(Arc::default)).push(typed(k, item)?)
                }
                "PodMetrics" => {
                    Arc::make_mut(inputs.pod_metrics.get_or_insert_with(Arc::default)).push(typed(k, item)?)
                }
                "ResourceSlice" => inputs.slices.push(Arc::new(typed(k, item)?)),
                "ResourceClaim" => inputs.claims.push(Arc::new(typed(k, item)?)),
                "ResourceClaimTemplate" => inputs.claim_templates.push(Arc::new(typed(k, item)?)),
                "DeviceClass" => inputs.device_classes.push(Arc::new(typed(k, item)?)),
                _ => {}
            }
        }
    }
    Ok(inputs)
}
