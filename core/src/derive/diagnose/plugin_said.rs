//! What device-plugin-missing and gpu-unhealthy say (the NVIDIA device plugin absent, failing or
//! reporting fewer units than the node has), in English and Japanese: one entry per sentence, its
//! placeholders its parameters (`: Said` where each language has its own words). `nodes.rs` decides
//! which applies.

gpudash_model::sentences! { "plugin";
    /// its device-plugin pod {ns}/{name} is {phase}
    plugin_pod_phase(ns, name, phase) {
        en: "its device-plugin pod {ns}/{name} is {phase}",
        ja: "device-plugin の Pod {ns}/{name} が {phase} です",
    }
    /// its device-plugin pod {ns}/{name} is in {state}
    plugin_pod_state(ns, name, state) {
        en: "its device-plugin pod {ns}/{name} is in {state}",
        ja: "device-plugin の Pod {ns}/{name} が {state} です",
    }
    ///  (restarted {n} times
    restarted_times(n) {
        en: " (restarted {n} times",
        ja: "（再起動 {n} 回",
    }
    /// ; last exit code {code}
    last_exit_code(code) {
        en: "; last exit code {code}",
        ja: "、最後の終了コード {code}",
    }
    /// )
    close_paren() {
        en: ")",
        ja: "）",
    }
    /// advertises nvidia.com/gpu capacity but 0 allocatable
    advertises_nvidia_com_gpu_capacity() {
        en: "advertises nvidia.com/gpu capacity but 0 allocatable",
        ja: "は nvidia.com/gpu の capacity を公開していますが allocatable が 0 です",
    }
    /// has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu
    has_gpu_signals_labels_jetson() {
        en: "has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu",
        ja: "には GPU の兆候（ラベル、Jetson ボード）がありますが nvidia.com/gpu を公開していません",
    }
    /// {state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA conta…
    read_log_kubectl_n_logs(state: Said, ns, pn) {
        en: "{state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA container runtime on the node or a plugin config it rejects \
        are the usual causes",
        ja: "{state} — ログを確認してください（kubectl -n {ns} logs {pn} --previous）。Node に NVIDIA コンテナーランタイムがない、またはプラグインが設定を受け付けない、がよくある原因です",
    }
    /// its device-plugin pod {ns}/{pn} runs but registered no GPU with the kubelet — right af…
    device_plugin_pod_runs_but(ns, pn) {
        en: "its device-plugin pod {ns}/{pn} runs but registered no GPU with the kubelet — right after a kubelet restart the plugin must register \
        again (if it has not within a minute, delete the pod so that its DaemonSet starts it anew); otherwise read its log (kubectl -n {ns} logs {pn}): \
        it may not see the GPU (NVIDIA runtime or driver missing on the node)",
        ja: "device-plugin の Pod {ns}/{pn} は動いていますが kubelet に GPU を登録していません — \
        kubelet の再起動直後はプラグインが登録し直す必要があります（1 \
        分たっても登録しなければ Pod を削除して DaemonSet に作り直させてください）。\
        そうでなければログを確認してください（kubectl -n {ns} logs {pn}）。GPU \
        が見えていない可能性があります（Node に NVIDIA ランタイムかドライバーがない）",
    }
    /// no NVIDIA device-plugin pod runs on this node, though its DaemonSet runs pods on othe…
    no_nvidia_device_plugin_pod(ns) {
        en: "no NVIDIA device-plugin pod runs on this node, though its DaemonSet runs pods on other nodes (namespace {ns}): its nodeSelector, affinity or \
        tolerations do not match this node — compare kubectl -n {ns} get daemonset -o yaml with this node's labels and taints",
        ja: "DaemonSet は他の Node で \
        Pod を動かしていますが（namespace {ns}）、この Node では NVIDIA device-plugin の Pod が動いていません。nodeSelector、affinity、tolerations がこの Node に合っていません — kubectl -n \
        {ns} get daemonset -o yaml とこの Node のラベル・taint を比べてください",
    }
    /// no NVIDIA device plugin runs anywhere in the cluster — install it (the nvidia-device-…
    no_nvidia_device_plugin_runs() {
        en: "no NVIDIA device plugin runs anywhere in the cluster — install it (the nvidia-device-plugin Helm chart, with time-slicing on Jetson) so that \
        the scheduler counts GPU pods",
        ja: "クラスターのどこにも NVIDIA device plugin が動いていません — スケジューラーが GPU の Pod を数えられるよう、インストールしてください（nvidia-device-plugin の \
        Helm chart、Jetson ではタイムスライス付き）",
    }
    ///  Meanwhile {n} pod(s) use its GPU through the NVIDIA runtime without being counted (s…
    meanwhile_pod_use_gpu_through(n) {
        en: " Meanwhile {n} pod(s) use its GPU through the NVIDIA runtime without being counted (see gpu-used-outside-scheduler).",
        ja: "その間も {n} 個の Pod \
        が数えられないまま NVIDIA ランタイム経由で GPU を使っています（gpu-used-outside-scheduler を参照）。",
    }
    ///  GPU pods are waiting for it.
    gpu_pods_waiting() {
        en: " GPU pods are waiting for it.",
        ja: "GPU の Pod がこの Node を待っています。",
    }
    /// {name} shares its GPUs through MPS … but no MPS control daemon runs there…
    mps_daemon_missing(name, daemon: Said, stakes: Said) {
        en: "{name} shares its GPUs through MPS (nvidia.com/gpu.sharing-strategy=mps) but no MPS control daemon runs there{daemon}: the NVIDIA \
        device plugin waits for it (its log says \"error waiting for MPS daemon\") and offers no GPU until it runs. The daemon is the device \
        plugin chart's mps-control-daemon DaemonSet, which runs only on nodes GPU feature discovery labelled nvidia.com/mps.capable=true — check \
        that label on {name} and the DaemonSet's pods (kubectl get pods -A -o wide | grep mps-control-daemon).{stakes}",
        ja: "{name} は MPS で GPU を共有しています（nvidia.com/gpu.sharing-strategy=mps）が、\
        MPS コントロールデーモンが動いていません{daemon}。NVIDIA \
        device plugin はその起動を待ち（ログに \"error waiting for MPS daemon\"）、動くまで GPU を公開しません。\
        デーモンは device plugin の chart の \
        mps-control-daemon DaemonSet で、GPU feature discovery が nvidia.com/mps.capable=true を付けた Node でだけ動きます — {name} \
        のそのラベルと DaemonSet の Pod を確認してください（kubectl get pods -A -o wide | grep mps-control-daemon）。{stakes}",
    }
    /// : its pod {ns}/{pn} is {state}
    mps_daemon_pod_state(ns, pn, state: Said) {
        en: " (its pod {ns}/{pn}: {state})",
        ja: "（Pod {ns}/{pn}：{state}）",
    }
    /// {name} {what}: {why}.{stakes}{outside}
    plugin_missing(name, what: Said, why: Said, stakes: Said, outside: Said) {
        en: "{name} {what}: {why}.{stakes}{outside}",
        ja: "{name} {what}：{why}。{stakes}{outside}",
    }
    /// {out_n} of {cap} {res} replicas ({gpus} GPU(s) × {reps})
    replicas_out(out_n, cap, res, gpus, reps) {
        en: "{out_n} of {cap} {res} replicas ({gpus} GPU(s) × {reps})",
        ja: "{res} のレプリカ {cap} 個中 {out_n} 個（GPU {gpus} 基 × {reps}）",
    }
    /// {out_n} of {cap} {res}
    units_out(out_n, cap, res) {
        en: "{out_n} of {cap} {res}",
        ja: "{res} {cap} 個中 {out_n} 個",
    }
    ///  GPU pods are waiting for the lost capacity.
    gpu_pods_waiting_lost_capacity() {
        en: " GPU pods are waiting for the lost capacity.",
        ja: "失われた分を GPU の Pod が待っています。",
    }
    /// {units} on {name} are out of service: the device plugin found the GPU unhealthy (Xid…
    out_service_device_plugin_found(units: Said, name, stakes: Said) {
        en: "{units} on {name} are out of service: the device plugin found the GPU unhealthy (Xid errors, fallen off the bus) and stopped offering it — \
        check the node's kernel log (dmesg | grep -i xid), nvidia-smi on the node and the device plugin's log; the GPU returns when the plugin sees it \
        healthy again (often after a GPU reset or a reboot).{stakes}",
        ja: "{name} の {units} が使用不可です。device plugin が GPU の異常（Xid エラー、バスからの脱落）を検出し、提供をやめました \
        — Node のカーネルログ（dmesg | grep -i xid）、Node 上の nvidia-smi、device plugin のログを確認してください。プラグインが正常と判断すれば GPU は戻ります（GPU リセットや再起動の後が多い）。{stakes}",
    }
    /// gpu-unhealthy on a Jetson/Tegra board: its GPU is integrated (no Xid bus, no nvidia-smi
    /// on most JetPacks).
    out_service_integrated(units: Said, name, stakes: Said) {
        en: "{units} on {name} are out of service: the device plugin reports the board's integrated GPU unhealthy and stopped offering it — \
        read the device plugin's log and the board's kernel log (dmesg), and check the GPU with tegrastats on the board; it returns when the \
        plugin sees it healthy again (often after the plugin or the board restarts).{stakes}",
        ja: "{name} の {units} が使用不可です。device plugin がボードの内蔵 GPU を異常と報告し、提供をやめました \
        — device plugin のログとボードのカーネルログ（dmesg）を読み、ボード上の tegrastats で GPU を確認してください。\
        プラグインが正常と判断すれば戻ります（プラグインかボードの再起動の後が多い）。{stakes}",
    }
}
