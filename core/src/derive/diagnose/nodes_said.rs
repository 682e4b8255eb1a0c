//! What the node diagnoses say (device-plugin-missing, gpu-unhealthy, gpu-used-outside-scheduler,
//! gpu-node-down, unified-memory-overcommit, time-slice contention), in English and Japanese:
//! one function per sentence, its parameters named. `nodes.rs` decides which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::Said;
use app::say;

/// its device-plugin pod {ns}/{name} is {phase}
pub(super) fn plugin_pod_phase(ns: &impl Display, name: &impl Display, phase: &impl Display) -> Said {
    say!("its device-plugin pod {ns}/{name} is {phase}", "device-plugin の Pod {ns}/{name} が {phase} です")
}

/// its device-plugin pod {ns}/{name} is in {state}
pub(super) fn plugin_pod_state(ns: &impl Display, name: &impl Display, state: &impl Display) -> Said {
    say!("its device-plugin pod {ns}/{name} is in {state}", "device-plugin の Pod {ns}/{name} が {state} です")
}

///  (restarted {n} times
pub(super) fn restarted_times(n: &impl Display) -> Said {
    say!(" (restarted {n} times", "（再起動 {n} 回")
}

/// ; last exit code {code}
pub(super) fn last_exit_code(code: &impl Display) -> Said {
    say!("; last exit code {code}", "、最後の終了コード {code}")
}

/// )
pub(super) fn close_paren() -> Said {
    say!(")", "）")
}

/// advertises nvidia.com/gpu capacity but 0 allocatable
pub(super) fn advertises_nvidia_com_gpu_capacity() -> Said {
    say!(
        "advertises nvidia.com/gpu capacity but 0 allocatable",
        "は nvidia.com/gpu の capacity を公開していますが allocatable が 0 です"
    )
}

/// has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu
pub(super) fn has_gpu_signals_labels_jetson() -> Said {
    say!(
        "has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu",
        "には GPU の兆候（ラベル、Jetson ボード）がありますが nvidia.com/gpu を公開していません"
    )
}

/// {state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA conta…
pub(super) fn read_log_kubectl_n_logs(state: &Said, ns: &impl Display, pn: &impl Display) -> Said {
    say!("{state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA container runtime on the node or a plugin config it rejects \
        are the usual causes", "{state} — ログを確認してください（kubectl -n {ns} logs {pn} --previous）。Node に NVIDIA コンテナーランタイムがない、またはプラグインが設定を受け付けない、がよくある原因です"; state)
}

/// its device-plugin pod {ns}/{pn} runs but registered no GPU — read its log (kubectl -n…
pub(super) fn device_plugin_pod_runs_but(ns: &impl Display, pn: &impl Display) -> Said {
    say!("its device-plugin pod {ns}/{pn} runs but registered no GPU — read its log (kubectl -n {ns} logs {pn}): it may not see the GPU (NVIDIA \
        runtime or driver missing on the node)", "device-plugin の Pod {ns}/{pn} は動いていますが GPU を登録していません — ログを確認してください（kubectl -n {ns} logs {pn}）。GPU \
        が見えていない可能性があります（Node に NVIDIA ランタイムかドライバーがない）")
}

/// no NVIDIA device-plugin pod runs on this node, though its DaemonSet runs pods on othe…
pub(super) fn no_nvidia_device_plugin_pod(ns: &impl Display) -> Said {
    say!("no NVIDIA device-plugin pod runs on this node, though its DaemonSet runs pods on other nodes (namespace {ns}): its nodeSelector, affinity or \
        tolerations do not match this node — compare kubectl -n {ns} get daemonset -o yaml with this node's labels and taints", "DaemonSet は他の Node で \
        Pod を動かしていますが（namespace {ns}）、この Node では NVIDIA device-plugin の Pod が動いていません。nodeSelector、affinity、tolerations がこの Node に合っていません — kubectl -n \
        {ns} get daemonset -o yaml とこの Node のラベル・taint を比べてください")
}

/// no NVIDIA device plugin runs anywhere in the cluster — install it (the nvidia-device-…
pub(super) fn no_nvidia_device_plugin_runs() -> Said {
    say!("no NVIDIA device plugin runs anywhere in the cluster — install it (the nvidia-device-plugin Helm chart, with time-slicing on Jetson) so that \
        the scheduler counts GPU pods", "クラスターのどこにも NVIDIA device plugin が動いていません — スケジューラーが GPU の Pod を数えられるよう、インストールしてください（nvidia-device-plugin の \
        Helm chart、Jetson ではタイムスライス付き）")
}

///  Meanwhile {n} pod(s) use its GPU through the NVIDIA runtime without being counted (s…
pub(super) fn meanwhile_pod_use_gpu_through(n: &impl Display) -> Said {
    say!(" Meanwhile {n} pod(s) use its GPU through the NVIDIA runtime without being counted (see gpu-used-outside-scheduler).", "その間も {n} 個の Pod \
        が数えられないまま NVIDIA ランタイム経由で GPU を使っています（gpu-used-outside-scheduler を参照）。")
}

///  GPU pods are waiting for it.
pub(super) fn gpu_pods_waiting() -> Said {
    say!(" GPU pods are waiting for it.", "GPU の Pod がこの Node を待っています。")
}

/// {name} {what}: {why}.{stakes}{outside}
pub(super) fn plugin_missing(name: &impl Display, what: &Said, why: &Said, stakes: &Said, outside: &Said) -> Said {
    say!("{name} {what}: {why}.{stakes}{outside}", "{name} {what}：{why}。{stakes}{outside}"; what, why, stakes, outside)
}

/// {out_n} of {cap} {res} replicas ({gpus} GPU(s) × {reps})
pub(super) fn replicas_out(
    out_n: &impl Display,
    cap: &impl Display,
    res: &impl Display,
    gpus: &impl Display,
    reps: &impl Display,
) -> Said {
    say!(
        "{out_n} of {cap} {res} replicas ({gpus} GPU(s) × {reps})",
        "{res} のレプリカ {cap} 個中 {out_n} 個（GPU {gpus} 基 × {reps}）"
    )
}

/// {out_n} of {cap} {res}
pub(super) fn units_out(out_n: &impl Display, cap: &impl Display, res: &impl Display) -> Said {
    say!("{out_n} of {cap} {res}", "{res} {cap} 個中 {out_n} 個")
}

///  GPU pods are waiting for the lost capacity.
pub(super) fn gpu_pods_waiting_lost_capacity() -> Said {
    say!(" GPU pods are waiting for the lost capacity.", "失われた分を GPU の Pod が待っています。")
}

/// {units} on {name} are out of service: the device plugin found the GPU unhealthy (Xid…
pub(super) fn out_service_device_plugin_found(units: &Said, name: &impl Display, stakes: &Said) -> Said {
    say!("{units} on {name} are out of service: the device plugin found the GPU unhealthy (Xid errors, fallen off the bus) and stopped offering it — \
        check the node's kernel log (dmesg | grep -i xid), nvidia-smi on the node and the device plugin's log; the GPU returns when the plugin sees it \
        healthy again (often after a GPU reset or a reboot).{stakes}", "{name} の {units} が使用不可です。device plugin が GPU の異常（Xid エラー、バスからの脱落）を検出し、提供をやめました \
        — Node のカーネルログ（dmesg | grep -i xid）、Node 上の nvidia-smi、device plugin のログを確認してください。プラグインが正常と判断すれば GPU は戻ります（GPU リセットや再起動の後が多い）。{stakes}"; units, stakes)
}

/// {n} use it for sure ({who}: NVIDIA runtime class or NVIDIA_VISIBLE_DEVICES)
pub(super) fn use_sure_nvidia_runtime_class(n: &impl Display, who: &Said) -> Said {
    say!("{n} use it for sure ({who}: NVIDIA runtime class or NVIDIA_VISIBLE_DEVICES)", "{n} 個が確実に使っています（{who}：NVIDIA の RuntimeClass または \
        NVIDIA_VISIBLE_DEVICES）"; who)
}

/// {n} may use it ({who}: the node's default runtime is {rt}, so any container whose ima…
pub(super) fn may_use_node_default_runtime(n: &impl Display, who: &Said, rt: &impl Display) -> Said {
    say!("{n} may use it ({who}: the node's default runtime is {rt}, so any container whose image asks for \
            the GPU gets it — the API cannot tell which)", "{n} 個が使っているかもしれません（{who}：Node の既定のランタイムが {rt} のため、イメージが GPU \
            を求めるコンテナーはどれも GPU を得ます — API からはどれか分かりません）"; who)
}

/// Pods on {name} use its GPU without requesting a GPU resource, so the scheduler does n…
pub(super) fn pods_use_gpu_without_requesting(name: &impl Display, parts: &Said) -> Said {
    say!("Pods on {name} use its GPU without requesting a GPU resource, so the scheduler does not count them: \
            {parts}. Nothing stops another model from landing here, and they share the GPU and its memory with no \
            isolation — have GPU pods request nvidia.com/gpu through the device plugin (time-slicing replicas on \
            Jetson) so that each is counted.", "{name} の Pod が GPU リソースを要求せずに GPU を使っているため、スケジューラーはそれらを数えていません：\
            {parts}。別のモデルがここに配置されるのを止めるものはなく、GPU とそのメモリを分離なしで共有します — \
            各 Pod が数えられるよう、GPU の Pod には device plugin 経由で nvidia.com/gpu \
            を要求させてください（Jetson ではタイムスライスのレプリカ）。"; parts)
}

/// has not reported since {since}
pub(super) fn has_not_reported_since(since: &impl Display) -> Said {
    say!("has not reported since {since}", "は {since} から報告がありません")
}

/// is not ready ({r}) since {since}
pub(super) fn not_ready_since_because(r: &impl Display, since: &impl Display) -> Said {
    say!("is not ready ({r}) since {since}", "は {since} から Ready ではありません（{r}）")
}

/// is not ready since {since}
pub(super) fn not_ready_since_no_reason(since: &impl Display) -> Said {
    say!("is not ready since {since}", "は {since} から Ready ではありません")
}

/// {name} {state}: its {gpus} GPU unit(s) are out of reach until it returns (check power…
pub(super) fn gpu_unit_out_reach_until(name: &impl Display, state: &Said, gpus: &impl Display) -> Said {
    say!("{name} {state}: its {gpus} GPU unit(s) are out of reach until it returns (check power, network and the K3s agent on the board).", "{name} \
        {state}。戻るまで GPU ユニット {gpus} 個は使えません（ボードの電源、ネットワーク、K3s agent を確認してください）。"; state)
}

///  They are already Terminating: Kubernetes evicted them, and they stay listed until th…
pub(super) fn they_already_terminating_kubernetes_evicted() -> Said {
    say!(" They are already Terminating: Kubernetes evicted them, and they stay listed until the node returns or is deleted.", "すでに Terminating \
        です。Kubernetes が退避させ、Node が戻るか削除されるまで一覧に残ります。")
}

///  Kubernetes evicts them at {at} (taint-based eviction), then their controllers recrea…
pub(super) fn kubernetes_evicts_them_at_taint(at: &impl Display) -> Said {
    say!(
        " Kubernetes evicts them at {at} (taint-based eviction), then their controllers recreate them elsewhere.",
        "Kubernetes は {at} にこれらを退避させ（taint による退避）、コントローラーが別の場所に作り直します。"
    )
}

///  {t} already Terminating; the rest are evicted at {at} (taint-based eviction).
pub(super) fn already_terminating_rest_evicted_at(t: &impl Display, at: &impl Display) -> Said {
    say!(
        " {t} already Terminating; the rest are evicted at {at} (taint-based eviction).",
        "{t} 個はすでに Terminating、残りは {at} に退避されます（taint による退避）。"
    )
}

///  They tolerate the node's taint without a time limit, so Kubernetes will not move them.
pub(super) fn they_tolerate_node_taint_without() -> Said {
    say!(
        " They tolerate the node's taint without a time limit, so Kubernetes will not move them.",
        "Node の taint を期限なしで許容しているため、Kubernetes はこれらを移動しません。"
    )
}

///  {t} already Terminating.
pub(super) fn already_terminating(t: &impl Display) -> Said {
    say!(" {t} already Terminating.", "{t} 個はすでに Terminating です。")
}

/// the rest of the cluster has {free} free {r} for the {n} they hold
pub(super) fn rest_cluster_has_free_they(free: &impl Display, r: &impl Display, n: &impl Display) -> Said {
    say!(
        "the rest of the cluster has {free} free {r} for the {n} they hold",
        "使っている {n} 個に対し、クラスターの残りに空きの {r} が {free} 個あります"
    )
}

/// the rest of the cluster has only {free} free {r} for the {n} they hold, so some will…
pub(super) fn rest_cluster_has_only_free(free: &impl Display, r: &impl Display, n: &impl Display) -> Said {
    say!(
        "the rest of the cluster has only {free} free {r} for the {n} they hold, so some will wait Pending",
        "使っている {n} 個に対し、クラスターの残りの空きの {r} は {free} 個だけなので、一部は Pending で待ちます"
    )
}

/// no other node has a free {r}, so they will wait Pending until {name} returns
pub(super) fn no_other_node_has_free(r: &impl Display, name: &impl Display) -> Said {
    say!(
        "no other node has a free {r}, so they will wait Pending until {name} returns",
        "空きの {r} がある Node はほかにないため、{name} が戻るまで Pending で待ちます"
    )
}

/// {name} {state}: {n} pod(s) holding its GPU are not serving ({who}).{evict} For the {g…
pub(super) fn pod_holding_gpu_not_serving(
    name: &impl Display,
    state: &Said,
    n: &impl Display,
    who: &Said,
    evict: &Said,
    gpus: &impl Display,
    room: &Said,
) -> Said {
    say!("{name} {state}: {n} pod(s) holding its GPU are not serving ({who}).{evict} For the {gpus}: {room}. Check the board's power, network and K3s \
        agent.", "{name} {state}。GPU を持つ {n} 個の Pod が動いていません（{who}）。{evict}GPU について：{room}。ボードの電源、ネットワーク、K3s agent を確認してください。"; state, who, evict, room)
}

/// Pod memory limits on {name} add up to {lim}, more than the {board} the board shares b…
pub(super) fn pod_memory_limits_add_up(name: &impl Display, lim: &impl Display, board: &impl Display) -> Said {
    say!(
        "Pod memory limits on {name} add up to {lim}, more than the {board} the board shares between \
                    CPU and GPU: lower the limits or move a model to another board.",
        "{name} の Pod のメモリ limits の合計は {lim} で、ボードが CPU と GPU で共有する {board} \
                    を超えています。limits を下げるか、モデルを別のボードに移してください。"
    )
}

///  Its models hold {gpu} of GPU memory now (not counted in any limit); {free} of the bo…
pub(super) fn models_hold_gpu_memory_now(gpu: &impl Display, free: &impl Display) -> Said {
    say!(
        " Its models hold {gpu} of GPU memory now (not counted in any limit); {free} of the board is free.",
        " モデルは今 GPU メモリを {gpu} 使っています（どの limit にも数えられません）。ボードの空きは {free} です。"
    )
}

/// {f} of the board's {board} is free
pub(super) fn board_free(f: &impl Display, board: &impl Display) -> Said {
    say!("{f} of the board's {board} is free", "ボードの {board} のうち空きは {f} です")
}

/// the board has {board}
pub(super) fn board_has(board: &impl Display) -> Said {
    say!("the board has {board}", "ボードは {board} です")
}

/// {ns}/{pod} on {node} holds {g} of GPU memory beside {u} in its cgroup: {sum}, more th…
pub(super) fn holds_gpu_memory_beside_cgroup(
    ns: &impl Display,
    pod: &impl Display,
    node: &impl Display,
    g: &impl Display,
    u: &impl Display,
    sum: &impl Display,
    l: &impl Display,
    room: &Said,
) -> Said {
    say!("{ns}/{pod} on {node} holds {g} of GPU memory beside {u} in its cgroup: {sum}, more than its memory \
                        limit of {l}. GPU memory comes out of the board's RAM but is not counted against the limit, so \
                        the limit does not hold this model ({room}): raise the limit to cover the model's GPU memory, \
                        or size the board for it.", "{node} の {ns}/{pod} は GPU メモリ {g} と cgroup の {u} を使い、合計 {sum} でメモリ limit の {l} \
                        を超えています。GPU メモリはボードの RAM から取られますが limit には数えられないため、limit \
                        ではこのモデルを抑えられません（{room}）。limit を GPU メモリ分まで上げるか、それに見合うボードに\
                        してください。"; room)
}

/// {pods_holding} pods share {physical} physical GPU(s) of {r} on {name} by time-slicing…
pub(super) fn pods_share_physical_gpu_time(
    pods_holding: &impl Display,
    physical: &impl Display,
    r: &impl Display,
    name: &impl Display,
) -> Said {
    say!("{pods_holding} pods share {physical} physical GPU(s) of {r} on {name} by time-slicing: no proportional compute, no memory or fault isolation \
        — one model's memory or crash affects the others.", "{name} の {r} の物理 GPU {physical} 基を {pods_holding} 個の Pod \
        がタイムスライスで共有しています。計算の比例配分も、メモリや障害の分離もありません — 1つのモデルのメモリ使用やクラッシュがほかに影響します。")
}
