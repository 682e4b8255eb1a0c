//! What runtimeclass-missing and the runtime diagnoses say, in English and Japanese: one function
//! per sentence, its parameters named. `runtime.rs` decides which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::Said;
use app::say;

/// this cluster has no RuntimeClass
pub(super) fn cluster_has_no_runtimeclass() -> Said {
    say!("this cluster has no RuntimeClass", "このクラスターには RuntimeClass がありません")
}

/// this cluster has {class_list}
pub(super) fn cluster_has(class_list: &impl Display) -> Said {
    say!("this cluster has {class_list}", "このクラスターにあるのは {class_list}")
}

/// Pods cannot be created: RuntimeClass "{class}" does not exist ({have}) — fix runtimeC…
pub(super) fn pods_cannot_created_runtimeclass_does(class: &impl Display, have: &Said) -> Said {
    say!("Pods cannot be created: RuntimeClass \"{class}\" does not exist ({have}) — fix runtimeClassName in the pod template or create the \
        RuntimeClass.", "Pod を作成できません。RuntimeClass \"{class}\" が存在しません（{have}）— Pod テンプレートの runtimeClassName を直すか、RuntimeClass を作成してください。"; have)
}

/// The node's containerd has no runtime handler "{handler}": install the NVIDIA containe…
pub(super) fn node_containerd_has_no_runtime(handler: &impl Display) -> Said {
    say!(
        "The node's containerd has no runtime handler \"{handler}\": install the NVIDIA container toolkit \
                on that node and restart K3s so it registers the nvidia runtime.",
        "Node の containerd にランタイムハンドラー \"{handler}\" がありません。その \
                Node に NVIDIA Container Toolkit を入れ、K3s を再起動して nvidia \
                ランタイムを登録させてください。"
    )
}

/// Holds an NVIDIA GPU but has no runtimeClassName: on K3s, whose default runtime is run…
pub(super) fn holds_nvidia_gpu_but_has() -> Said {
    say!(
        "Holds an NVIDIA GPU but has no runtimeClassName: on K3s, whose default runtime is runc, it may \
                run on the CPU without any error — set runtimeClassName: nvidia (or start the K3s agent with \
                --default-runtime nvidia).",
        "NVIDIA GPU を持っていますが runtimeClassName がありません。\
                既定のランタイムが runc の K3s では、エラーなしで CPU \
                で動くことがあります — runtimeClassName: nvidia \
                を設定してください（または K3s agent を --default-runtime nvidia で起動）。"
    )
}

/// The kubelet refused this pod: it requests more than 1 replica of a time-sliced GPU —…
pub(super) fn kubelet_refused_pod_requests_more() -> Said {
    say!(
        "The kubelet refused this pod: it requests more than 1 replica of a time-sliced GPU — request 1.",
        "kubelet がこの Pod を拒否しました。タイムスライスの GPU \
        のレプリカを2つ以上要求しています — 1 を要求してください。"
    )
}
