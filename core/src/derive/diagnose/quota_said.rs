//! What gpu-quota-exhausted says (a namespace's ResourceQuota keeps a workload from its pods), in
//! English and Japanese: one function per sentence, its parameters named. `quota.rs` decides
//! which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const HELD: Sentence = Sentence { key: "quota.held", en: " (held by {who})", ja: "（使用中：{who}）" };

///  (held by {who})
pub(super) fn held(who: &Said) -> Said {
    HELD.say(&[("who", who)])
}

const CLUSTER_HAS_FREE_ONLY_QUOTA: Sentence = Sentence {
    key: "quota.cluster_has_free_only_quota",
    en: "The cluster has {free} free {res}: only the quota stands in the way — raise the quota (kubectl -n {ns} edit resourcequota {qn}), free a \
        replica in {ns}, or move the workload to a namespace with room.",
    ja: "クラスターには空きの {res} が {free} 個あり、妨げているのはクォータだけです — クォータを上げる（kubectl -n {ns} \
        edit resourcequota {qn}）、{ns} でレプリカを空ける、または余裕のある namespace にワークロードを移してください。",
};

/// The cluster has {free} free {res}: only the quota stands in the way — raise the quota…
pub(super) fn cluster_has_free_only_quota(
    free: &impl Display,
    res: &impl Display,
    ns: &impl Display,
    qn: &impl Display,
) -> Said {
    CLUSTER_HAS_FREE_ONLY_QUOTA.say(&[
        ("free", &Said::text(free)),
        ("res", &Said::text(res)),
        ("ns", &Said::text(ns)),
        ("qn", &Said::text(qn)),
    ])
}

const CLUSTER_HAS_ONLY_FREE_FEWER: Sentence = Sentence {
    key: "quota.cluster_has_only_free_fewer",
    en: "The cluster has only {free} free {res}, fewer than one pod asks — free a replica in {ns}, or add GPU capacity and raise the \
        quota.",
    ja: "クラスターの空きの {res} は {free} 個だけで、1つの Pod が求める数に足りません — {ns} でレプリカを空けるか、GPU を増やしてクォータを上げてください。",
};

/// The cluster has only {free} free {res}, fewer than one pod asks — free a replica in {…
pub(super) fn cluster_has_only_free_fewer(free: &impl Display, res: &impl Display, ns: &impl Display) -> Said {
    CLUSTER_HAS_ONLY_FREE_FEWER.say(&[("free", &Said::text(free)), ("res", &Said::text(res)), ("ns", &Said::text(ns))])
}

const CLUSTER_HAS_NO_FREE_EITHER: Sentence = Sentence {
    key: "quota.cluster_has_no_free_either",
    en: "The cluster has no free {res} either: the quota and the cluster are both full — free a replica in {ns}, or add GPU capacity and raise the \
        quota.",
    ja: "クラスターにも空きの {res} がありません。クォータもクラスターも満杯です — {ns} でレプリカを空けるか、GPU を増やしてクォータを上げてください。",
};

/// The cluster has no free {res} either: the quota and the cluster are both full — free…
pub(super) fn cluster_has_no_free_either(res: &impl Display, ns: &impl Display) -> Said {
    CLUSTER_HAS_NO_FREE_EITHER.say(&[("res", &Said::text(res)), ("ns", &Said::text(ns))])
}

const RAISE_QUOTA_KUBECTL_N_EDIT: Sentence = Sentence {
    key: "quota.raise_quota_kubectl_n_edit",
    en: "Raise the quota (kubectl -n {ns} edit resourcequota {qn}) or free a device of {res} in {ns}.",
    ja: "クォータを上げる（kubectl -n {ns} edit resourcequota {qn}）か、{ns} で {res} のデバイスを空けてください。",
};

/// Raise the quota (kubectl -n {ns} edit resourcequota {qn}) or free a device of {res} i…
pub(super) fn raise_quota_kubectl_n_edit(ns: &impl Display, qn: &impl Display, res: &impl Display) -> Said {
    RAISE_QUOTA_KUBECTL_N_EDIT.say(&[("ns", &Said::text(ns)), ("qn", &Said::text(qn)), ("res", &Said::text(res))])
}

const SCOPED: Sentence = Sentence { key: "quota.scoped", en: " (scoped: {sc})", ja: "（スコープ：{sc}）" };

///  (scoped: {sc})
pub(super) fn scoped(sc: &impl Display) -> Said {
    SCOPED.say(&[("sc", &Said::text(sc))])
}

const CANNOT_CREATE_PODS_RESOURCEQUOTA_ALLOWS: Sentence = Sentence {
    key: "quota.cannot_create_pods_resourcequota_allows",
    en: "{kind} {ns}/{name} cannot create its pods: ResourceQuota {qn}{scoped} allows {ns} {hard} of {key} and {used} are in use{holding}; each pod \
        asks {asked}. {cluster}",
    ja: "{kind} {ns}/{name} は Pod を作成できません。ResourceQuota {qn}{scoped} が {ns} に許す {key} は {hard} で、{used} が使用中です{holding}。各 \
        Pod は {asked} を求めます。{cluster}",
};

/// {kind} {ns}/{name} cannot create its pods: ResourceQuota {qn}{scoped} allows {ns} {ha…
pub(super) fn cannot_create_pods_resourcequota_allows(
    kind: &impl Display,
    ns: &impl Display,
    name: &impl Display,
    qn: &impl Display,
    scoped: &Said,
    hard: &impl Display,
    key: &impl Display,
    used: &impl Display,
    holding: &Said,
    asked: &impl Display,
    cluster: &Said,
) -> Said {
    CANNOT_CREATE_PODS_RESOURCEQUOTA_ALLOWS.say(&[
        ("kind", &Said::text(kind)),
        ("ns", &Said::text(ns)),
        ("name", &Said::text(name)),
        ("qn", &Said::text(qn)),
        ("scoped", scoped),
        ("hard", &Said::text(hard)),
        ("key", &Said::text(key)),
        ("used", &Said::text(used)),
        ("holding", holding),
        ("asked", &Said::text(asked)),
        ("cluster", cluster),
    ])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    HELD,
    CLUSTER_HAS_FREE_ONLY_QUOTA,
    CLUSTER_HAS_ONLY_FREE_FEWER,
    CLUSTER_HAS_NO_FREE_EITHER,
    RAISE_QUOTA_KUBECTL_N_EDIT,
    SCOPED,
    CANNOT_CREATE_PODS_RESOURCEQUOTA_ALLOWS,
];
