//! Node diagnoses: a missing or failing device plugin, GPUs out of service, GPUs used outside
//! the scheduler, boards gone dark, unified-memory overcommit, time-slice contention.

use std::collections::BTreeMap;

use app::model::{Code, Diagnosis, Kind, NodeView, PendingPod, Severity, Sharing};
use k8s_openapi::api::core::v1::Node;

use app::i18n::Said;
use app::say;

use super::{diag, join, list, wants_nvidia_gpu, Ctx};
use crate::derive::node;
use crate::pod::Pod;
use crate::quantity::Bytes;

/// Why a GPU node offers no (or fewer) GPUs to the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trouble {
    /// The device plugin is missing or failing: nothing is advertised.
    PluginMissing,
    /// The plugin runs and took unhealthy GPUs out of service.
    Unhealthy,
}

/// A node in trouble, for the pending pods' advice.
pub(super) struct Troubled<'a> {
    pub node: &'a Node,
    pub name: &'a str,
    pub trouble: Trouble,
}

/// The state of a device-plugin pod in words, or `None` when it runs and is ready.
pub(super) fn plugin_state(p: &Pod) -> Option<Said> {
    let (ns, name) = crate::derive::pods::key(p);
    let st = p.status.as_ref();
    let statuses = st.and_then(|s| s.container_statuses.as_deref()).unwrap_or(&[]);
    let phase = st.and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
    let bad = statuses.iter().find(|c| !c.ready);
    if phase == "Running" && bad.is_none() {
        return None;
    }
    let Some(c) = bad.or(statuses.first()) else {
        return Some(say!(
            "its device-plugin pod {ns}/{name} is {phase}",
            "device-plugin の Pod {ns}/{name} が {phase} です"
        ));
    };
    let now = c.state.as_ref();
    let state =
        now.and_then(|s| s.waiting.as_ref().or(s.terminated.as_ref())).and_then(|w| w.reason.clone()).unwrap_or_else(
            || if now.is_some_and(|s| s.running.is_some()) { "running, not ready".into() } else { phase.into() },
        );
    let mut s =
        say!("its device-plugin pod {ns}/{name} is in {state}", "device-plugin の Pod {ns}/{name} が {state} です");
    let last = c.last_state.as_ref().and_then(|l| l.terminated.as_ref());
    if c.restart_count > 0 || last.is_some() {
        let n = c.restart_count;
        let mut more = say!(" (restarted {n} times", "（再起動 {n} 回");
        if let Some(t) = last {
            if let Some(code) = t.exit_code {
                more.push(&say!("; last exit code {code}", "、最後の終了コード {code}"));
            }
            if let Some(r) = &t.reason {
                more.push(&Said::same(format!(", {r}")));
            }
        }
        more.push(&say!(")", "）"));
        s.push(&more);
    }
    Some(s)
}

/// `device-plugin-missing` and `gpu-unhealthy`: what is wrong with a node that looks like a
/// GPU node but offers fewer GPUs than it has. Returns the nodes in trouble.
pub(super) fn device_plugin_and_health<'a>(
    cx: &Ctx<'a>,
    pending: &[PendingPod],
    out: &mut Vec<Diagnosis>,
) -> Vec<Troubled<'a>> {
    let mut troubled = Vec::new();
    for &(n, view) in &cx.pairs {
        let name = view.name.as_str();
        let plugin = cx.plugins.get(name).copied();
        let plugin_bad = plugin.and_then(plugin_state);
        let nvidia: Vec<_> = view.gpu_resources.iter().filter(|g| node::is_nvidia_gpu(&g.resource)).collect();
        let has_capacity = nvidia.iter().any(|g| g.capacity > 0);
        let all_out =
            nvidia.iter().find(|g| g.resource == "nvidia.com/gpu").filter(|g| g.capacity > 0 && g.allocatable == 0);
        // GPU pods waiting that could go here make the node's trouble critical.
        let waiting_here = |resource: Option<&str>| {
            pending.iter().zip(cx.waiting).any(|(p, pod)| {
                wants_nvidia_gpu(p)
                    && resource.is_none_or(|r| p.gpu_request.as_ref().is_some_and(|g| g.resource == r))
                    && Ctx::could_target(pod, n)
            })
        };
        // A node whose GPUs a DRA driver publishes needs no device plugin.
        let dra_gpus = view.gpu_resources.iter().any(|g| g.sharing == Sharing::Dra && g.capacity > 0);
        let plugin_missing = if all_out.is_some() && plugin.is_some() && plugin_bad.is_none() {
            None
        } else if all_out.is_some() {
            Some(say!(
                "advertises nvidia.com/gpu capacity but 0 allocatable",
                "は nvidia.com/gpu の capacity を公開していますが allocatable が 0 です"
            ))
        } else if !has_capacity && !dra_gpus && node::looks_like_gpu_node(n) && cx.dra_mode() {
            super::dra::driver_missing(cx, n, name, pending, out);
            continue;
        } else if !has_capacity && !dra_gpus && node::looks_like_gpu_node(n) {
            Some(say!(
                "has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu",
                "には GPU の兆候（ラベル、Jetson ボード）がありますが nvidia.com/gpu を公開していません"
            ))
        } else {
            None
        };
        if let Some(what) = plugin_missing {
            let why = match (plugin, plugin_bad) {
                (Some(p), Some(state)) => {
                    let (ns, pn) = crate::derive::pods::key(p);
                    say!("{state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA container runtime on the node or a plugin config it rejects are the usual causes", "{state} — ログを確認してください（kubectl -n {ns} logs {pn} --previous）。Node に NVIDIA コンテナーランタイムがない、またはプラグインが設定を受け付けない、がよくある原因です"; state)
                }
                (Some(p), None) => {
                    let (ns, pn) = crate::derive::pods::key(p);
                    say!("its device-plugin pod {ns}/{pn} runs but registered no GPU — read its log (kubectl -n {ns} logs {pn}): it may not see the GPU (NVIDIA runtime or driver missing on the node)", "device-plugin の Pod {ns}/{pn} は動いていますが GPU を登録していません — ログを確認してください（kubectl -n {ns} logs {pn}）。GPU が見えていない可能性があります（Node に NVIDIA ランタイムかドライバーがない）")
                }
                (None, _) if !cx.plugin_namespaces.is_empty() => {
                    let ns = cx.plugin_namespaces.iter().copied().collect::<Vec<_>>().join(", ");
                    say!("no NVIDIA device-plugin pod runs on this node, though its DaemonSet runs pods on other nodes (namespace {ns}): its nodeSelector, affinity or tolerations do not match this node — compare kubectl -n {ns} get daemonset -o yaml with this node's labels and taints", "DaemonSet は他の Node で Pod を動かしていますが（namespace {ns}）、この Node では NVIDIA device-plugin の Pod が動いていません。nodeSelector、affinity、tolerations がこの Node に合っていません — kubectl -n {ns} get daemonset -o yaml とこの Node のラベル・taint を比べてください")
                }
                (None, _) => say!("no NVIDIA device plugin runs anywhere in the cluster — install it (the nvidia-device-plugin Helm chart, with time-slicing on Jetson) so that the scheduler counts GPU pods", "クラスターのどこにも NVIDIA device plugin が動いていません — スケジューラーが GPU の Pod を数えられるよう、インストールしてください（nvidia-device-plugin の Helm chart、Jetson ではタイムスライス付き）"),
            };
            let outside = if view.gpu_users_outside.iter().any(|u| u.sure) {
                let n = view.gpu_users_outside.iter().filter(|u| u.sure).count();
                say!(" Meanwhile {n} pod(s) use its GPU through the NVIDIA runtime without being counted (see gpu-used-outside-scheduler).", "その間も {n} 個の Pod が数えられないまま NVIDIA ランタイム経由で GPU を使っています（gpu-used-outside-scheduler を参照）。")
            } else {
                Said::default()
            };
            let waiting = waiting_here(None);
            let severity = if waiting { Severity::Critical } else { Severity::Warning };
            let stakes = if waiting {
                say!(" GPU pods are waiting for it.", "GPU の Pod がこの Node を待っています。")
            } else {
                Said::default()
            };
            out.push(diag(
                Code::DevicePluginMissing,
                severity,
                Kind::Node,
                None,
                name,
                say!("{name} {what}: {why}.{stakes}{outside}", "{name} {what}：{why}。{stakes}{outside}"; what, why, stakes, outside),
            ));
            troubled.push(super::nodes::Troubled { node: n, name, trouble: Trouble::PluginMissing });
            continue;
        }
        for g in nvidia.iter().filter(|g| g.out_of_service > 0) {
            let reps = g.replicas_per_gpu.max(1);
            let (out_n, cap, res, gpus) = (g.out_of_service, g.capacity, &g.resource, g.out_of_service.div_ceil(reps));
            let units = if reps > 1 {
                say!(
                    "{out_n} of {cap} {res} replicas ({gpus} GPU(s) × {reps})",
                    "{res} のレプリカ {cap} 個中 {out_n} 個（GPU {gpus} 基 × {reps}）"
                )
            } else {
                say!("{out_n} of {cap} {res}", "{res} {cap} 個中 {out_n} 個")
            };
            let waiting = waiting_here(Some(&g.resource));
            let severity = if waiting { Severity::Critical } else { Severity::Warning };
            let stakes = if waiting {
                say!(" GPU pods are waiting for the lost capacity.", "失われた分を GPU の Pod が待っています。")
            } else {
                Said::default()
            };
            out.push(diag(Code::GpuUnhealthy, severity, Kind::Node, None, name,
                say!("{units} on {name} are out of service: the device plugin found the GPU unhealthy (Xid errors, fallen off the bus) and stopped offering it — check the node's kernel log (dmesg | grep -i xid), nvidia-smi on the node and the device plugin's log; the GPU returns when the plugin sees it healthy again (often after a GPU reset or a reboot).{stakes}", "{name} の {units} が使用不可です。device plugin が GPU の異常（Xid エラー、バスからの脱落）を検出し、提供をやめました — Node のカーネルログ（dmesg | grep -i xid）、Node 上の nvidia-smi、device plugin のログを確認してください。プラグインが正常と判断すれば GPU は戻ります（GPU リセットや再起動の後が多い）。{stakes}"; units, stakes)));
            troubled.push(super::nodes::Troubled { node: n, name, trouble: Trouble::Unhealthy });
        }
    }
    troubled
}

/// `gpu-used-outside-scheduler`: pods that use a node's GPU without requesting it.
pub(super) fn gpu_used_outside_scheduler(view: &NodeView, out: &mut Vec<Diagnosis>) {
    if view.gpu_users_outside.is_empty() {
        return;
    }
    let name = view.name.as_str();
    let (sure, possible): (Vec<_>, Vec<_>) = view.gpu_users_outside.iter().partition(|u| u.sure);
    let names =
        |v: &[&app::model::GpuUser]| v.iter().map(|u| format!("{}/{}", u.namespace, u.name)).collect::<Vec<_>>();
    let mut parts = Vec::new();
    if !sure.is_empty() {
        let (n, who) = (sure.len(), list(&names(&sure)));
        parts.push(say!(
            "{n} use it for sure ({who}: NVIDIA runtime class or NVIDIA_VISIBLE_DEVICES)",
            "{n} 個が確実に使っています（{who}：NVIDIA の RuntimeClass または NVIDIA_VISIBLE_DEVICES）";
            who
        ));
    }
    if !possible.is_empty() {
        let (n, who, rt) =
            (possible.len(), list(&names(&possible)), view.default_runtime.as_deref().unwrap_or("nvidia"));
        parts.push(say!(
            "{n} may use it ({who}: the node's default runtime is {rt}, so any container whose image asks for \
            the GPU gets it — the API cannot tell which)",
            "{n} 個が使っているかもしれません（{who}：Node の既定のランタイムが {rt} のため、イメージが GPU \
            を求めるコンテナーはどれも GPU を得ます — API からはどれか分かりません）";
            who
        ));
    }
    let severity = if sure.is_empty() { Severity::Info } else { Severity::Warning };
    let parts = join(&parts);
    out.push(diag(
        Code::GpuUsedOutsideScheduler,
        severity,
        Kind::Node,
        None,
        name,
        say!(
            "Pods on {name} use its GPU without requesting a GPU resource, so the scheduler does not count them: \
            {parts}. Nothing stops another model from landing here, and they share the GPU and its memory with no \
            isolation — have GPU pods request nvidia.com/gpu through the device plugin (time-slicing replicas on \
            Jetson) so that each is counted.",
            "{name} の Pod が GPU リソースを要求せずに GPU を使っているため、スケジューラーはそれらを数えていません：\
            {parts}。別のモデルがここに配置されるのを止めるものはなく、GPU とそのメモリを分離なしで共有します — \
            各 Pod が数えられるよう、GPU の Pod には device plugin 経由で nvidia.com/gpu \
            を要求させてください（Jetson ではタイムスライスのレプリカ）。";
            parts
        ),
    ));
}

/// `gpu-node-down`: a node that stopped reporting (or reports not ready) with GPU pods bound.
pub(super) fn gpu_node_down(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    // Free units on the nodes that can take a pod now (a down node is not one of them), taken
    // once and only when some board is down.
    let mut free: Option<std::collections::HashMap<&str, u64>> = None;
    for view in cx.nodes {
        let Some(down) = &view.down else { continue };
        let name = view.name.as_str();
        let holders: Vec<_> = view.gpu_resources.iter().flat_map(|g| g.holders.iter().map(move |h| (g, h))).collect();
        let since = down.since.as_deref().unwrap_or("?");
        let state = match (down.status.as_str(), &down.reason) {
            ("Unknown", _) => say!("has not reported since {since}", "は {since} から報告がありません"),
            (_, Some(r)) => say!("is not ready ({r}) since {since}", "は {since} から Ready ではありません（{r}）"),
            _ => say!("is not ready since {since}", "は {since} から Ready ではありません"),
        };
        if holders.is_empty() {
            let gpus = view.gpu_resources.iter().map(|g| g.capacity).sum::<u64>();
            if gpus > 0 {
                out.push(diag(Code::GpuNodeDown, Severity::Warning, Kind::Node, None, name,
                    say!("{name} {state}: its {gpus} GPU unit(s) are out of reach until it returns (check power, network and the K3s agent on the board).", "{name} {state}。戻るまで GPU ユニット {gpus} 個は使えません（ボードの電源、ネットワーク、K3s agent を確認してください）。"; state)));
            }
            continue;
        }
        let mut names: Vec<String> = holders.iter().map(|(_, h)| format!("{}/{}", h.namespace, h.name)).collect();
        names.dedup();
        let terminating = holders.iter().filter(|(_, h)| h.terminating).count();
        let evict = match (&down.evict_at, terminating) {
            (_, t) if t == holders.len() => say!(" They are already Terminating: Kubernetes evicted them, and they stay listed until the node returns or is deleted.", "すでに Terminating です。Kubernetes が退避させ、Node が戻るか削除されるまで一覧に残ります。"),
            (Some(at), 0) => say!(" Kubernetes evicts them at {at} (taint-based eviction), then their controllers recreate them elsewhere.", "Kubernetes は {at} にこれらを退避させ（taint による退避）、コントローラーが別の場所に作り直します。"),
            (Some(at), t) => say!(" {t} already Terminating; the rest are evicted at {at} (taint-based eviction).", "{t} 個はすでに Terminating、残りは {at} に退避されます（taint による退避）。"),
            (None, 0) => say!(" They tolerate the node's taint without a time limit, so Kubernetes will not move them.", "Node の taint を期限なしで許容しているため、Kubernetes はこれらを移動しません。"),
            (None, t) => say!(" {t} already Terminating.", "{t} 個はすでに Terminating です。"),
        };
        // What the rest of the cluster could give them.
        let mut need: BTreeMap<&str, u64> = BTreeMap::new();
        for (g, h) in &holders {
            *need.entry(g.resource.as_str()).or_default() += h.count;
        }
        let room: Vec<Said> = need
            .iter()
            .map(|(r, n)| {
                let free = free
                    .get_or_insert_with(|| crate::derive::quota::cluster_free(cx.nodes))
                    .get(r)
                    .copied()
                    .unwrap_or(0);
                if free >= *n {
                    say!("the rest of the cluster has {free} free {r} for the {n} they hold", "使っている {n} 個に対し、クラスターの残りに空きの {r} が {free} 個あります")
                } else if free > 0 {
                    say!("the rest of the cluster has only {free} free {r} for the {n} they hold, so some will wait Pending", "使っている {n} 個に対し、クラスターの残りの空きの {r} は {free} 個だけなので、一部は Pending で待ちます")
                } else {
                    say!("no other node has a free {r}, so they will wait Pending until {name} returns", "空きの {r} がある Node はほかにないため、{name} が戻るまで Pending で待ちます")
                }
            })
            .collect();
        let (n, who, room) = (names.len(), list(&names), join(&room));
        let gpus = if need.len() == 1 { "GPU" } else { "GPUs" };
        out.push(diag(Code::GpuNodeDown, Severity::Critical, Kind::Node, None, name,
            say!("{name} {state}: {n} pod(s) holding its GPU are not serving ({who}).{evict} For the {gpus}: {room}. Check the board's power, network and K3s agent.", "{name} {state}。GPU を持つ {n} 個の Pod が動いていません（{who}）。{evict}GPU について：{room}。ボードの電源、ネットワーク、K3s agent を確認してください。"; state, who, evict, room)));
    }
}

/// `unified-memory-overcommit`: pod limits beyond a board's shared memory.
pub(super) fn unified_memory_overcommit(view: &NodeView, out: &mut Vec<Diagnosis>) {
    let name = view.name.as_str();
    if view.memory.overcommit_bytes > 0 {
        out.push(diag(Code::UnifiedMemoryOvercommit, Severity::Warning, Kind::Node, None, name, {
            let (lim, board) = (Bytes(view.memory.limits_bytes), Bytes(view.memory.board_bytes));
            let mut said = say!(
                "Pod memory limits on {name} add up to {lim}, more than the {board} the board shares between \
                    CPU and GPU: lower the limits or move a model to another board.",
                "{name} の Pod のメモリ limits の合計は {lim} で、ボードが CPU と GPU で共有する {board} \
                    を超えています。limits を下げるか、モデルを別のボードに移してください。"
            );
            // Where the agent reads GPU memory per process, what the models really hold now.
            if let Some(s) = &view.memory.split {
                let (gpu, free) = (Bytes(s.gpu_pods_bytes), Bytes(s.free_bytes));
                said.push(&say!(
                    " Its models hold {gpu} of GPU memory now (not counted in any limit); {free} of the board is free.",
                    " モデルは今 GPU メモリを {gpu} 使っています（どの limit にも数えられません）。ボードの空きは {free} です。"
                ));
            }
            said
        }));
    }
}

/// `gpu-memory-beyond-limit`: on a unified-memory board whose agent reads GPU memory per
/// process, a pod whose GPU memory and cgroup memory together exceed its memory limit. The
/// GPU's allocations come out of the board's RAM but are not charged to the pod's cgroup, so
/// the limit does not hold the model: the board runs out, not the pod.
pub(super) fn gpu_memory_beyond_limit(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    for v in cx.nodes.iter().filter(|v| v.unified_memory && v.memory.split.is_some()) {
        let node = v.name.as_str();
        let free = v.memory.board_free_bytes.map(Bytes);
        let board = Bytes(v.memory.split.as_ref().map_or(v.memory.board_bytes, |s| s.total_bytes));
        for p in &v.pods {
            let (Some(gpu), Some(limit)) = (p.gpu_memory_bytes, p.limit_bytes) else { continue };
            let used = p.used_bytes.unwrap_or(0);
            if gpu == 0 || gpu.saturating_add(used) <= limit {
                continue;
            }
            let (pod, g, u, sum, l) = (&p.name, Bytes(gpu), Bytes(used), Bytes(gpu.saturating_add(used)), Bytes(limit));
            let ns = p.namespace.as_str();
            let room = match free {
                Some(f) => say!("{f} of the board's {board} is free", "ボードの {board} のうち空きは {f} です"),
                None => say!("the board has {board}", "ボードは {board} です"),
            };
            let mut d = diag(
                Code::GpuMemoryBeyondLimit,
                Severity::Warning,
                Kind::Pod,
                Some(ns),
                pod,
                say!(
                    "{ns}/{pod} on {node} holds {g} of GPU memory beside {u} in its cgroup: {sum}, more than its memory \
                        limit of {l}. GPU memory comes out of the board's RAM but is not counted against the limit, so \
                        the limit does not hold this model ({room}): raise the limit to cover the model's GPU memory, \
                        or size the board for it.",
                    "{node} の {ns}/{pod} は GPU メモリ {g} と cgroup の {u} を使い、合計 {sum} でメモリ limit の {l} \
                        を超えています。GPU メモリはボードの RAM から取られますが limit には数えられないため、limit \
                        ではこのモデルを抑えられません（{room}）。limit を GPU メモリ分まで上げるか、それに見合うボードに\
                        してください。";
                    room
                ),
            );
            d.node = Some(node.to_string());
            out.push(d);
        }
    }
}

/// `gpu-time-slice-contention`: more pods than physical GPUs on a time-sliced resource of a
/// node that is up (on a node that is down nothing runs, so nothing contends).
pub(super) fn gpu_time_slice_contention(view: &NodeView, out: &mut Vec<Diagnosis>) {
    if view.down.is_none() {
        contention(view, out);
    }
}

fn contention(view: &NodeView, out: &mut Vec<Diagnosis>) {
    let name = view.name.as_str();
    for g in &view.gpu_resources {
        // Where a fresh agent measured the GPUs, contention is what it measured.
        if super::agent::measured(view, g, out) {
            continue;
        }
        if matches!(g.sharing, Sharing::TimeSlicing | Sharing::Mps) {
            let physical = g.physical_gpus.unwrap_or(1).max(1);
            let pods_holding = g.holders.iter().filter(|h| !h.terminating).count() as u64;
            if pods_holding > physical {
                out.push(diag(Code::GpuTimeSliceContention, Severity::Info, Kind::Node, None, name,
                    {
                        let r = &g.resource;
                        say!("{pods_holding} pods share {physical} physical GPU(s) of {r} on {name} by time-slicing: no proportional compute, no memory or fault isolation — one model's memory or crash affects the others.", "{name} の {r} の物理 GPU {physical} 基を {pods_holding} 個の Pod がタイムスライスで共有しています。計算の比例配分も、メモリや障害の分離もありません — 1つのモデルのメモリ使用やクラッシュがほかに影響します。")
                    }));
            }
        }
    }
}
