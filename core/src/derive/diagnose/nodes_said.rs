//! What the node diagnoses say (device-plugin-missing, gpu-unhealthy, gpu-used-outside-scheduler,
//! gpu-node-down, unified-memory-overcommit, time-slice contention), in English and Japanese:
//! one function per sentence, its parameters named. `nodes.rs` decides which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const PLUGIN_POD_PHASE: Sentence = Sentence {
    key: "nodes.plugin_pod_phase",
    en: "its device-plugin pod {ns}/{name} is {phase}",
    ja: "device-plugin の Pod {ns}/{name} が {phase} です",
};

/// its device-plugin pod {ns}/{name} is {phase}
pub(super) fn plugin_pod_phase(ns: &impl Display, name: &impl Display, phase: &impl Display) -> Said {
    PLUGIN_POD_PHASE.say(&[("ns", &Said::text(ns)), ("name", &Said::text(name)), ("phase", &Said::text(phase))])
}

const PLUGIN_POD_STATE: Sentence = Sentence {
    key: "nodes.plugin_pod_state",
    en: "its device-plugin pod {ns}/{name} is in {state}",
    ja: "device-plugin の Pod {ns}/{name} が {state} です",
};

/// its device-plugin pod {ns}/{name} is in {state}
pub(super) fn plugin_pod_state(ns: &impl Display, name: &impl Display, state: &impl Display) -> Said {
    PLUGIN_POD_STATE.say(&[("ns", &Said::text(ns)), ("name", &Said::text(name)), ("state", &Said::text(state))])
}

const RESTARTED_TIMES: Sentence =
    Sentence { key: "nodes.restarted_times", en: " (restarted {n} times", ja: "（再起動 {n} 回" };

///  (restarted {n} times
pub(super) fn restarted_times(n: &impl Display) -> Said {
    RESTARTED_TIMES.say(&[("n", &Said::text(n))])
}

const LAST_EXIT_CODE: Sentence =
    Sentence { key: "nodes.last_exit_code", en: "; last exit code {code}", ja: "、最後の終了コード {code}" };

/// ; last exit code {code}
pub(super) fn last_exit_code(code: &impl Display) -> Said {
    LAST_EXIT_CODE.say(&[("code", &Said::text(code))])
}

const CLOSE_PAREN: Sentence = Sentence { key: "nodes.close_paren", en: ")", ja: "）" };

/// )
pub(super) fn close_paren() -> Said {
    CLOSE_PAREN.say(&[])
}

const ADVERTISES_NVIDIA_COM_GPU_CAPACITY: Sentence = Sentence {
    key: "nodes.advertises_nvidia_com_gpu_capacity",
    en: "advertises nvidia.com/gpu capacity but 0 allocatable",
    ja: "は nvidia.com/gpu の capacity を公開していますが allocatable が 0 です",
};

/// advertises nvidia.com/gpu capacity but 0 allocatable
pub(super) fn advertises_nvidia_com_gpu_capacity() -> Said {
    ADVERTISES_NVIDIA_COM_GPU_CAPACITY.say(&[])
}

const HAS_GPU_SIGNALS_LABELS_JETSON: Sentence = Sentence {
    key: "nodes.has_gpu_signals_labels_jetson",
    en: "has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu",
    ja: "には GPU の兆候（ラベル、Jetson ボード）がありますが nvidia.com/gpu を公開していません",
};

/// has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu
pub(super) fn has_gpu_signals_labels_jetson() -> Said {
    HAS_GPU_SIGNALS_LABELS_JETSON.say(&[])
}

const READ_LOG_KUBECTL_N_LOGS: Sentence = Sentence {
    key: "nodes.read_log_kubectl_n_logs",
    en: "{state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA container runtime on the node or a plugin config it rejects \
        are the usual causes",
    ja: "{state} — ログを確認してください（kubectl -n {ns} logs {pn} --previous）。Node に NVIDIA コンテナーランタイムがない、またはプラグインが設定を受け付けない、がよくある原因です",
};

/// {state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA conta…
pub(super) fn read_log_kubectl_n_logs(state: &Said, ns: &impl Display, pn: &impl Display) -> Said {
    READ_LOG_KUBECTL_N_LOGS.say(&[("state", state), ("ns", &Said::text(ns)), ("pn", &Said::text(pn))])
}

const DEVICE_PLUGIN_POD_RUNS_BUT: Sentence = Sentence {
    key: "nodes.device_plugin_pod_runs_but",
    en: "its device-plugin pod {ns}/{pn} runs but registered no GPU — read its log (kubectl -n {ns} logs {pn}): it may not see the GPU (NVIDIA \
        runtime or driver missing on the node)",
    ja: "device-plugin の Pod {ns}/{pn} は動いていますが GPU を登録していません — ログを確認してください（kubectl -n {ns} logs {pn}）。GPU \
        が見えていない可能性があります（Node に NVIDIA ランタイムかドライバーがない）",
};

/// its device-plugin pod {ns}/{pn} runs but registered no GPU — read its log (kubectl -n…
pub(super) fn device_plugin_pod_runs_but(ns: &impl Display, pn: &impl Display) -> Said {
    DEVICE_PLUGIN_POD_RUNS_BUT.say(&[("ns", &Said::text(ns)), ("pn", &Said::text(pn))])
}

const NO_NVIDIA_DEVICE_PLUGIN_POD: Sentence = Sentence {
    key: "nodes.no_nvidia_device_plugin_pod",
    en: "no NVIDIA device-plugin pod runs on this node, though its DaemonSet runs pods on other nodes (namespace {ns}): its nodeSelector, affinity or \
        tolerations do not match this node — compare kubectl -n {ns} get daemonset -o yaml with this node's labels and taints",
    ja: "DaemonSet は他の Node で \
        Pod を動かしていますが（namespace {ns}）、この Node では NVIDIA device-plugin の Pod が動いていません。nodeSelector、affinity、tolerations がこの Node に合っていません — kubectl -n \
        {ns} get daemonset -o yaml とこの Node のラベル・taint を比べてください",
};

/// no NVIDIA device-plugin pod runs on this node, though its DaemonSet runs pods on othe…
pub(super) fn no_nvidia_device_plugin_pod(ns: &impl Display) -> Said {
    NO_NVIDIA_DEVICE_PLUGIN_POD.say(&[("ns", &Said::text(ns))])
}

const NO_NVIDIA_DEVICE_PLUGIN_RUNS: Sentence = Sentence {
    key: "nodes.no_nvidia_device_plugin_runs",
    en: "no NVIDIA device plugin runs anywhere in the cluster — install it (the nvidia-device-plugin Helm chart, with time-slicing on Jetson) so that \
        the scheduler counts GPU pods",
    ja: "クラスターのどこにも NVIDIA device plugin が動いていません — スケジューラーが GPU の Pod を数えられるよう、インストールしてください（nvidia-device-plugin の \
        Helm chart、Jetson ではタイムスライス付き）",
};

/// no NVIDIA device plugin runs anywhere in the cluster — install it (the nvidia-device-…
pub(super) fn no_nvidia_device_plugin_runs() -> Said {
    NO_NVIDIA_DEVICE_PLUGIN_RUNS.say(&[])
}

const MEANWHILE_POD_USE_GPU_THROUGH: Sentence = Sentence {
    key: "nodes.meanwhile_pod_use_gpu_through",
    en: " Meanwhile {n} pod(s) use its GPU through the NVIDIA runtime without being counted (see gpu-used-outside-scheduler).",
    ja: "その間も {n} 個の Pod \
        が数えられないまま NVIDIA ランタイム経由で GPU を使っています（gpu-used-outside-scheduler を参照）。",
};

///  Meanwhile {n} pod(s) use its GPU through the NVIDIA runtime without being counted (s…
pub(super) fn meanwhile_pod_use_gpu_through(n: &impl Display) -> Said {
    MEANWHILE_POD_USE_GPU_THROUGH.say(&[("n", &Said::text(n))])
}

const GPU_PODS_WAITING: Sentence = Sentence {
    key: "nodes.gpu_pods_waiting",
    en: " GPU pods are waiting for it.",
    ja: "GPU の Pod がこの Node を待っています。",
};

///  GPU pods are waiting for it.
pub(super) fn gpu_pods_waiting() -> Said {
    GPU_PODS_WAITING.say(&[])
}

const PLUGIN_MISSING: Sentence = Sentence {
    key: "nodes.plugin_missing",
    en: "{name} {what}: {why}.{stakes}{outside}",
    ja: "{name} {what}：{why}。{stakes}{outside}",
};

/// {name} {what}: {why}.{stakes}{outside}
pub(super) fn plugin_missing(name: &impl Display, what: &Said, why: &Said, stakes: &Said, outside: &Said) -> Said {
    PLUGIN_MISSING.say(&[
        ("name", &Said::text(name)),
        ("what", what),
        ("why", why),
        ("stakes", stakes),
        ("outside", outside),
    ])
}

const REPLICAS_OUT: Sentence = Sentence {
    key: "nodes.replicas_out",
    en: "{out_n} of {cap} {res} replicas ({gpus} GPU(s) × {reps})",
    ja: "{res} のレプリカ {cap} 個中 {out_n} 個（GPU {gpus} 基 × {reps}）",
};

/// {out_n} of {cap} {res} replicas ({gpus} GPU(s) × {reps})
pub(super) fn replicas_out(
    out_n: &impl Display,
    cap: &impl Display,
    res: &impl Display,
    gpus: &impl Display,
    reps: &impl Display,
) -> Said {
    REPLICAS_OUT.say(&[
        ("out_n", &Said::text(out_n)),
        ("cap", &Said::text(cap)),
        ("res", &Said::text(res)),
        ("gpus", &Said::text(gpus)),
        ("reps", &Said::text(reps)),
    ])
}

const UNITS_OUT: Sentence =
    Sentence { key: "nodes.units_out", en: "{out_n} of {cap} {res}", ja: "{res} {cap} 個中 {out_n} 個" };

/// {out_n} of {cap} {res}
pub(super) fn units_out(out_n: &impl Display, cap: &impl Display, res: &impl Display) -> Said {
    UNITS_OUT.say(&[("out_n", &Said::text(out_n)), ("cap", &Said::text(cap)), ("res", &Said::text(res))])
}

const GPU_PODS_WAITING_LOST_CAPACITY: Sentence = Sentence {
    key: "nodes.gpu_pods_waiting_lost_capacity",
    en: " GPU pods are waiting for the lost capacity.",
    ja: "失われた分を GPU の Pod が待っています。",
};

///  GPU pods are waiting for the lost capacity.
pub(super) fn gpu_pods_waiting_lost_capacity() -> Said {
    GPU_PODS_WAITING_LOST_CAPACITY.say(&[])
}

const OUT_SERVICE_DEVICE_PLUGIN_FOUND: Sentence = Sentence {
    key: "nodes.out_service_device_plugin_found",
    en: "{units} on {name} are out of service: the device plugin found the GPU unhealthy (Xid errors, fallen off the bus) and stopped offering it — \
        check the node's kernel log (dmesg | grep -i xid), nvidia-smi on the node and the device plugin's log; the GPU returns when the plugin sees it \
        healthy again (often after a GPU reset or a reboot).{stakes}",
    ja: "{name} の {units} が使用不可です。device plugin が GPU の異常（Xid エラー、バスからの脱落）を検出し、提供をやめました \
        — Node のカーネルログ（dmesg | grep -i xid）、Node 上の nvidia-smi、device plugin のログを確認してください。プラグインが正常と判断すれば GPU は戻ります（GPU リセットや再起動の後が多い）。{stakes}",
};

/// {units} on {name} are out of service: the device plugin found the GPU unhealthy (Xid…
pub(super) fn out_service_device_plugin_found(units: &Said, name: &impl Display, stakes: &Said) -> Said {
    OUT_SERVICE_DEVICE_PLUGIN_FOUND.say(&[("units", units), ("name", &Said::text(name)), ("stakes", stakes)])
}

const USE_SURE_NVIDIA_RUNTIME_CLASS: Sentence = Sentence {
    key: "nodes.use_sure_nvidia_runtime_class",
    en: "{n} use it for sure ({who}: NVIDIA runtime class or NVIDIA_VISIBLE_DEVICES)",
    ja: "{n} 個が確実に使っています（{who}：NVIDIA の RuntimeClass または \
        NVIDIA_VISIBLE_DEVICES）",
};

/// {n} use it for sure ({who}: NVIDIA runtime class or NVIDIA_VISIBLE_DEVICES)
pub(super) fn use_sure_nvidia_runtime_class(n: &impl Display, who: &Said) -> Said {
    USE_SURE_NVIDIA_RUNTIME_CLASS.say(&[("n", &Said::text(n)), ("who", who)])
}

const MAY_USE_NODE_DEFAULT_RUNTIME: Sentence = Sentence {
    key: "nodes.may_use_node_default_runtime",
    en: "{n} may use it ({who}: the node's default runtime is {rt}, so any container whose image asks for \
            the GPU gets it — the API cannot tell which)",
    ja: "{n} 個が使っているかもしれません（{who}：Node の既定のランタイムが {rt} のため、イメージが GPU \
            を求めるコンテナーはどれも GPU を得ます — API からはどれか分かりません）",
};

/// {n} may use it ({who}: the node's default runtime is {rt}, so any container whose ima…
pub(super) fn may_use_node_default_runtime(n: &impl Display, who: &Said, rt: &impl Display) -> Said {
    MAY_USE_NODE_DEFAULT_RUNTIME.say(&[("n", &Said::text(n)), ("who", who), ("rt", &Said::text(rt))])
}

const PODS_USE_GPU_WITHOUT_REQUESTING: Sentence = Sentence {
    key: "nodes.pods_use_gpu_without_requesting",
    en: "Pods on {name} use its GPU without requesting a GPU resource, so the scheduler does not count them: \
            {parts}. Nothing stops another model from landing here, and they share the GPU and its memory with no \
            isolation — have GPU pods request nvidia.com/gpu through the device plugin (time-slicing replicas on \
            Jetson) so that each is counted.",
    ja: "{name} の Pod が GPU リソースを要求せずに GPU を使っているため、スケジューラーはそれらを数えていません：\
            {parts}。別のモデルがここに配置されるのを止めるものはなく、GPU とそのメモリを分離なしで共有します — \
            各 Pod が数えられるよう、GPU の Pod には device plugin 経由で nvidia.com/gpu \
            を要求させてください（Jetson ではタイムスライスのレプリカ）。",
};

/// Pods on {name} use its GPU without requesting a GPU resource, so the scheduler does n…
pub(super) fn pods_use_gpu_without_requesting(name: &impl Display, parts: &Said) -> Said {
    PODS_USE_GPU_WITHOUT_REQUESTING.say(&[("name", &Said::text(name)), ("parts", parts)])
}

const POD_HOLDING_GPU_NOT_SERVING: Sentence = Sentence {
    key: "nodes.pod_holding_gpu_not_serving",
    en: "{name} {state}: {n} pod(s) holding its GPU are not serving ({who}).{evict} For the {gpus}: {room}. Check the board's power, network and K3s \
        agent.",
    ja: "{name} {state}。GPU を持つ {n} 個の Pod が動いていません（{who}）。{evict}GPU について：{room}。ボードの電源、ネットワーク、K3s agent を確認してください。",
};

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
    POD_HOLDING_GPU_NOT_SERVING.say(&[
        ("name", &Said::text(name)),
        ("state", state),
        ("n", &Said::text(n)),
        ("who", who),
        ("evict", evict),
        ("gpus", &Said::text(gpus)),
        ("room", room),
    ])
}

const POD_MEMORY_LIMITS_ADD_UP: Sentence = Sentence {
    key: "nodes.pod_memory_limits_add_up",
    en: "Pod memory limits on {name} add up to {lim}, more than the {board} the board shares between \
                    CPU and GPU: lower the limits or move a model to another board.",
    ja: "{name} の Pod のメモリ limits の合計は {lim} で、ボードが CPU と GPU で共有する {board} \
                    を超えています。limits を下げるか、モデルを別のボードに移してください。",
};

/// Pod memory limits on {name} add up to {lim}, more than the {board} the board shares b…
pub(super) fn pod_memory_limits_add_up(name: &impl Display, lim: &impl Display, board: &impl Display) -> Said {
    POD_MEMORY_LIMITS_ADD_UP.say(&[
        ("name", &Said::text(name)),
        ("lim", &Said::text(lim)),
        ("board", &Said::text(board)),
    ])
}

const MODELS_HOLD_GPU_MEMORY_NOW: Sentence = Sentence {
    key: "nodes.models_hold_gpu_memory_now",
    en: " Its models hold {gpu} of GPU memory now (not counted in any limit); {free} of the board is free.",
    ja: " モデルは今 GPU メモリを {gpu} 使っています（どの limit にも数えられません）。ボードの空きは {free} です。",
};

///  Its models hold {gpu} of GPU memory now (not counted in any limit); {free} of the bo…
pub(super) fn models_hold_gpu_memory_now(gpu: &impl Display, free: &impl Display) -> Said {
    MODELS_HOLD_GPU_MEMORY_NOW.say(&[("gpu", &Said::text(gpu)), ("free", &Said::text(free))])
}

const BOARD_FREE: Sentence = Sentence {
    key: "nodes.board_free",
    en: "{f} of the board's {board} is free",
    ja: "ボードの {board} のうち空きは {f} です",
};

/// {f} of the board's {board} is free
pub(super) fn board_free(f: &impl Display, board: &impl Display) -> Said {
    BOARD_FREE.say(&[("f", &Said::text(f)), ("board", &Said::text(board))])
}

const BOARD_HAS: Sentence =
    Sentence { key: "nodes.board_has", en: "the board has {board}", ja: "ボードは {board} です" };

/// the board has {board}
pub(super) fn board_has(board: &impl Display) -> Said {
    BOARD_HAS.say(&[("board", &Said::text(board))])
}

const HOLDS_GPU_MEMORY_BESIDE_CGROUP: Sentence = Sentence {
    key: "nodes.holds_gpu_memory_beside_cgroup",
    en: "{ns}/{pod} on {node} holds {g} of GPU memory beside {u} in its cgroup: {sum}, more than its memory \
                        limit of {l}. GPU memory comes out of the board's RAM but is not counted against the limit, so \
                        the limit does not hold this model ({room}): raise the limit to cover the model's GPU memory, \
                        or size the board for it.",
    ja: "{node} の {ns}/{pod} は GPU メモリ {g} と cgroup の {u} を使い、合計 {sum} でメモリ limit の {l} \
                        を超えています。GPU メモリはボードの RAM から取られますが limit には数えられないため、limit \
                        ではこのモデルを抑えられません（{room}）。limit を GPU メモリ分まで上げるか、それに見合うボードに\
                        してください。",
};

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
    HOLDS_GPU_MEMORY_BESIDE_CGROUP.say(&[
        ("ns", &Said::text(ns)),
        ("pod", &Said::text(pod)),
        ("node", &Said::text(node)),
        ("g", &Said::text(g)),
        ("u", &Said::text(u)),
        ("sum", &Said::text(sum)),
        ("l", &Said::text(l)),
        ("room", room),
    ])
}

const PODS_SHARE_PHYSICAL_GPU_TIME: Sentence = Sentence {
    key: "nodes.pods_share_physical_gpu_time",
    en: "{pods_holding} pods share {physical} physical GPU(s) of {r} on {name} by time-slicing: no proportional compute, no memory or fault isolation \
        — one model's memory or crash affects the others.",
    ja: "{name} の {r} の物理 GPU {physical} 基を {pods_holding} 個の Pod \
        がタイムスライスで共有しています。計算の比例配分も、メモリや障害の分離もありません — 1つのモデルのメモリ使用やクラッシュがほかに影響します。",
};

/// {pods_holding} pods share {physical} physical GPU(s) of {r} on {name} by time-slicing…
pub(super) fn pods_share_physical_gpu_time(
    pods_holding: &impl Display,
    physical: &impl Display,
    r: &impl Display,
    name: &impl Display,
) -> Said {
    PODS_SHARE_PHYSICAL_GPU_TIME.say(&[
        ("pods_holding", &Said::text(pods_holding)),
        ("physical", &Said::text(physical)),
        ("r", &Said::text(r)),
        ("name", &Said::text(name)),
    ])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    PLUGIN_POD_PHASE,
    PLUGIN_POD_STATE,
    RESTARTED_TIMES,
    LAST_EXIT_CODE,
    CLOSE_PAREN,
    ADVERTISES_NVIDIA_COM_GPU_CAPACITY,
    HAS_GPU_SIGNALS_LABELS_JETSON,
    READ_LOG_KUBECTL_N_LOGS,
    DEVICE_PLUGIN_POD_RUNS_BUT,
    NO_NVIDIA_DEVICE_PLUGIN_POD,
    NO_NVIDIA_DEVICE_PLUGIN_RUNS,
    MEANWHILE_POD_USE_GPU_THROUGH,
    GPU_PODS_WAITING,
    PLUGIN_MISSING,
    REPLICAS_OUT,
    UNITS_OUT,
    GPU_PODS_WAITING_LOST_CAPACITY,
    OUT_SERVICE_DEVICE_PLUGIN_FOUND,
    USE_SURE_NVIDIA_RUNTIME_CLASS,
    MAY_USE_NODE_DEFAULT_RUNTIME,
    PODS_USE_GPU_WITHOUT_REQUESTING,
    POD_HOLDING_GPU_NOT_SERVING,
    POD_MEMORY_LIMITS_ADD_UP,
    MODELS_HOLD_GPU_MEMORY_NOW,
    BOARD_FREE,
    BOARD_HAS,
    HOLDS_GPU_MEMORY_BESIDE_CGROUP,
    PODS_SHARE_PHYSICAL_GPU_TIME,
];
