//! What gpu-node-down says (a GPU node stopped reporting or is not Ready, and what becomes of
//! the pods holding its GPUs), in English and Japanese: one function per sentence, its
//! parameters named. `nodes.rs` decides which applies.

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const HAS_NOT_REPORTED_SINCE: Sentence = Sentence {
    key: "down.has_not_reported_since",
    en: "has not reported since {since}",
    ja: "は {since} から報告がありません",
};

/// has not reported since {since}
pub(super) fn has_not_reported_since(since: &impl Display) -> Said {
    HAS_NOT_REPORTED_SINCE.say(&[("since", &Said::text(since))])
}

const NOT_READY_SINCE_BECAUSE: Sentence = Sentence {
    key: "down.not_ready_since_because",
    en: "is not ready ({r}) since {since}",
    ja: "は {since} から Ready ではありません（{r}）",
};

/// is not ready ({r}) since {since}
pub(super) fn not_ready_since_because(r: &impl Display, since: &impl Display) -> Said {
    NOT_READY_SINCE_BECAUSE.say(&[("r", &Said::text(r)), ("since", &Said::text(since))])
}

const NOT_READY_SINCE_NO_REASON: Sentence = Sentence {
    key: "down.not_ready_since_no_reason",
    en: "is not ready since {since}",
    ja: "は {since} から Ready ではありません",
};

/// is not ready since {since}
pub(super) fn not_ready_since_no_reason(since: &impl Display) -> Said {
    NOT_READY_SINCE_NO_REASON.say(&[("since", &Said::text(since))])
}

const GPU_UNIT_OUT_REACH_UNTIL: Sentence = Sentence {
    key: "down.gpu_unit_out_reach_until",
    en: "{name} {state}: its {gpus} GPU unit(s) are out of reach until it returns (check power, network and the K3s agent on the board).",
    ja: "{name} \
        {state}。戻るまで GPU ユニット {gpus} 個は使えません（ボードの電源、ネットワーク、K3s agent を確認してください）。",
};

/// {name} {state}: its {gpus} GPU unit(s) are out of reach until it returns (check power…
pub(super) fn gpu_unit_out_reach_until(name: &impl Display, state: &Said, gpus: &impl Display) -> Said {
    GPU_UNIT_OUT_REACH_UNTIL.say(&[("name", &Said::text(name)), ("state", state), ("gpus", &Said::text(gpus))])
}

const THEY_ALREADY_TERMINATING_KUBERNETES_EVICTED: Sentence = Sentence {
    key: "down.they_already_terminating_kubernetes_evicted",
    en: " They are already Terminating: Kubernetes evicted them, and they stay listed until the node returns or is deleted.",
    ja: "すでに Terminating \
        です。Kubernetes が退避させ、Node が戻るか削除されるまで一覧に残ります。",
};

///  They are already Terminating: Kubernetes evicted them, and they stay listed until th…
pub(super) fn they_already_terminating_kubernetes_evicted() -> Said {
    THEY_ALREADY_TERMINATING_KUBERNETES_EVICTED.say(&[])
}

const KUBERNETES_EVICTS_THEM_AT_TAINT: Sentence = Sentence {
    key: "down.kubernetes_evicts_them_at_taint",
    en: " Kubernetes evicts them at {at} (taint-based eviction), then their controllers recreate them elsewhere.",
    ja: "Kubernetes は {at} にこれらを退避させ（taint による退避）、コントローラーが別の場所に作り直します。",
};

///  Kubernetes evicts them at {at} (taint-based eviction), then their controllers recrea…
pub(super) fn kubernetes_evicts_them_at_taint(at: &impl Display) -> Said {
    KUBERNETES_EVICTS_THEM_AT_TAINT.say(&[("at", &Said::text(at))])
}

const ALREADY_TERMINATING_REST_EVICTED_AT: Sentence = Sentence {
    key: "down.already_terminating_rest_evicted_at",
    en: " {t} already Terminating; the rest are evicted at {at} (taint-based eviction).",
    ja: "{t} 個はすでに Terminating、残りは {at} に退避されます（taint による退避）。",
};

///  {t} already Terminating; the rest are evicted at {at} (taint-based eviction).
pub(super) fn already_terminating_rest_evicted_at(t: &impl Display, at: &impl Display) -> Said {
    ALREADY_TERMINATING_REST_EVICTED_AT.say(&[("t", &Said::text(t)), ("at", &Said::text(at))])
}

const THEY_TOLERATE_NODE_TAINT_WITHOUT: Sentence = Sentence {
    key: "down.they_tolerate_node_taint_without",
    en: " They tolerate the node's taint without a time limit, so Kubernetes will not move them.",
    ja: "Node の taint を期限なしで許容しているため、Kubernetes はこれらを移動しません。",
};

///  They tolerate the node's taint without a time limit, so Kubernetes will not move them.
pub(super) fn they_tolerate_node_taint_without() -> Said {
    THEY_TOLERATE_NODE_TAINT_WITHOUT.say(&[])
}

const ALREADY_TERMINATING: Sentence = Sentence {
    key: "down.already_terminating",
    en: " {t} already Terminating.",
    ja: "{t} 個はすでに Terminating です。",
};

///  {t} already Terminating.
pub(super) fn already_terminating(t: &impl Display) -> Said {
    ALREADY_TERMINATING.say(&[("t", &Said::text(t))])
}

const REST_CLUSTER_HAS_FREE_THEY: Sentence = Sentence {
    key: "down.rest_cluster_has_free_they",
    en: "the rest of the cluster has {free} free {r} for the {n} they hold",
    ja: "使っている {n} 個に対し、クラスターの残りに空きの {r} が {free} 個あります",
};

/// the rest of the cluster has {free} free {r} for the {n} they hold
pub(super) fn rest_cluster_has_free_they(free: &impl Display, r: &impl Display, n: &impl Display) -> Said {
    REST_CLUSTER_HAS_FREE_THEY.say(&[("free", &Said::text(free)), ("r", &Said::text(r)), ("n", &Said::text(n))])
}

const REST_CLUSTER_HAS_ONLY_FREE: Sentence = Sentence {
    key: "down.rest_cluster_has_only_free",
    en: "the rest of the cluster has only {free} free {r} for the {n} they hold, so some will wait Pending",
    ja: "使っている {n} 個に対し、クラスターの残りの空きの {r} は {free} 個だけなので、一部は Pending で待ちます",
};

/// the rest of the cluster has only {free} free {r} for the {n} they hold, so some will…
pub(super) fn rest_cluster_has_only_free(free: &impl Display, r: &impl Display, n: &impl Display) -> Said {
    REST_CLUSTER_HAS_ONLY_FREE.say(&[("free", &Said::text(free)), ("r", &Said::text(r)), ("n", &Said::text(n))])
}

const NO_OTHER_NODE_HAS_FREE: Sentence = Sentence {
    key: "down.no_other_node_has_free",
    en: "no other node has a free {r}, so they will wait Pending until {name} returns",
    ja: "空きの {r} がある Node はほかにないため、{name} が戻るまで Pending で待ちます",
};

/// no other node has a free {r}, so they will wait Pending until {name} returns
pub(super) fn no_other_node_has_free(r: &impl Display, name: &impl Display) -> Said {
    NO_OTHER_NODE_HAS_FREE.say(&[("r", &Said::text(r)), ("name", &Said::text(name))])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    HAS_NOT_REPORTED_SINCE,
    NOT_READY_SINCE_BECAUSE,
    NOT_READY_SINCE_NO_REASON,
    GPU_UNIT_OUT_REACH_UNTIL,
    THEY_ALREADY_TERMINATING_KUBERNETES_EVICTED,
    KUBERNETES_EVICTS_THEM_AT_TAINT,
    ALREADY_TERMINATING_REST_EVICTED_AT,
    THEY_TOLERATE_NODE_TAINT_WITHOUT,
    ALREADY_TERMINATING,
    REST_CLUSTER_HAS_FREE_THEY,
    REST_CLUSTER_HAS_ONLY_FREE,
    NO_OTHER_NODE_HAS_FREE,
];
