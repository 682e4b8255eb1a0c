//! What gpu-node-down says (a GPU node stopped reporting or is not Ready, and what becomes of the
//! pods holding its GPUs), in English and Japanese: one entry per sentence, its placeholders its
//! parameters (`: Said` where each language has its own words). `nodes.rs` decides which applies.

gpudash_model::sentences! { "down";
    /// has not reported since {since}
    has_not_reported_since(since) {
        en: "has not reported since {since}",
        ja: "は {since} から報告がありません",
    }
    /// is not ready ({r}) since {since}
    not_ready_since_because(r, since) {
        en: "is not ready ({r}) since {since}",
        ja: "は {since} から Ready ではありません（{r}）",
    }
    /// is not ready since {since}
    not_ready_since_no_reason(since) {
        en: "is not ready since {since}",
        ja: "は {since} から Ready ではありません",
    }
    /// {name} {state}: its {gpus} GPU unit(s) are out of reach until it returns (check power…
    gpu_unit_out_reach_until(name, state: Said, gpus) {
        en: "{name} {state}: its {gpus} GPU unit(s) are out of reach until it returns (check power, network and the K3s agent on the board).",
        ja: "{name} \
        {state}。戻るまで GPU ユニット {gpus} 個は使えません（ボードの電源、ネットワーク、K3s agent を確認してください）。",
    }
    ///  They are already Terminating: Kubernetes evicted them, and they stay listed until th…
    they_already_terminating_kubernetes_evicted() {
        en: " They are already Terminating: Kubernetes evicted them, and they stay listed until the node returns or is deleted.",
        ja: "すでに Terminating \
        です。Kubernetes が退避させ、Node が戻るか削除されるまで一覧に残ります。",
    }
    ///  Kubernetes evicts them at {at} (taint-based eviction), then their controllers recrea…
    kubernetes_evicts_them_at_taint(at) {
        en: " Kubernetes evicts them at {at} (taint-based eviction), then their controllers recreate them elsewhere.",
        ja: "Kubernetes は {at} にこれらを退避させ（taint による退避）、コントローラーが別の場所に作り直します。",
    }
    ///  {t} already Terminating; the rest are evicted at {at} (taint-based eviction).
    already_terminating_rest_evicted_at(t, at) {
        en: " {t} already Terminating; the rest are evicted at {at} (taint-based eviction).",
        ja: "{t} 個はすでに Terminating、残りは {at} に退避されます（taint による退避）。",
    }
    ///  They tolerate the node's taint without a time limit, so Kubernetes will not move them.
    they_tolerate_node_taint_without() {
        en: " They tolerate the node's taint without a time limit, so Kubernetes will not move them.",
        ja: "Node の taint を期限なしで許容しているため、Kubernetes はこれらを移動しません。",
    }
    ///  {t} already Terminating.
    already_terminating(t) {
        en: " {t} already Terminating.",
        ja: "{t} 個はすでに Terminating です。",
    }
    /// the rest of the cluster has {free} free {r} for the {n} they hold
    rest_cluster_has_free_they(free, r, n) {
        en: "the rest of the cluster has {free} free {r} for the {n} they hold",
        ja: "使っている {n} 個に対し、クラスターの残りに空きの {r} が {free} 個あります",
    }
    /// the rest of the cluster has only {free} free {r} for the {n} they hold, so some will…
    rest_cluster_has_only_free(free, r, n) {
        en: "the rest of the cluster has only {free} free {r} for the {n} they hold, so some will wait Pending",
        ja: "使っている {n} 個に対し、クラスターの残りの空きの {r} は {free} 個だけなので、一部は Pending で待ちます",
    }
    /// no other node has a free {r}, so they will wait Pending until {name} returns
    no_other_node_has_free(r, name) {
        en: "no other node has a free {r}, so they will wait Pending until {name} returns",
        ja: "空きの {r} がある Node はほかにないため、{name} が戻るまで Pending で待ちます",
    }
}
