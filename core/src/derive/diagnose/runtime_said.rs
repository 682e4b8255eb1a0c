//! What runtimeclass-missing and the runtime diagnoses say, in English and Japanese: one entry per
//! sentence, its placeholders its parameters (`: Said` where each language has its own words).
//! `runtime.rs` decides which applies.

gpudash_model::sentences! { "runtime";
    /// this cluster has no RuntimeClass
    cluster_has_no_runtimeclass() {
        en: "this cluster has no RuntimeClass",
        ja: "このクラスターには RuntimeClass がありません",
    }
    /// this cluster has {class_list}
    cluster_has(class_list) {
        en: "this cluster has {class_list}",
        ja: "このクラスターにあるのは {class_list}",
    }
    /// Pods cannot be created: RuntimeClass "{class}" does not exist ({have}) — fix runtimeC…
    pods_cannot_created_runtimeclass_does(class, have: Said) {
        en: "Pods cannot be created: RuntimeClass \"{class}\" does not exist ({have}) — fix runtimeClassName in the pod template or create the \
        RuntimeClass.",
        ja: "Pod を作成できません。RuntimeClass \"{class}\" が存在しません（{have}）— Pod テンプレートの runtimeClassName を直すか、RuntimeClass を作成してください。",
    }
    /// The node's containerd has no runtime handler "{handler}": install the NVIDIA containe…
    node_containerd_has_no_runtime(handler) {
        en: "The node's containerd has no runtime handler \"{handler}\": install the NVIDIA container toolkit \
                on that node and restart K3s so it registers the nvidia runtime.",
        ja: "Node の containerd にランタイムハンドラー \"{handler}\" がありません。その \
                Node に NVIDIA Container Toolkit を入れ、K3s を再起動して nvidia \
                ランタイムを登録させてください。",
    }
    /// Holds an NVIDIA GPU but has no runtimeClassName: on K3s, whose default runtime is run…
    holds_nvidia_gpu_but_has() {
        en: "Holds an NVIDIA GPU but has no runtimeClassName: on K3s, whose default runtime is runc, it may \
                run on the CPU without any error — set runtimeClassName: nvidia (or start the K3s agent with \
                --default-runtime nvidia).",
        ja: "NVIDIA GPU を持っていますが runtimeClassName がありません。\
                既定のランタイムが runc の K3s では、エラーなしで CPU \
                で動くことがあります — runtimeClassName: nvidia \
                を設定してください（または K3s agent を --default-runtime nvidia で起動）。",
    }
    /// The kubelet refused this pod: it requests more than 1 replica of a time-sliced GPU —…
    kubelet_refused_pod_requests_more() {
        en: "The kubelet refused this pod: it requests more than 1 replica of a time-sliced GPU — request 1.",
        ja: "kubelet がこの Pod を拒否しました。タイムスライスの GPU \
        のレプリカを2つ以上要求しています — 1 を要求してください。",
    }
}
