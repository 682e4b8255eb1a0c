//! What the node diagnoses say (device-plugin-missing, gpu-unhealthy, gpu-used-outside-scheduler,
//! gpu-node-down, unified-memory-overcommit, time-slice contention), in English and Japanese: one
//! entry per sentence, its placeholders its parameters (`: Said` where each language has its own
//! words). `nodes.rs` decides which applies.

gpudash_model::sentences! { "nodes";
    /// {n} use it for sure ({who}: NVIDIA runtime class or NVIDIA_VISIBLE_DEVICES)
    use_sure_nvidia_runtime_class(n, who: Said) {
        en: "{n} use it for sure ({who}: NVIDIA runtime class or NVIDIA_VISIBLE_DEVICES)",
        ja: "{n} 個が確実に使っています（{who}：NVIDIA の RuntimeClass または \
        NVIDIA_VISIBLE_DEVICES）",
    }
    /// {n} may use it ({who}: the node's default runtime is {rt}, so any container whose ima…
    may_use_node_default_runtime(n, who: Said, rt) {
        en: "{n} may use it ({who}: the node's default runtime is {rt}, so any container whose image asks for \
            the GPU gets it — the API cannot tell which)",
        ja: "{n} 個が使っているかもしれません（{who}：Node の既定のランタイムが {rt} のため、イメージが GPU \
            を求めるコンテナーはどれも GPU を得ます — API からはどれか分かりません）",
    }
    /// Pods on {name} use its GPU without requesting a GPU resource, so the scheduler does n…
    pods_use_gpu_without_requesting(name, parts: Said) {
        en: "Pods on {name} use its GPU without requesting a GPU resource, so the scheduler does not count them: \
            {parts}. Nothing stops another model from landing here, and they share the GPU and its memory with no \
            isolation — have GPU pods request nvidia.com/gpu through the device plugin (time-slicing replicas on \
            Jetson) so that each is counted.",
        ja: "{name} の Pod が GPU リソースを要求せずに GPU を使っているため、スケジューラーはそれらを数えていません：\
            {parts}。別のモデルがここに配置されるのを止めるものはなく、GPU とそのメモリを分離なしで共有します — \
            各 Pod が数えられるよう、GPU の Pod には device plugin 経由で nvidia.com/gpu \
            を要求させてください（Jetson ではタイムスライスのレプリカ）。",
    }
    /// {name} {state}: {n} pod(s) holding its GPU are not serving ({who}).{evict} For the {g…
    pod_holding_gpu_not_serving(name, state: Said, n, who: Said, evict: Said, gpus, room: Said) {
        en: "{name} {state}: {n} pod(s) holding its GPU are not serving ({who}).{evict} For the {gpus}: {room}. Check the board's power, network and K3s \
        agent.",
        ja: "{name} {state}。GPU を持つ {n} 個の Pod が動いていません（{who}）。{evict}GPU について：{room}。ボードの電源、ネットワーク、K3s agent を確認してください。",
    }
    /// Pod memory limits on {name} add up to {lim}, more than the {board} the board shares b…
    pod_memory_limits_add_up(name, lim, board) {
        en: "Pod memory limits on {name} add up to {lim}, more than the {board} the board shares between \
                    CPU and GPU: lower the limits or move a model to another board.",
        ja: "{name} の Pod のメモリ limits の合計は {lim} で、ボードが CPU と GPU で共有する {board} \
                    を超えています。limits を下げるか、モデルを別のボードに移してください。",
    }
    ///  Its models hold {gpu} of GPU memory now (not counted in any limit); {free} of the bo…
    models_hold_gpu_memory_now(gpu, free) {
        en: " Its models hold {gpu} of GPU memory now (not counted in any limit); {free} of the board is free.",
        ja: " モデルは今 GPU メモリを {gpu} 使っています（どの limit にも数えられません）。ボードの空きは {free} です。",
    }
    /// {f} of the board's {board} is free
    board_free(f, board) {
        en: "{f} of the board's {board} is free",
        ja: "ボードの {board} のうち空きは {f} です",
    }
    /// the board has {board}
    board_has(board) {
        en: "the board has {board}",
        ja: "ボードは {board} です",
    }
    /// {ns}/{pod} on {node} holds {g} of GPU memory beside {u} in its cgroup: {sum}, more th…
    holds_gpu_memory_beside_cgroup(ns, pod, node, g, u, sum, l, room: Said) {
        en: "{ns}/{pod} on {node} holds {g} of GPU memory beside {u} in its cgroup: {sum}, more than its memory \
                        limit of {l}. GPU memory comes out of the board's RAM but is not counted against the limit, so \
                        the limit does not hold this model ({room}): raise the limit to cover the model's GPU memory, \
                        or size the board for it.",
        ja: "{node} の {ns}/{pod} は GPU メモリ {g} と cgroup の {u} を使い、合計 {sum} でメモリ limit の {l} \
                        を超えています。GPU メモリはボードの RAM から取られますが limit には数えられないため、limit \
                        ではこのモデルを抑えられません（{room}）。limit を GPU メモリ分まで上げるか、それに見合うボードに\
                        してください。",
    }
    /// {pods_holding} pods share {physical} physical GPU(s) of {r} on {name} by time-slicing…
    pods_share_physical_gpu_time(pods_holding, physical, r, name) {
        en: "{pods_holding} pods share {physical} physical GPU(s) of {r} on {name} by time-slicing: no proportional compute, no memory or fault isolation \
        — one model's memory or crash affects the others.",
        ja: "{name} の {r} の物理 GPU {physical} 基を {pods_holding} 個の Pod \
        がタイムスライスで共有しています。計算の比例配分も、メモリや障害の分離もありません — 1つのモデルのメモリ使用やクラッシュがほかに影響します。",
    }
}
