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
    /// The kubelet refused this pod at admission: it asks for {count} replicas of a time-sl…
    kubelet_refused_shared_request(count, resource) {
        en: "The kubelet refused this pod at admission: it asks for {count} replicas of a time-sliced {resource}, and the device \
        plugin gives a container at most 1 (failRequestsGreaterThanOne) — more replicas give it no more of the GPU: ask for 1.",
        ja: "kubelet がアドミッションでこの Pod を拒否しました。タイムスライスの {resource} のレプリカを {count} \
        個要求していますが、デバイスプラグインは 1 コンテナーに 1 個までしか渡しません（failRequestsGreaterThanOne）— \
        レプリカを増やしても GPU は増えません。1 を要求してください。",
    }
}
