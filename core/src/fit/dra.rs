//! The what-if check for Dynamic Resource Allocation: the devices a workload's claims ask for
//! (from its ResourceClaimTemplates, named ResourceClaims, or extended resources a DeviceClass
//! stands for), counted against each node's free devices. DeviceClass and request selectors are
//! CEL; the common forms are evaluated (`fit::cel`) — `device.driver == '…'`, attribute equality and
//! inequality, capacity `compareTo(quantity('…'))` comparisons, joined by `&&` — and any other
//! expression is said plainly to be beyond what the check evaluates (its devices are then
//! counted as matching, and the answer says so).

use std::collections::{BTreeSet, HashMap};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::cel::eval;
use crate::derive::dra::{is_gpu_driver, NodeDra};
use crate::derive::Inputs;
use crate::dra::{ClaimSpec, Device, ResourceClaim, ResourceClaimTemplate};
use crate::pod::Pod;

/// The scheduler's reason when a node's devices cannot satisfy the claims.
pub const CANNOT_ALLOCATE: &str = "cannot allocate all claims";
/// The scheduler's reason when a claim is already allocated on another node.
pub const NOT_AVAILABLE: &str = "resourceclaim not available on the node";

/// One way to satisfy a request: a class, the selectors every device must pass, how many.
#[derive(Debug, Clone)]
struct Alternative {
    class: String,
    selectors: Vec<String>,
    /// `None`: all matching devices (`allocationMode: All`), at least one.
    count: Option<u64>,
}

/// What a workload's pod asks of DRA.
#[derive(Debug, Default)]
pub struct Demand {
    /// Per request, its alternatives in order (`firstAvailable`), each per replica.
    requests: Vec<(String, Vec<Alternative>)>,
    /// A named claim already allocated: the pod can only go where its devices are.
    pinned: Option<(String, String)>,
    /// Why no pod could be created or scheduled at all (a missing class or template).
    pub refusal: Option<String>,
    /// What the check could not evaluate, said plainly.
    pub notes: Vec<gpudash_model::i18n::Said>,
    /// Extended resources a DeviceClass stands for (left out of the node's resource fit).
    pub mapped: BTreeSet<String>,
}

impl Demand {
    /// What each request asks for, in words (`1 × gpu.nvidia.com`).
    pub fn wants(&self) -> Vec<String> {
        self.requests
            .iter()
            .filter_map(|(_, alts)| {
                let words: Vec<String> = alts
                    .iter()
                    .map(|a| match a.count {
                        Some(c) => format!("{c} × {}", a.class),
                        None => format!("all {}", a.class),
                    })
                    .collect();
                (!words.is_empty()).then(|| words.join(" or "))
            })
            .collect()
    }

    /// Whether the pod asks for DRA devices at all.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.pinned.is_none()
    }
}

/// A request as read: its name and alternatives (class, selectors, count).
type RawRequest = (String, Vec<(String, Vec<String>, Option<u64>)>);

fn requests_of(spec: &ClaimSpec) -> Vec<RawRequest> {
    spec.devices
        .requests
        .iter()
        .map(|r| {
            let alts = r
                .alternatives()
                .into_iter()
                .map(|a| {
                    let count = match a.allocation_mode.as_deref() {
                        Some("All") => None,
                        _ => Some(u64::try_from(a.count.unwrap_or(1).max(1)).unwrap_or(1)),
                    };
                    let sel = a.selectors.iter().filter_map(|s| s.cel.as_ref()).map(|c| c.expression.clone()).collect();
                    (a.device_class_name.clone(), sel, count)
                })
                .collect();
            (r.name.clone(), alts)
        })
        .collect()
}

/// Reads what the pod asks for. `extended`: the pod's extended resources and units.
pub fn demand(
    inputs: &Inputs,
    pod: &Pod,
    templates: &[ResourceClaimTemplate],
    claims: &[ResourceClaim],
    extended: &[(String, u64)],
) -> Demand {
    let mut d = Demand::default();
    let mut raw = claimed_requests(inputs, pod, templates, claims, &mut d);
    // Extended resources a DeviceClass stands for (DRAExtendedResource).
    for (res, units) in extended {
        if let Some(c) = inputs.device_classes.iter().find(|c| c.spec.extended_resource_name.as_deref() == Some(res)) {
            d.mapped.insert(res.clone());
            raw.push((format!("extended {res}"), vec![(c.name().to_string(), Vec::new(), Some(*units))]));
        }
    }
    resolve_classes(inputs, raw, &mut d);
    d
}

/// The requests of the pod's claims: from the template it names (pasted beside it, else in the
/// cluster) or the claim it names; an allocated claim pins the pod to its pool instead. What
/// cannot be found is the demand's refusal.
fn claimed_requests(
    inputs: &Inputs,
    pod: &Pod,
    templates: &[ResourceClaimTemplate],
    claims: &[ResourceClaim],
    d: &mut Demand,
) -> Vec<RawRequest> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let in_ns = |meta: &ObjectMeta, name: &str| {
        meta.name.as_deref() == Some(name) && meta.namespace.as_deref().unwrap_or("") == ns
    };
    let mut raw: Vec<RawRequest> = Vec::new();
    for (entry, claim, template) in pod.claims() {
        if let Some(t) = template {
            let found = templates
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(t))
                .or_else(|| inputs.claim_templates.iter().find(|x| in_ns(&x.metadata, t)).map(AsRef::as_ref));
            match found {
                Some(tpl) => raw.extend(requests_of(&tpl.spec.spec)),
                None => {
                    d.refusal.get_or_insert(format!(
                        "ResourceClaimTemplate {ns}/{t} (claim {entry}) not found: no claim can be made for the pod, and it waits with \"ResourceClaim \
                            not created yet\""
                    ));
                }
            }
        } else if let Some(c) = claim {
            let found = claims
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(c))
                .or_else(|| inputs.claims.iter().find(|x| in_ns(&x.metadata, c)).map(AsRef::as_ref));
            match found {
                Some(claim) if claim.allocated() => {
                    let pool = claim.results().first().map(|r| (r.driver.clone(), r.pool.clone()));
                    d.pinned = pool.or(d.pinned.take());
                }
                Some(claim) => raw.extend(requests_of(&claim.spec)),
                None => {
                    d.refusal.get_or_insert(format!("ResourceClaim {ns}/{c} not found: the pod waits until it exists"));
                }
            }
        }
    }
    raw
}

/// Each request's alternatives with their DeviceClass's selectors added; a class that does not
/// exist is the demand's refusal, a selector beyond the check a note.
fn resolve_classes(inputs: &Inputs, raw: Vec<RawRequest>, d: &mut Demand) {
    let classes: HashMap<&str, &crate::dra::DeviceClass> =
        inputs.device_classes.iter().map(|c| (c.name(), c.as_ref())).collect();
    for (name, alts) in raw {
        let mut out = Vec::new();
        for (class, mut selectors, count) in alts {
            let Some(c) = classes.get(class.as_str()) else {
                d.refusal.get_or_insert(format!(
                    "request {name}: DeviceClass {class} does not exist — the scheduler refuses the pod on every node"
                ));
                continue;
            };
            let mut all: Vec<String> =
                c.spec.selectors.iter().filter_map(|s| s.cel.as_ref()).map(|e| e.expression.clone()).collect();
            all.append(&mut selectors);
            for s in &all {
                if eval(s, "", &Device::default()).is_none() && !d.notes.iter().any(|n| n.en.contains(s.as_str())) {
                    d.notes.push(gpudash_model::say!("the selector `{s}` (DeviceClass {class} or request {name}) is beyond what the what-if check \
                        evaluates: every device of a GPU driver is counted as matching it", "セレクター `{s}`（DeviceClass {class} またはリクエスト {name}）は \
                        what-if チェックで評価できる範囲を超えています。GPU ドライバーのデバイスはすべて合うものとして数えています"));
                }
            }
            out.push(Alternative { class, selectors: all, count });
        }
        if !out.is_empty() {
            d.requests.push((name, out));
        }
    }
}

/// A node's devices that no claim holds (a partition and its GPU block each other).
struct Free<'a> {
    devices: Vec<(&'a str, &'a Device)>,
}

fn free_devices<'a>(index: &'a crate::derive::Map<&str, NodeDra>, node: &str) -> Free<'a> {
    let Some(nd) = index.get(node) else { return Free { devices: Vec::new() } };
    let taken: BTreeSet<(String, String)> =
        nd.claims.iter().flat_map(|c| c.results().iter()).map(|r| (r.pool.clone(), r.device.clone())).collect();
    let mut out = Vec::new();
    for s in &nd.slices {
        let driver = s.spec.driver.as_str();
        let pool = s.spec.pool.name.as_str();
        // A GPU with a partition taken, and the partitions of a GPU taken whole, are not free
        // (they share the GPU's memory and engines); sibling partitions are.
        let taken_devices: Vec<&Device> =
            s.spec.devices.iter().filter(|d| taken.contains(&(pool.to_string(), d.name.clone()))).collect();
        let whole_taken: BTreeSet<String> = taken_devices.iter().filter_map(|d| d.text(driver, "uuid")).collect();
        let partitioned: BTreeSet<String> = taken_devices.iter().filter_map(|d| d.text(driver, "parentUUID")).collect();
        for d in &s.spec.devices {
            let shared = d.allow_multiple_allocations == Some(true);
            let held = taken.contains(&(pool.to_string(), d.name.clone()));
            let family_held = d.text(driver, "parentUUID").is_some_and(|u| whole_taken.contains(&u))
                || d.text(driver, "uuid").is_some_and(|u| partitioned.contains(&u));
            if shared || (!held && !family_held) {
                out.push((driver, d));
            }
        }
    }
    Free { devices: out }
}

/// The cluster's DRA devices by node, computed once per check.
pub fn index(inputs: &Inputs) -> crate::derive::Map<&str, NodeDra> {
    crate::derive::dra::by_node(&inputs.slices, &inputs.claims)
}

/// How many replicas a node's free devices can take, or the scheduler's reason why none.
pub fn on_node(index: &crate::derive::Map<&str, NodeDra>, node: &str, d: &Demand) -> Result<u32, &'static str> {
    if let Some((driver, pool)) = &d.pinned {
        // The claim's devices are on its pool's node.
        let here = index
            .get(node)
            .is_some_and(|nd| nd.slices.iter().any(|s| s.spec.pool.name == *pool && s.spec.driver == *driver));
        if !here {
            return Err(NOT_AVAILABLE);
        }
        if d.requests.is_empty() {
            return Ok(u32::MAX);
        }
    }
    let free = free_devices(index, node);
    let mut replicas = u32::MAX;
    let mut used: BTreeSet<usize> = BTreeSet::new();
    for (_, alts) in &d.requests {
        let mut best: Option<u32> = None;
        for a in alts {
            let matching: Vec<usize> = free
                .devices
                .iter()
                .enumerate()
                .filter(|(i, (driver, dev))| {
                    !used.contains(i)
                        && is_gpu_driver(driver)
                        && a.selectors.iter().all(|s| eval(s, driver, dev).unwrap_or(true))
                })
                .map(|(i, _)| i)
                .collect();
            let n = matching.len() as u64;
            let per = match a.count {
                Some(c) => n / c,
                None => u64::from(n > 0),
            };
            if per > 0 {
                // Devices this request takes for one replica are not offered to the next request.
                let take = a.count.unwrap_or(n) as usize;
                used.extend(matching.into_iter().take(take));
                best = Some(u32::try_from(per).unwrap_or(u32::MAX));
                break;
            }
        }
        match best {
            Some(b) => replicas = replicas.min(b),
            None => return Err(CANNOT_ALLOCATE),
        }
    }
    Ok(replicas)
}
