//! A wire pod projected to gpudash's pod: what Kubernetes' JSON omits when empty is `None`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as k;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as m;

use super::wire;
use crate::pod::{self, Pod};

/// `None` for what Kubernetes' JSON omits when empty.
fn some(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

fn some_vec<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

fn some_map<V>(m: BTreeMap<String, V>) -> Option<BTreeMap<String, V>> {
    (!m.is_empty()).then_some(m)
}

/// A time: a zero time is written as an empty message (JSON writes `null`); JSON keeps seconds
/// only, and so does Kubernetes' protobuf.
fn time(t: Option<wire::Time>) -> Option<m::Time> {
    let s = t?.seconds?;
    k8s_openapi::jiff::Timestamp::from_second(s).ok().map(m::Time)
}

fn quantities(q: BTreeMap<String, wire::Quantity>) -> BTreeMap<String, Quantity> {
    q.into_iter().map(|(k, v)| (k, Quantity(v.string))).collect()
}

fn meta(w: wire::ObjectMeta) -> m::ObjectMeta {
    m::ObjectMeta {
        name: some(w.name),
        generate_name: some(w.generate_name),
        namespace: some(w.namespace),
        uid: some(w.uid),
        resource_version: some(w.resource_version),
        generation: (w.generation != 0).then_some(w.generation),
        creation_timestamp: time(w.creation_timestamp),
        deletion_timestamp: time(w.deletion_timestamp),
        deletion_grace_period_seconds: w.deletion_grace_period_seconds,
        labels: some_map(w.labels),
        annotations: some_map(
            w.annotations
                .into_iter()
                .filter(|(k, _)| gpudash_core::meta::KEPT_ANNOTATIONS.contains(&k.as_str()))
                .collect(),
        ),
        owner_references: some_vec(
            w.owner_references
                .into_iter()
                .map(|o| m::OwnerReference {
                    api_version: o.api_version,
                    kind: o.kind,
                    name: o.name,
                    uid: o.uid,
                    controller: o.controller,
                    block_owner_deletion: o.block_owner_deletion,
                })
                .collect(),
        ),
        finalizers: some_vec(w.finalizers),
        ..m::ObjectMeta::default()
    }
}

pub(super) fn pod(w: wire::Pod) -> Pod {
    Pod {
        metadata: w.metadata.map(meta).unwrap_or_default(),
        spec: w.spec.map(spec),
        status: w.status.map(status_of),
        memo: Default::default(),
    }
}

fn spec(w: wire::PodSpec) -> pod::PodSpec {
    pod::PodSpec {
        node_name: some(w.node_name),
        containers: w.containers.into_iter().map(container).collect(),
        init_containers: some_vec(w.init_containers.into_iter().map(container).collect()),
        overhead: some_map(quantities(w.overhead)),
        runtime_class_name: w.runtime_class_name,
        node_selector: some_map(w.node_selector),
        affinity: w.affinity.map(|a| Box::new(affinity(a))),
        tolerations: some_vec(
            w.tolerations
                .into_iter()
                .map(|t| k::Toleration {
                    key: some(t.key),
                    operator: some(t.operator),
                    value: some(t.value),
                    effect: some(t.effect),
                    toleration_seconds: t.toleration_seconds,
                })
                .collect(),
        ),
        scheduler_name: some(w.scheduler_name),
        priority_class_name: some(w.priority_class_name),
        resource_claims: w
            .resource_claims
            .into_iter()
            .map(|c| pod::PodResourceClaim {
                name: c.name,
                resource_claim_name: c.resource_claim_name,
                resource_claim_template_name: c.resource_claim_template_name,
            })
            .collect(),
    }
}

fn container(w: wire::Container) -> pod::Container {
    let gpu = w.env.into_iter().find(|v| v.name == pod::GpuEnv::NAME).map(|v| v.value);
    let list = |q: BTreeMap<String, wire::Quantity>| some_map(quantities(q)).map(pod::ResourceList::from);
    pod::Container {
        name: w.name,
        resources: w.resources.map(|r| pod::Resources { limits: list(r.limits), requests: list(r.requests) }),
        restart_policy: w.restart_policy,
        env: pod::GpuEnv(gpu),
        ports: w
            .ports
            .into_iter()
            .map(|p| pod::ContainerPort { name: some(p.name), container_port: p.container_port })
            .collect(),
    }
}

fn requirement(r: wire::Requirement) -> k::NodeSelectorRequirement {
    k::NodeSelectorRequirement { key: r.key, operator: r.operator, values: some_vec(r.values) }
}

fn term(t: wire::NodeSelectorTerm) -> k::NodeSelectorTerm {
    k::NodeSelectorTerm {
        match_expressions: some_vec(t.match_expressions.into_iter().map(requirement).collect()),
        match_fields: some_vec(t.match_fields.into_iter().map(requirement).collect()),
    }
}

fn selector(s: wire::LabelSelector) -> m::LabelSelector {
    m::LabelSelector {
        match_labels: some_map(s.match_labels),
        match_expressions: some_vec(
            s.match_expressions
                .into_iter()
                .map(|r| m::LabelSelectorRequirement { key: r.key, operator: r.operator, values: some_vec(r.values) })
                .collect(),
        ),
    }
}

fn pod_term(t: wire::PodAffinityTerm) -> k::PodAffinityTerm {
    k::PodAffinityTerm {
        label_selector: t.label_selector.map(selector),
        namespaces: some_vec(t.namespaces),
        topology_key: t.topology_key,
        namespace_selector: t.namespace_selector.map(selector),
        match_label_keys: some_vec(t.match_label_keys),
        mismatch_label_keys: some_vec(t.mismatch_label_keys),
    }
}

fn pod_affinity(a: wire::PodAffinity) -> (Option<Vec<k::PodAffinityTerm>>, Option<Vec<k::WeightedPodAffinityTerm>>) {
    let required = some_vec(a.required.into_iter().map(pod_term).collect());
    let preferred = some_vec(
        a.preferred
            .into_iter()
            .map(|w| k::WeightedPodAffinityTerm {
                weight: w.weight,
                pod_affinity_term: w.term.map(pod_term).unwrap_or_default(),
            })
            .collect(),
    );
    (required, preferred)
}

fn affinity(a: wire::Affinity) -> k::Affinity {
    k::Affinity {
        node_affinity: a.node_affinity.map(|n| k::NodeAffinity {
            required_during_scheduling_ignored_during_execution: n.required.map(|s| k::NodeSelector {
                node_selector_terms: s.node_selector_terms.into_iter().map(term).collect(),
            }),
            preferred_during_scheduling_ignored_during_execution: some_vec(
                n.preferred
                    .into_iter()
                    .map(|p| k::PreferredSchedulingTerm {
                        weight: p.weight,
                        preference: p.preference.map(term).unwrap_or_default(),
                    })
                    .collect(),
            ),
        }),
        pod_affinity: a.pod_affinity.map(|p| {
            let (required, preferred) = pod_affinity(p);
            k::PodAffinity {
                required_during_scheduling_ignored_during_execution: required,
                preferred_during_scheduling_ignored_during_execution: preferred,
            }
        }),
        pod_anti_affinity: a.pod_anti_affinity.map(|p| {
            let (required, preferred) = pod_affinity(p);
            k::PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: required,
                preferred_during_scheduling_ignored_during_execution: preferred,
            }
        }),
    }
}

fn status_of(w: wire::PodStatus) -> pod::PodStatus {
    pod::PodStatus {
        phase: some(w.phase),
        conditions: some_vec(
            w.conditions
                .into_iter()
                .map(|c| k::PodCondition {
                    type_: c.type_,
                    status: c.status,
                    last_probe_time: time(c.last_probe_time),
                    last_transition_time: time(c.last_transition_time),
                    reason: some(c.reason),
                    message: some(c.message),
                    observed_generation: (c.observed_generation != 0).then_some(c.observed_generation),
                })
                .collect(),
        ),
        nominated_node_name: some(w.nominated_node_name),
        reason: some(w.reason),
        message: some(w.message),
        pod_ip: some(w.pod_ip),
        start_time: time(w.start_time),
        container_statuses: some_vec(w.container_statuses.into_iter().map(container_status).collect()),
        resource_claim_statuses: w
            .resource_claim_statuses
            .into_iter()
            .map(|s| pod::PodClaimStatus { name: s.name, resource_claim_name: s.resource_claim_name })
            .collect(),
        extended_resource_claim_status: w.extended_resource_claim_status.map(|e| pod::ExtendedClaimStatus {
            request_mappings: e
                .request_mappings
                .into_iter()
                .map(|r| pod::RequestMapping {
                    container_name: r.container_name,
                    resource_name: r.resource_name,
                    request_name: r.request_name,
                })
                .collect(),
            resource_claim_name: e.resource_claim_name,
        }),
    }
}

fn container_status(w: wire::ContainerStatus) -> pod::ContainerStatus {
    let state = |s: wire::ContainerState| pod::ContainerState {
        waiting: s.waiting.map(|w| pod::StateReason {
            reason: some(w.reason),
            message: some(w.message),
            ..pod::StateReason::default()
        }),
        terminated: s.terminated.map(|t| pod::StateReason {
            reason: some(t.reason),
            message: some(t.message),
            exit_code: Some(t.exit_code),
            finished_at: time(t.finished_at),
        }),
        running: s.running.map(|r| {
            let at = time(r.started_at).map(|t| t.0.to_string());
            serde_json::json!({ "startedAt": at })
        }),
    };
    pod::ContainerStatus {
        name: w.name,
        ready: w.ready,
        restart_count: w.restart_count,
        state: w.state.map(state),
        last_state: w.last_state.map(state),
    }
}
