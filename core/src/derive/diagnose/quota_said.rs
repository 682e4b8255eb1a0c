//! What gpu-quota-exhausted says (a namespace's ResourceQuota keeps a workload from its pods), in
//! English and Japanese: one entry per sentence, its placeholders its parameters (`: Said` where
//! each language has its own words). `quota.rs` decides which applies.

gpudash_model::sentences! { "quota";
    ///  (held by {who})
    held(who: Said) {
        en: " (held by {who})",
        ja: "（使用中：{who}）",
    }
    /// The cluster has {free} free {res}: only the quota stands in the way — raise the quota…
    cluster_has_free_only_quota(free, res, ns, qn) {
        en: "The cluster has {free} free {res}: only the quota stands in the way — raise the quota (kubectl -n {ns} edit resourcequota {qn}), free a \
        replica in {ns}, or move the workload to a namespace with room.",
        ja: "クラスターには空きの {res} が {free} 個あり、妨げているのはクォータだけです — クォータを上げる（kubectl -n {ns} \
        edit resourcequota {qn}）、{ns} でレプリカを空ける、または余裕のある namespace にワークロードを移してください。",
    }
    /// The cluster has only {free} free {res}, fewer than one pod asks — free a replica in {…
    cluster_has_only_free_fewer(free, res, ns) {
        en: "The cluster has only {free} free {res}, fewer than one pod asks — free a replica in {ns}, or add GPU capacity and raise the \
        quota.",
        ja: "クラスターの空きの {res} は {free} 個だけで、1つの Pod が求める数に足りません — {ns} でレプリカを空けるか、GPU を増やしてクォータを上げてください。",
    }
    /// The cluster has no free {res} either: the quota and the cluster are both full — free…
    cluster_has_no_free_either(res, ns) {
        en: "The cluster has no free {res} either: the quota and the cluster are both full — free a replica in {ns}, or add GPU capacity and raise the \
        quota.",
        ja: "クラスターにも空きの {res} がありません。クォータもクラスターも満杯です — {ns} でレプリカを空けるか、GPU を増やしてクォータを上げてください。",
    }
    /// Raise the quota (kubectl -n {ns} edit resourcequota {qn}) or free a device of {res} i…
    raise_quota_kubectl_n_edit(ns, qn, res) {
        en: "Raise the quota (kubectl -n {ns} edit resourcequota {qn}) or free a device of {res} in {ns}.",
        ja: "クォータを上げる（kubectl -n {ns} edit resourcequota {qn}）か、{ns} で {res} のデバイスを空けてください。",
    }
    ///  (scoped: {sc})
    scoped(sc) {
        en: " (scoped: {sc})",
        ja: "（スコープ：{sc}）",
    }
    /// {kind} {ns}/{name} cannot create its pods: ResourceQuota {qn}{scoped} allows {ns} {ha…
    cannot_create_pods_resourcequota_allows(kind, ns, name, qn, scoped: Said, hard, key, used, holding: Said, asked, cluster: Said) {
        en: "{kind} {ns}/{name} cannot create its pods: ResourceQuota {qn}{scoped} allows {ns} {hard} of {key} and {used} are in use{holding}; each pod \
        asks {asked}. {cluster}",
        ja: "{kind} {ns}/{name} は Pod を作成できません。ResourceQuota {qn}{scoped} が {ns} に許す {key} は {hard} で、{used} が使用中です{holding}。各 \
        Pod は {asked} を求めます。{cluster}",
    }
}
