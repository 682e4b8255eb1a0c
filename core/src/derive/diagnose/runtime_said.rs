//! What runtimeclass-missing and the runtime diagnoses say, in English and Japanese: one function
//! per sentence, its parameters named. `runtime.rs` decides which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const CLUSTER_HAS_NO_RUNTIMECLASS: Sentence = Sentence {
    key: "runtime.cluster_has_no_runtimeclass",
    en: "this cluster has no RuntimeClass",
    ja: "このクラスターには RuntimeClass がありません",
};

/// this cluster has no RuntimeClass
pub(super) fn cluster_has_no_runtimeclass() -> Said {
    CLUSTER_HAS_NO_RUNTIMECLASS.say(&[])
}

const CLUSTER_HAS: Sentence = Sentence {
    key: "runtime.cluster_has",
    en: "this cluster has {class_list}",
    ja: "このクラスターにあるのは {class_list}",
};

/// this cluster has {class_list}
pub(super) fn cluster_has(class_list: &impl Display) -> Said {
    CLUSTER_HAS.say(&[("class_list", &Said::text(class_list))])
}

const PODS_CANNOT_CREATED_RUNTIMECLASS_DOES: Sentence = Sentence {
    key: "runtime.pods_cannot_created_runtimeclass_does",
    en: "Pods cannot be created: RuntimeClass \"{class}\" does not exist ({have}) — fix runtimeClassName in the pod template or create the \
        RuntimeClass.",
    ja: "Pod を作成できません。RuntimeClass \"{class}\" が存在しません（{have}）— Pod テンプレートの runtimeClassName を直すか、RuntimeClass を作成してください。",
};

/// Pods cannot be created: RuntimeClass "{class}" does not exist ({have}) — fix runtimeC…
pub(super) fn pods_cannot_created_runtimeclass_does(class: &impl Display, have: &Said) -> Said {
    PODS_CANNOT_CREATED_RUNTIMECLASS_DOES.say(&[("class", &Said::text(class)), ("have", have)])
}

const NODE_CONTAINERD_HAS_NO_RUNTIME: Sentence = Sentence {
    key: "runtime.node_containerd_has_no_runtime",
    en: "The node's containerd has no runtime handler \"{handler}\": install the NVIDIA container toolkit \
                on that node and restart K3s so it registers the nvidia runtime.",
    ja: "Node の containerd にランタイムハンドラー \"{handler}\" がありません。その \
                Node に NVIDIA Container Toolkit を入れ、K3s を再起動して nvidia \
                ランタイムを登録させてください。",
};

/// The node's containerd has no runtime handler "{handler}": install the NVIDIA containe…
pub(super) fn node_containerd_has_no_runtime(handler: &impl Display) -> Said {
    NODE_CONTAINERD_HAS_NO_RUNTIME.say(&[("handler", &Said::text(handler))])
}

const HOLDS_NVIDIA_GPU_BUT_HAS: Sentence = Sentence {
    key: "runtime.holds_nvidia_gpu_but_has",
    en: "Holds an NVIDIA GPU but has no runtimeClassName: on K3s, whose default runtime is runc, it may \
                run on the CPU without any error — set runtimeClassName: nvidia (or start the K3s agent with \
                --default-runtime nvidia).",
    ja: "NVIDIA GPU を持っていますが runtimeClassName がありません。\
                既定のランタイムが runc の K3s では、エラーなしで CPU \
                で動くことがあります — runtimeClassName: nvidia \
                を設定してください（または K3s agent を --default-runtime nvidia で起動）。",
};

/// Holds an NVIDIA GPU but has no runtimeClassName: on K3s, whose default runtime is run…
pub(super) fn holds_nvidia_gpu_but_has() -> Said {
    HOLDS_NVIDIA_GPU_BUT_HAS.say(&[])
}

const KUBELET_REFUSED_POD_REQUESTS_MORE: Sentence = Sentence {
    key: "runtime.kubelet_refused_pod_requests_more",
    en: "The kubelet refused this pod: it requests more than 1 replica of a time-sliced GPU — request 1.",
    ja: "kubelet がこの Pod を拒否しました。タイムスライスの GPU \
        のレプリカを2つ以上要求しています — 1 を要求してください。",
};

/// The kubelet refused this pod: it requests more than 1 replica of a time-sliced GPU —…
pub(super) fn kubelet_refused_pod_requests_more() -> Said {
    KUBELET_REFUSED_POD_REQUESTS_MORE.say(&[])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    CLUSTER_HAS_NO_RUNTIMECLASS,
    CLUSTER_HAS,
    PODS_CANNOT_CREATED_RUNTIMECLASS_DOES,
    NODE_CONTAINERD_HAS_NO_RUNTIME,
    HOLDS_NVIDIA_GPU_BUT_HAS,
    KUBELET_REFUSED_POD_REQUESTS_MORE,
];
