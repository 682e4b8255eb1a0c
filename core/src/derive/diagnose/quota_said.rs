//! What gpu-quota-exhausted says (a namespace's ResourceQuota keeps a workload from its pods), in
//! English and Japanese: one function per sentence, its parameters named. `quota.rs` decides
//! which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::Said;
use app::say;

///  (held by {who})
pub(super) fn held(who: &Said) -> Said {
    say!(" (held by {who})", "（使用中：{who}）"; who)
}

/// The cluster has {free} free {res}: only the quota stands in the way — raise the quota…
pub(super) fn cluster_has_free_only_quota(
    free: &impl Display,
    res: &impl Display,
    ns: &impl Display,
    qn: &impl Display,
) -> Said {
    say!("The cluster has {free} free {res}: only the quota stands in the way — raise the quota (kubectl -n {ns} edit resourcequota {qn}), free a \
        replica in {ns}, or move the workload to a namespace with room.", "クラスターには空きの {res} が {free} 個あり、妨げているのはクォータだけです — クォータを上げる（kubectl -n {ns} \
        edit resourcequota {qn}）、{ns} でレプリカを空ける、または余裕のある namespace にワークロードを移してください。")
}

/// The cluster has only {free} free {res}, fewer than one pod asks — free a replica in {…
pub(super) fn cluster_has_only_free_fewer(free: &impl Display, res: &impl Display, ns: &impl Display) -> Said {
    say!("The cluster has only {free} free {res}, fewer than one pod asks — free a replica in {ns}, or add GPU capacity and raise the \
        quota.", "クラスターの空きの {res} は {free} 個だけで、1つの Pod が求める数に足りません — {ns} でレプリカを空けるか、GPU を増やしてクォータを上げてください。")
}

/// The cluster has no free {res} either: the quota and the cluster are both full — free…
pub(super) fn cluster_has_no_free_either(res: &impl Display, ns: &impl Display) -> Said {
    say!("The cluster has no free {res} either: the quota and the cluster are both full — free a replica in {ns}, or add GPU capacity and raise the \
        quota.", "クラスターにも空きの {res} がありません。クォータもクラスターも満杯です — {ns} でレプリカを空けるか、GPU を増やしてクォータを上げてください。")
}

/// Raise the quota (kubectl -n {ns} edit resourcequota {qn}) or free a device of {res} i…
pub(super) fn raise_quota_kubectl_n_edit(ns: &impl Display, qn: &impl Display, res: &impl Display) -> Said {
    say!(
        "Raise the quota (kubectl -n {ns} edit resourcequota {qn}) or free a device of {res} in {ns}.",
        "クォータを上げる（kubectl -n {ns} edit resourcequota {qn}）か、{ns} で {res} のデバイスを空けてください。"
    )
}

///  (scoped: {sc})
pub(super) fn scoped(sc: &impl Display) -> Said {
    say!(" (scoped: {sc})", "（スコープ：{sc}）")
}

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
    say!("{kind} {ns}/{name} cannot create its pods: ResourceQuota {qn}{scoped} allows {ns} {hard} of {key} and {used} are in use{holding}; each pod \
        asks {asked}. {cluster}", "{kind} {ns}/{name} は Pod を作成できません。ResourceQuota {qn}{scoped} が {ns} に許す {key} は {hard} で、{used} が使用中です{holding}。各 \
        Pod は {asked} を求めます。{cluster}"; scoped, holding, cluster)
}
