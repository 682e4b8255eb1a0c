//! What a Pending pod is told and what its diagnoses say (insufficient-gpu, insufficient-memory,
//! a GPU held past its grace period, a cordoned or dark node, time-slicing and MIG naming), in
//! English and Japanese: one function per sentence, its parameters named. `waiting.rs` decides
//! which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const WAITING_NODE_AIMED_AT_WHICH: Sentence = Sentence {
    key: "waiting.waiting_node_aimed_at_which",
    en: "Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: the NVIDIA device plugin is missing or failing there \
        (see that node's device-plugin-missing diagnosis) — fix the plugin; freeing a GPU elsewhere will not help.",
    ja: "対象の Node {node} で {res} を {want} \
        個待っていますが、{node} は1つも公開していません。そこで NVIDIA device plugin がないか失敗しています（その Node の device-plugin-missing を参照）— プラグインを直してください。ほかで GPU を空けても解決しません。",
};

/// Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: t…
pub(super) fn waiting_node_aimed_at_which(want: &impl Display, res: &impl Display, node: &impl Display) -> Said {
    WAITING_NODE_AIMED_AT_WHICH.say(&[
        ("want", &Said::text(want)),
        ("res", &Said::text(res)),
        ("node", &Said::text(node)),
    ])
}

const NO_GPU_NODE_SHOWS_WHY: Sentence = Sentence {
    key: "waiting.no_gpu_node_shows_why",
    en: "no GPU node shows why (no node looks like a GPU node): check that the NVIDIA device plugin runs on the GPU nodes",
    ja: "理由を示す GPU Node \
        がありません（GPU Node らしい Node がない）。GPU Node で NVIDIA device plugin が動いているか確認してください",
};

/// no GPU node shows why (no node looks like a GPU node): check that the NVIDIA device p…
pub(super) fn no_gpu_node_shows_why() -> Said {
    NO_GPU_NODE_SHOWS_WHY.say(&[])
}

const NVIDIA_DEVICE_PLUGIN_MISSING_FAILING: Sentence = Sentence {
    key: "waiting.nvidia_device_plugin_missing_failing",
    en: "the NVIDIA device plugin is missing or failing on {who} (see device-plugin-missing) — fix the plugin there",
    ja: "{who} で NVIDIA device plugin \
        がないか失敗しています（device-plugin-missing を参照）— そこでプラグインを直してください",
};

/// the NVIDIA device plugin is missing or failing on {who} (see device-plugin-missing) —…
pub(super) fn nvidia_device_plugin_missing_failing(who: &Said) -> Said {
    NVIDIA_DEVICE_PLUGIN_MISSING_FAILING.say(&[("who", who)])
}

const NOWHERE_ADVERTISED: Sentence = Sentence {
    key: "waiting.nowhere_advertised",
    en: "Waiting for {want} {res}, which no node it can go to advertises at all: {where_}. There is nothing to free, and time-slicing cannot help \
        while the plugin is down.",
    ja: "{res} を {want} 個待っていますが、行ける Node はどれも {res} を公開していません：{where_}。空けられるものはなく、プラグインが止まっている間はタイムスライスも役に立ちません。",
};

/// Waiting for {want} {res}, which no node it can go to advertises at all: {where_}. The…
pub(super) fn nowhere_advertised(want: &impl Display, res: &impl Display, where_: &Said) -> Said {
    NOWHERE_ADVERTISED.say(&[("want", &Said::text(want)), ("res", &Said::text(res)), ("where_", where_)])
}

const OUT_SERVICE: Sentence = Sentence {
    key: "waiting.out_service",
    en: "{o} of {c} on {n} out of service",
    ja: "{n} の {c} 個中 {o} 個が使用不可",
};

/// {o} of {c} on {n} out of service
pub(super) fn out_service(o: &impl Display, c: &impl Display, n: &impl Display) -> Said {
    OUT_SERVICE.say(&[("o", &Said::text(o)), ("c", &Said::text(c)), ("n", &Said::text(n))])
}

const WAITING_GPU_NEEDS_HAS_FAILED: Sentence = Sentence {
    key: "waiting.waiting_gpu_needs_has_failed",
    en: "Waiting for {want} {res}: the GPU it needs has failed — {parts} (the device plugin marked it unhealthy; see gpu-unhealthy) and the rest is \
        held. Bring the GPU back (check the node's kernel log for Xid errors, nvidia-smi, the device plugin's log) or free a unit elsewhere.",
    ja: "{res} \
        を {want} 個待っています。必要な GPU が故障しています — {parts}（device plugin が異常と判断。gpu-unhealthy を参照）、残りは使用中です。GPU を戻す（Node のカーネルログの Xid エラー、nvidia-smi、device \
        plugin のログを確認）か、ほかでユニットを空けてください。",
};

/// Waiting for {want} {res}: the GPU it needs has failed — {parts} (the device plugin ma…
pub(super) fn waiting_gpu_needs_has_failed(want: &impl Display, res: &impl Display, parts: &Said) -> Said {
    WAITING_GPU_NEEDS_HAS_FAILED.say(&[("want", &Said::text(want)), ("res", &Said::text(res)), ("parts", parts)])
}

const PAST_GRACE_PERIOD_GPU_HELD: Sentence = Sentence {
    key: "waiting.past_grace_period_gpu_held",
    en: " It is past its grace period: see gpu-held-by-terminating-pod for why it may be stuck.",
    ja: "猶予期間を過ぎています。止まっている理由は gpu-held-by-terminating-pod を参照してください。",
};

///  It is past its grace period: see gpu-held-by-terminating-pod for why it may be stuck.
pub(super) fn past_grace_period_gpu_held() -> Said {
    PAST_GRACE_PERIOD_GPU_HELD.say(&[])
}

const WAITING_EVERY_MATCHING_UNIT_HELD: Sentence = Sentence {
    key: "waiting.waiting_every_matching_unit_held",
    en: "Waiting for {want} {res}: every matching unit is held, and {holder}, which holds one, is terminating (deleting since {since}, grace {grace} \
        s) — the unit frees when it is gone; nothing to do yet.{stuck}",
    ja: "{res} を {want} 個待っています。合うユニットはすべて使用中で、そのうち1つを持つ {holder} は終了処理中です（{since} \
        から削除中、猶予 {grace} 秒）— 終わればユニットが空きます。今はすることはありません。{stuck}",
};

/// Waiting for {want} {res}: every matching unit is held, and {holder}, which holds one,…
pub(super) fn waiting_every_matching_unit_held(
    want: &impl Display,
    res: &impl Display,
    holder: &impl Display,
    since: &impl Display,
    grace: &impl Display,
    stuck: &Said,
) -> Said {
    WAITING_EVERY_MATCHING_UNIT_HELD.say(&[
        ("want", &Said::text(want)),
        ("res", &Said::text(res)),
        ("holder", &Said::text(holder)),
        ("since", &Said::text(since)),
        ("grace", &Said::text(grace)),
        ("stuck", stuck),
    ])
}

const FREE_REPLICA_SCALE_DOWN_REMOVE: Sentence = Sentence {
    key: "waiting.free_replica_scale_down_remove",
    en: "free a replica (scale down or remove a pod holding one), raise time-slicing replicas, or add a GPU node",
    ja: "レプリカを空ける（持っている Pod \
        をスケールダウンか削除）、タイムスライスのレプリカ数を増やす、または GPU Node を追加してください",
};

/// free a replica (scale down or remove a pod holding one), raise time-slicing replicas,…
pub(super) fn free_replica_scale_down_remove() -> Said {
    FREE_REPLICA_SCALE_DOWN_REMOVE.say(&[])
}

const FREE_ONE_SCALE_DOWN_POD: Sentence = Sentence {
    key: "waiting.free_one_scale_down_pod",
    en: "free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA device plugin, or add a GPU node",
    ja: "1つ空ける（持っている Pod \
        をスケールダウン）、NVIDIA device plugin でタイムスライスのレプリカを有効にする、または GPU Node を追加してください",
};

/// free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA de…
pub(super) fn free_one_scale_down_pod() -> Said {
    FREE_ONE_SCALE_DOWN_POD.say(&[])
}

const WAITING_EVERY_MATCHING_NODE_ALREADY: Sentence = Sentence {
    key: "waiting.waiting_every_matching_node_already",
    en: "Waiting for {want} {res}: every matching node's {res} is already held — {hint}.",
    ja: "{res} を {want} 個待っています。合う Node の {res} はすべて使用中です — {hint}。",
};

/// Waiting for {want} {res}: every matching node's {res} is already held — {hint}.
pub(super) fn waiting_every_matching_node_already(want: &impl Display, res: &impl Display, hint: &Said) -> Said {
    WAITING_EVERY_MATCHING_NODE_ALREADY.say(&[("want", &Said::text(want)), ("res", &Said::text(res)), ("hint", hint)])
}

const WAITING_WHICH_NO_NODE_ADVERTISES: Sentence = Sentence {
    key: "waiting.waiting_which_no_node_advertises",
    en: "Waiting for {want} {res}, which no node advertises: this cluster hands out GPUs through DRA (DeviceClass {classes}), not a device plugin. \
        Ask for the GPU with a ResourceClaim instead: remove {res} from resources.limits and add spec.resourceClaims naming a ResourceClaimTemplate \
        whose request has deviceClassName: {class}.",
    ja: "{res} を {want} 個待っていますが、どの Node も公開していません。このクラスタは device plugin ではなく DRA（DeviceClass \
        {classes}）で GPU を割り当てます。ResourceClaim で要求してください：resources.limits から {res} を外し、deviceClassName: {class} の ResourceClaimTemplate を \
        spec.resourceClaims で指定します。",
};

/// Waiting for {want} {res}, which no node advertises: this cluster hands out GPUs throu…
pub(super) fn waiting_which_no_node_advertises(
    want: &impl Display,
    res: &impl Display,
    classes: &Said,
    class: &impl Display,
) -> Said {
    WAITING_WHICH_NO_NODE_ADVERTISES.say(&[
        ("want", &Said::text(want)),
        ("res", &Said::text(res)),
        ("classes", classes),
        ("class", &Said::text(class)),
    ])
}

const NVIDIA_DEVICE_PLUGIN_TIME_SLICING: Sentence = Sentence {
    key: "waiting.nvidia_device_plugin_time_slicing",
    en: "the NVIDIA device plugin's time-slicing with renameByDefault: true advertises shared GPUs as {offered}",
    ja: "NVIDIA device plugin のタイムスライスで \
        renameByDefault: true のため、共有 GPU は {offered} として公開されています",
};

/// the NVIDIA device plugin's time-slicing with renameByDefault: true advertises shared…
pub(super) fn nvidia_device_plugin_time_slicing(offered: &impl Display) -> Said {
    NVIDIA_DEVICE_PLUGIN_TIME_SLICING.say(&[("offered", &Said::text(offered))])
}

const GPU_PARTITIONED_MIG_MIXED_STRATEGY: Sentence = Sentence {
    key: "waiting.gpu_partitioned_mig_mixed_strategy",
    en: "the GPU is partitioned with MIG, and the mixed strategy advertises each profile by its name",
    ja: "GPU が MIG で分割され、mixed 戦略では各プロファイルが名前で公開されます",
};

/// the GPU is partitioned with MIG, and the mixed strategy advertises each profile by it…
pub(super) fn gpu_partitioned_mig_mixed_strategy() -> Said {
    GPU_PARTITIONED_MIG_MIXED_STRATEGY.say(&[])
}

const TIME_SLICING_NOT_RENAMED_THERE: Sentence = Sentence {
    key: "waiting.time_slicing_not_renamed_there",
    en: "time-slicing is not renamed there (or is off), so the GPU is advertised as {offered}",
    ja: "そこではタイムスライスが改名されていない（または無効）ため、GPU は {offered} として公開されています",
};

/// time-slicing is not renamed there (or is off), so the GPU is advertised as {offered}
pub(super) fn time_slicing_not_renamed_there(offered: &impl Display) -> Said {
    TIME_SLICING_NOT_RENAMED_THERE.say(&[("offered", &Said::text(offered))])
}

const DEVICE_PLUGIN_ADVERTISES_GPU: Sentence = Sentence {
    key: "waiting.device_plugin_advertises_gpu",
    en: "the device plugin advertises the GPU as {offered}",
    ja: "device plugin は GPU を {offered} として公開しています",
};

/// the device plugin advertises the GPU as {offered}
pub(super) fn device_plugin_advertises_gpu(offered: &impl Display) -> Said {
    DEVICE_PLUGIN_ADVERTISES_GPU.say(&[("offered", &Said::text(offered))])
}

const RESOURCE_RENAMED_ELSEWHERE: Sentence = Sentence {
    key: "waiting.resource_renamed_elsewhere",
    en: "Waiting for {want} {res}, which no node it can go to advertises — but {who} advertise {offered}: the device plugin runs; {why}. Change the \
        pod's resources.limits from {res}: {want} to {offered}: {want} (or set the device plugin to advertise {res}).",
    ja: "{res} を {want} 個待っていますが、行ける \
        Node はどれも公開していません — ただし {who} は {offered} を公開しています。device plugin は動いています。{why}。Pod の resources.limits を {res}: {want} から {offered}: {want} \
        に変えてください（または device plugin が {res} を公開するよう設定してください）。",
};

/// Waiting for {want} {res}, which no node it can go to advertises — but {who} advertise…
pub(super) fn resource_renamed_elsewhere(
    want: &impl Display,
    res: &impl Display,
    who: &Said,
    offered: &impl Display,
    why: &Said,
) -> Said {
    RESOURCE_RENAMED_ELSEWHERE.say(&[
        ("want", &Said::text(want)),
        ("res", &Said::text(res)),
        ("who", who),
        ("offered", &Said::text(offered)),
        ("why", why),
    ])
}

const SINCE: Sentence = Sentence { key: "waiting.since", en: " since {s}", ja: "（{s} から）" };

///  since {s}
pub(super) fn since(s: &impl Display) -> Said {
    SINCE.say(&[("s", &Said::text(s))])
}

const NODES_WITH_IT_COULD_RUN_ON: Sentence = Sentence {
    key: "waiting.nodes_with_it_could_run_on",
    en: "the node(s) with {r} it could run on",
    ja: "行ける {r} の Node",
};

/// the node(s) with {r} it could run on
pub(super) fn nodes_with_it_could_run_on(r: &impl Display) -> Said {
    NODES_WITH_IT_COULD_RUN_ON.say(&[("r", &Said::text(r))])
}

const NODES_IT_COULD_RUN_ON: Sentence =
    Sentence { key: "waiting.nodes_it_could_run_on", en: "the node(s) it could run on", ja: "行ける Node" };

/// the node(s) it could run on
pub(super) fn nodes_it_could_run_on() -> Said {
    NODES_IT_COULD_RUN_ON.say(&[])
}

const WAITING_BECAUSE_CORDONED_SPEC_UNSCHEDULABLE: Sentence = Sentence {
    key: "waiting.waiting_because_cordoned_spec_unschedulable",
    en: "Waiting because {what} — {who} — are cordoned (spec.unschedulable{since}), perhaps left over from maintenance. When the work there is done: \
        kubectl uncordon {first}.",
    ja: "{what}（{who}）が cordon されているため待っています（spec.unschedulable{since}）。メンテナンスの戻し忘れかもしれません。作業が終わっていれば：kubectl uncordon \
        {first}",
};

/// Waiting because {what} — {who} — are cordoned (spec.unschedulable{since}), perhaps le…
pub(super) fn waiting_because_cordoned_spec_unschedulable(
    what: &Said,
    who: &impl Display,
    since: &Said,
    first: &impl Display,
) -> Said {
    WAITING_BECAUSE_CORDONED_SPEC_UNSCHEDULABLE.say(&[
        ("what", what),
        ("who", &Said::text(who)),
        ("since", since),
        ("first", &Said::text(first)),
    ])
}

const REQUESTS_MORE_THAN_REPLICA_TIME: Sentence = Sentence {
    key: "waiting.requests_more_than_replica_time",
    en: "Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: request 1 (a replica is not a bigger share of the \
        GPU).",
    ja: "タイムスライスの GPU のレプリカを2つ以上要求しており、device plugin が拒否します。1 を要求してください（レプリカを増やしても GPU の取り分は増えません）。",
};

/// Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: r…
pub(super) fn requests_more_than_replica_time() -> Said {
    REQUESTS_MORE_THAN_REPLICA_TIME.say(&[])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    WAITING_NODE_AIMED_AT_WHICH,
    NO_GPU_NODE_SHOWS_WHY,
    NVIDIA_DEVICE_PLUGIN_MISSING_FAILING,
    NOWHERE_ADVERTISED,
    OUT_SERVICE,
    WAITING_GPU_NEEDS_HAS_FAILED,
    PAST_GRACE_PERIOD_GPU_HELD,
    WAITING_EVERY_MATCHING_UNIT_HELD,
    FREE_REPLICA_SCALE_DOWN_REMOVE,
    FREE_ONE_SCALE_DOWN_POD,
    WAITING_EVERY_MATCHING_NODE_ALREADY,
    WAITING_WHICH_NO_NODE_ADVERTISES,
    NVIDIA_DEVICE_PLUGIN_TIME_SLICING,
    GPU_PARTITIONED_MIG_MIXED_STRATEGY,
    TIME_SLICING_NOT_RENAMED_THERE,
    DEVICE_PLUGIN_ADVERTISES_GPU,
    RESOURCE_RENAMED_ELSEWHERE,
    SINCE,
    NODES_WITH_IT_COULD_RUN_ON,
    NODES_IT_COULD_RUN_ON,
    WAITING_BECAUSE_CORDONED_SPEC_UNSCHEDULABLE,
    REQUESTS_MORE_THAN_REPLICA_TIME,
];
