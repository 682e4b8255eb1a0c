//! What device-plugin-missing and gpu-unhealthy say (the NVIDIA device plugin absent, failing or
//! reporting fewer units than the node has), in English and Japanese: one function per
//! sentence, its parameters named. `nodes.rs` decides which applies.

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const PLUGIN_POD_PHASE: Sentence = Sentence {
    key: "plugin.plugin_pod_phase",
    en: "its device-plugin pod {ns}/{name} is {phase}",
    ja: "device-plugin の Pod {ns}/{name} が {phase} です",
};

/// its device-plugin pod {ns}/{name} is {phase}
pub(super) fn plugin_pod_phase(ns: &impl Display, name: &impl Display, phase: &impl Display) -> Said {
    PLUGIN_POD_PHASE.say(&[("ns", &Said::text(ns)), ("name", &Said::text(name)), ("phase", &Said::text(phase))])
}

const PLUGIN_POD_STATE: Sentence = Sentence {
    key: "plugin.plugin_pod_state",
    en: "its device-plugin pod {ns}/{name} is in {state}",
    ja: "device-plugin の Pod {ns}/{name} が {state} です",
};

/// its device-plugin pod {ns}/{name} is in {state}
pub(super) fn plugin_pod_state(ns: &impl Display, name: &impl Display, state: &impl Display) -> Said {
    PLUGIN_POD_STATE.say(&[("ns", &Said::text(ns)), ("name", &Said::text(name)), ("state", &Said::text(state))])
}

const RESTARTED_TIMES: Sentence =
    Sentence { key: "plugin.restarted_times", en: " (restarted {n} times", ja: "（再起動 {n} 回" };

///  (restarted {n} times
pub(super) fn restarted_times(n: &impl Display) -> Said {
    RESTARTED_TIMES.say(&[("n", &Said::text(n))])
}

const LAST_EXIT_CODE: Sentence =
    Sentence { key: "plugin.last_exit_code", en: "; last exit code {code}", ja: "、最後の終了コード {code}" };

/// ; last exit code {code}
pub(super) fn last_exit_code(code: &impl Display) -> Said {
    LAST_EXIT_CODE.say(&[("code", &Said::text(code))])
}

const CLOSE_PAREN: Sentence = Sentence { key: "plugin.close_paren", en: ")", ja: "）" };

/// )
pub(super) fn close_paren() -> Said {
    CLOSE_PAREN.say(&[])
}

const ADVERTISES_NVIDIA_COM_GPU_CAPACITY: Sentence = Sentence {
    key: "plugin.advertises_nvidia_com_gpu_capacity",
    en: "advertises nvidia.com/gpu capacity but 0 allocatable",
    ja: "は nvidia.com/gpu の capacity を公開していますが allocatable が 0 です",
};

/// advertises nvidia.com/gpu capacity but 0 allocatable
pub(super) fn advertises_nvidia_com_gpu_capacity() -> Said {
    ADVERTISES_NVIDIA_COM_GPU_CAPACITY.say(&[])
}

const HAS_GPU_SIGNALS_LABELS_JETSON: Sentence = Sentence {
    key: "plugin.has_gpu_signals_labels_jetson",
    en: "has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu",
    ja: "には GPU の兆候（ラベル、Jetson ボード）がありますが nvidia.com/gpu を公開していません",
};

/// has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu
pub(super) fn has_gpu_signals_labels_jetson() -> Said {
    HAS_GPU_SIGNALS_LABELS_JETSON.say(&[])
}

const READ_LOG_KUBECTL_N_LOGS: Sentence = Sentence {
    key: "plugin.read_log_kubectl_n_logs",
    en: "{state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA container runtime on the node or a plugin config it rejects \
        are the usual causes",
    ja: "{state} — ログを確認してください（kubectl -n {ns} logs {pn} --previous）。Node に NVIDIA コンテナーランタイムがない、またはプラグインが設定を受け付けない、がよくある原因です",
};

/// {state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA conta…
pub(super) fn read_log_kubectl_n_logs(state: &Said, ns: &impl Display, pn: &impl Display) -> Said {
    READ_LOG_KUBECTL_N_LOGS.say(&[("state", state), ("ns", &Said::text(ns)), ("pn", &Said::text(pn))])
}

const DEVICE_PLUGIN_POD_RUNS_BUT: Sentence = Sentence {
    key: "plugin.device_plugin_pod_runs_but",
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
    key: "plugin.no_nvidia_device_plugin_pod",
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
    key: "plugin.no_nvidia_device_plugin_runs",
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
    key: "plugin.meanwhile_pod_use_gpu_through",
    en: " Meanwhile {n} pod(s) use its GPU through the NVIDIA runtime without being counted (see gpu-used-outside-scheduler).",
    ja: "その間も {n} 個の Pod \
        が数えられないまま NVIDIA ランタイム経由で GPU を使っています（gpu-used-outside-scheduler を参照）。",
};

///  Meanwhile {n} pod(s) use its GPU through the NVIDIA runtime without being counted (s…
pub(super) fn meanwhile_pod_use_gpu_through(n: &impl Display) -> Said {
    MEANWHILE_POD_USE_GPU_THROUGH.say(&[("n", &Said::text(n))])
}

const GPU_PODS_WAITING: Sentence = Sentence {
    key: "plugin.gpu_pods_waiting",
    en: " GPU pods are waiting for it.",
    ja: "GPU の Pod がこの Node を待っています。",
};

///  GPU pods are waiting for it.
pub(super) fn gpu_pods_waiting() -> Said {
    GPU_PODS_WAITING.say(&[])
}

const PLUGIN_MISSING: Sentence = Sentence {
    key: "plugin.plugin_missing",
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
    key: "plugin.replicas_out",
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
    Sentence { key: "plugin.units_out", en: "{out_n} of {cap} {res}", ja: "{res} {cap} 個中 {out_n} 個" };

/// {out_n} of {cap} {res}
pub(super) fn units_out(out_n: &impl Display, cap: &impl Display, res: &impl Display) -> Said {
    UNITS_OUT.say(&[("out_n", &Said::text(out_n)), ("cap", &Said::text(cap)), ("res", &Said::text(res))])
}

const GPU_PODS_WAITING_LOST_CAPACITY: Sentence = Sentence {
    key: "plugin.gpu_pods_waiting_lost_capacity",
    en: " GPU pods are waiting for the lost capacity.",
    ja: "失われた分を GPU の Pod が待っています。",
};

///  GPU pods are waiting for the lost capacity.
pub(super) fn gpu_pods_waiting_lost_capacity() -> Said {
    GPU_PODS_WAITING_LOST_CAPACITY.say(&[])
}

const OUT_SERVICE_DEVICE_PLUGIN_FOUND: Sentence = Sentence {
    key: "plugin.out_service_device_plugin_found",
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
];
