//! A DRA driver's devices on a node as one GPU resource: the grid of slots (a row per whole
//! device: its partitions, its shares, or itself), who holds them, and the node page's table of
//! devices with their claims and pods. Pure: the node's slices and claims in, the resource out.

use gpudash_model::i18n::Said;
use gpudash_model::model::{DeviceClaimRef, DeviceView, GpuResource, Holder, PodRef, Sharing, Slot, SlotState};

use super::dra::NodeDra;
use crate::dra::{Device, ResourceClaim};
use crate::quantity::Bytes;

/// A device of one driver on the node, with what was allocated on it.
struct Dev<'a> {
    pool: &'a str,
    d: &'a Device,
    /// (claim, share) allocated it.
    uses: Vec<(&'a ResourceClaim, Option<&'a str>, Option<u64>)>,
}

/// A name's natural sort key: digit runs compare as numbers (`gpu-2` before `gpu-10`).
pub(super) fn natural(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for ch in s.chars() {
        match (ch.to_digit(10), num) {
            (Some(d), Some(n)) => num = Some(n.saturating_mul(10).saturating_add(u64::from(d))),
            (Some(d), None) => num = Some(u64::from(d)),
            (None, Some(n)) => {
                out.push((std::mem::take(&mut text), n));
                num = None;
                text.push(ch);
            }
            (None, None) => text.push(ch),
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}

fn bytes_text(b: u64) -> String {
    gpudash_model::units::bytes(b)
}

/// The GPU resources a node's DRA drivers offer, one entry per driver.
pub fn resources(dra: &NodeDra) -> Vec<GpuResource> {
    let mut drivers: Vec<&str> = dra.slices.iter().map(|s| s.spec.driver.as_str()).collect();
    drivers.sort_unstable();
    drivers.dedup();
    drivers.into_iter().map(|driver| driver_resource(dra, driver)).collect()
}

fn driver_resource(dra: &NodeDra, driver: &str) -> GpuResource {
    let devs = driver_devices(dra, driver);
    let parents: Vec<Option<String>> = devs.iter().map(|d| parent_of(&devs, d.d, driver)).collect();
    let holders = holders(&devs);
    let (slots, rows) = grid(&devs, &parents, driver, &holders);
    let devices = device_views(&devs, &parents, driver);
    let mut products: Vec<&str> =
        devices.iter().filter(|d| d.parent.is_none()).filter_map(|d| d.product.as_deref()).collect();
    products.dedup();
    let capacity = devices.len() as u64;
    let allocated = devs.iter().filter(|d| !d.uses.is_empty()).count() as u64;
    GpuResource {
        resource: driver.to_string(),
        product: (products.len() == 1).then(|| products[0].to_string()),
        physical_gpus: Some(slots.len() as u64),
        replicas_per_gpu: 1,
        sharing: Sharing::Dra,
        capacity,
        allocatable: capacity,
        allocated,
        holders,
        placement_known: true,
        out_of_service: 0,
        slots,
        rows,
        devices,
        profile: None,
    }
}

/// The devices `driver` publishes on the node, in natural order, each with the claims
/// allocated it (and the memory a share consumes).
fn driver_devices<'a>(dra: &'a NodeDra, driver: &str) -> Vec<Dev<'a>> {
    let mut devs: Vec<Dev<'_>> = dra
        .slices
        .iter()
        .filter(|s| s.spec.driver == driver)
        .flat_map(|s| s.spec.devices.iter().map(move |d| (s.spec.pool.name.as_str(), d)))
        .map(|(pool, d)| Dev { pool, d, uses: Vec::new() })
        .collect();
    devs.sort_by_cached_key(|d| natural(&d.d.name));
    for c in &dra.claims {
        for r in c.results().iter().filter(|r| r.driver == driver) {
            if let Some(dev) = devs.iter_mut().find(|d| d.pool == r.pool && d.d.name == r.device) {
                let mem = r
                    .consumed_capacity
                    .as_ref()
                    .and_then(|m| m.get("memory"))
                    .and_then(|q| Bytes::parse(&q.0).ok())
                    .map(|b| b.0);
                dev.uses.push((c.as_ref(), r.share_id.as_deref(), mem));
            }
        }
    }
    // The node's claims come by address (what the memo compares): the shares of a device are
    // drawn in the claims' order by namespace and name, the same on every revision and run.
    for dev in &mut devs {
        dev.uses.sort_by(|a, b| {
            (&a.0.metadata.namespace, &a.0.metadata.name, a.1).cmp(&(&b.0.metadata.namespace, &b.0.metadata.name, b.1))
        });
    }
    devs
}

/// The device a partition is of: named by `parentUUID` (NVIDIA) or `parentIndex`.
fn parent_of(devs: &[Dev<'_>], d: &Device, driver: &str) -> Option<String> {
    let by_uuid = d.text(driver, "parentUUID").and_then(|u| {
        devs.iter().find(|p| p.d.text(driver, "uuid").as_deref() == Some(u.as_str())).map(|p| p.d.name.clone())
    });
    by_uuid.or_else(|| {
        let i = d.text(driver, "parentIndex")?;
        devs.iter()
            .find(|p| {
                p.d.name != d.name
                    && p.d.text(driver, "index").as_deref() == Some(i.as_str())
                    && p.d.text(driver, "parentIndex").is_none()
            })
            .map(|p| p.d.name.clone())
    })
}

/// The pods of every claim on these devices, with how many devices (or shares) each holds.
fn holders(devs: &[Dev<'_>]) -> Vec<Holder> {
    let mut holders: Vec<Holder> = Vec::new();
    for dev in devs {
        for (c, _, _) in &dev.uses {
            let ns = c.metadata.namespace.clone().unwrap_or_default();
            for p in c.pods() {
                match holders.iter_mut().find(|h| h.namespace == ns && h.name == p) {
                    Some(h) => h.count += 1,
                    None => holders.push(Holder {
                        namespace: ns.clone(),
                        name: p.to_string(),
                        count: 1,
                        ..Holder::default()
                    }),
                }
            }
        }
    }
    holders.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    holders
}

/// A slot held by claim `c`: its first pod (by index into `holders`), and a label that says
/// how many pods share it, or that no pod uses it.
fn used_slot(holders: &[Holder], c: &ResourceClaim, label: Option<String>) -> Slot {
    let ns = c.metadata.namespace.as_deref().unwrap_or("");
    let holder = c
        .pods()
        .next()
        .and_then(|p| holders.iter().position(|h| h.namespace == ns && h.name == p))
        .and_then(|i| u32::try_from(i).ok());
    // A claim several pods share: the slot names the first and says how many.
    let pods = c.pods().count();
    let label: Option<Said> = match (pods > 1, label) {
        (true, Some(l)) => Some(gpudash_model::say!("{l} · {pods} pods", "{l} · Pod {pods} 個")),
        (true, None) => Some(gpudash_model::say!("{pods} pods share it", "Pod {pods} 個で共有")),
        (false, l) => l.map(Said::same),
    };
    let claim = format!("{ns}/{}", c.metadata.name.as_deref().unwrap_or(""));
    let label = match (holder, label) {
        (Some(_), l) => l,
        (None, Some(l)) => {
            let (le, lj) = (&l.en, &l.ja);
            Some(gpudash_model::say!("{le} · claim {claim} · no pod", "{lj} · claim {claim} · Pod なし"))
        }
        (None, None) => Some(gpudash_model::say!("claim {claim} · no pod", "claim {claim} · Pod なし")),
    };
    Slot { state: SlotState::Held, holder, label }
}

/// The grid: a row per whole device (its partitions, its shares, or itself) and its title.
fn grid(devs: &[Dev<'_>], parents: &[Option<String>], driver: &str, holders: &[Holder]) -> (Vec<Vec<Slot>>, Vec<Said>) {
    let mut slots = Vec::new();
    let mut rows = Vec::new();
    for (i, dev) in devs.iter().enumerate() {
        if parents[i].is_some() {
            continue;
        }
        let children: Vec<usize> =
            (0..devs.len()).filter(|j| parents[*j].as_deref() == Some(dev.d.name.as_str())).collect();
        let shared = dev.d.allow_multiple_allocations == Some(true);
        let mut row = Vec::new();
        if !dev.uses.is_empty() && shared {
            let total = dev.d.memory_bytes();
            let mut consumed = 0u64;
            for (c, _, mem) in &dev.uses {
                consumed = consumed.saturating_add(mem.unwrap_or(0));
                row.push(used_slot(holders, c, mem.map(bytes_text)));
            }
            if let Some(left) = total.map(|t| t.saturating_sub(consumed)).filter(|l| *l > 0) {
                let left = bytes_text(left);
                row.push(Slot {
                    state: SlotState::Free,
                    holder: None,
                    label: Some(gpudash_model::say!("{left} free", "空き {left}")),
                });
            }
        } else if let Some((c, _, _)) = dev.uses.first() {
            row.push(used_slot(holders, c, None));
        } else if !children.is_empty() {
            for j in children {
                let child = &devs[j];
                let profile = child.d.text(driver, "profile").unwrap_or_else(|| child.d.name.clone());
                row.push(match child.uses.first() {
                    Some((c, _, _)) => used_slot(holders, c, Some(profile)),
                    None => Slot { state: SlotState::Free, holder: None, label: Some(Said::same(profile)) },
                });
            }
        } else {
            let label = shared.then(|| gpudash_model::say!("shareable", "共有可"));
            row.push(Slot { state: SlotState::Free, holder: None, label });
        }
        // `GPU 0`, naming the device too when its name does not say the same.
        let title = match dev.d.text(driver, "index") {
            Some(ix) if dev.d.name == format!("gpu-{ix}") => format!("GPU {ix}"),
            Some(ix) => format!("GPU {ix} · {}", dev.d.name),
            None => dev.d.name.clone(),
        };
        rows.push(Said::same(title));
        slots.push(row);
    }
    (slots, rows)
}

/// Each device as the node page's table shows it: its attributes, claims and pods.
fn device_views(devs: &[Dev<'_>], parents: &[Option<String>], driver: &str) -> Vec<DeviceView> {
    devs.iter()
        .zip(parents)
        .map(|(dev, parent)| {
            let mut pods: Vec<PodRef> = Vec::new();
            for (c, _, _) in &dev.uses {
                let ns = c.metadata.namespace.clone().unwrap_or_default();
                for p in c.pods() {
                    let r = PodRef { namespace: ns.clone(), name: p.to_string(), replicas: Vec::new() };
                    if !pods.contains(&r) {
                        pods.push(r);
                    }
                }
            }
            DeviceView {
                name: dev.d.name.clone(),
                type_: dev.d.text(driver, "type"),
                product: dev.d.text(driver, "productName"),
                uuid: dev.d.text(driver, "uuid"),
                memory_bytes: dev.d.memory_bytes(),
                parent: parent.clone(),
                shared: dev.d.allow_multiple_allocations == Some(true),
                claims: dev
                    .uses
                    .iter()
                    .map(|(c, share, _)| DeviceClaimRef {
                        namespace: c.metadata.namespace.clone().unwrap_or_default(),
                        name: c.metadata.name.clone().unwrap_or_default(),
                        share_id: share.map(str::to_string),
                    })
                    .collect(),
                holders: pods,
                busy_percent: None,
                memory_used_bytes: None,
            }
        })
        .collect()
}
