//! What the node diagnoses say (device-plugin-missing, gpu-unhealthy, gpu-used-outside-scheduler,
//! gpu-node-down, unified-memory-overcommit, time-slice contention), in English and Japanese:
//! one function per sentence, its parameters named. `nodes.rs` decides which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::{Said, Sentence};

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
