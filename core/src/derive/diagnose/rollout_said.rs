//! What `gpu-rollout-deadlock` says, and what its waiting pod is told, in English and
//! Japanese: one entry per sentence, its placeholders its parameters (`: Said` where each
//! language has its own words). `rollout.rs` finds the deadlock and picks the sentences.

gpudash_model::sentences! { "rollout";
    /// The waiting pod of a Deployment's rolling update, told why.
    waiting_deployment(want, res, olds: Said, workload) {
        en: "Waiting for {want} {res} that the old pods of its own Deployment hold \
        ({olds}): the rolling update of {workload} starts this new pod before it takes an old one down, \
        and there is no other unit — it will not finish by itself; see gpu-rollout-deadlock for the fix \
        (strategy Recreate, or maxSurge 0 with maxUnavailable 1). Scaling down or adding replicas will \
        not help.",
        ja: "自分の Deployment の古い Pod（{olds}）が持つ {res} を {want} 個待っています。\
        {workload} のローリングアップデートは古い Pod を止める前にこの新しい \
        Pod を起動し、ほかにユニットがありません — \
        このままでは終わりません。直し方は gpu-rollout-deadlock を参照（strategy \
        を Recreate に、または maxSurge 0・maxUnavailable 1）。\
        スケールダウンやレプリカ追加では解決しません。",
    }
    /// The waiting pod of a DaemonSet's surging update on `node`, told why.
    waiting_daemonset(want, res, node, olds: Said, workload) {
        en: "Waiting for {want} {res} on {node} that the old pod of its own \
        DaemonSet holds there ({olds}): the update of {workload} surges (maxSurge) — it starts this new \
        pod on the node before it deletes the old one — and there is no other unit; it will not finish \
        by itself. See gpu-rollout-deadlock for the fix (maxSurge 0 with maxUnavailable 1).",
        ja: "{node} で自分の DaemonSet の古い Pod（{olds}）が持つ {res} を {want} 個待っています。\
        {workload} の更新は maxSurge で、古い Pod を削除する前にこの Node \
        で新しい Pod を起動し、ほかにユニットがありません — このままでは終わりません。\
        直し方は gpu-rollout-deadlock を参照（maxSurge 0・maxUnavailable 1）。",
    }
    /// `, revision 3` after the new ReplicaSet's name.
    revision(r) {
        en: ", revision {r}",
        ja: "、リビジョン {r}",
    }
    /// A Deployment's strategy as written (`sw`, `uw`) and as rounded (`sv`, `uv`) for `of`.
    deployment_strategy(sw, sv, uw, uv, of) {
        en: " Its strategy is RollingUpdate with maxSurge {sw} → {sv} and maxUnavailable {uw} → \
        {uv} for {of} replica(s) (surge rounds up, unavailable rounds down): the controller \
        starts new pods first and takes no old pod down before a new one is ready.",
        ja: "strategy は RollingUpdate で、{of} レプリカに対し maxSurge {sw} → {sv}、\
        maxUnavailable {uw} → {uv}（surge は切り上げ、unavailable は切り捨て）\
        です。コントローラーは先に新しい Pod を起動し、新しい Pod が Ready \
        になるまで古い Pod を止めません。",
    }
    /// The strategy as the new ReplicaSet's annotations give it (`desired` may grow to `max`).
    replicaset_surge(desired, max, s) {
        en: " The ReplicaSet says {desired} replica(s) may grow to {max} (maxSurge {s}); \
        maxUnavailable, 25 % by default, rounds down to 0 for so few replicas, so no old pod \
        is taken down before the new one is ready.",
        ja: "ReplicaSet によれば {desired} レプリカが {max} まで増えられます（maxSurge {s}）\
        。maxUnavailable（既定 25 %）はこの少ないレプリカ数では 0 \
        に切り捨てられるため、新しい Pod が Ready になるまで古い Pod \
        は止められません。",
    }
    /// The strategy when nothing says it.
    surges_first() {
        en: " The rolling update surges first and takes no old pod down before the new one is ready.",
        ja: "ローリングアップデートはまず Pod を増やし、新しい Pod が Ready になるまで古い Pod を止めません。",
    }
    /// The progress deadline (`deadline_s`), passed at `t`.
    deadline_passed(deadline_s, t) {
        en: " It passed its progress deadline ({deadline_s} s) at {t}: the Deployment reports \
        ProgressDeadlineExceeded and still waits.",
        ja: "進行期限（{deadline_s} 秒）を {t} に過ぎ、Deployment は \
        ProgressDeadlineExceeded になりましたが、待ち続けます。",
    }
    /// The progress deadline (`deadline_s`), not passed yet.
    deadline_ahead(deadline_s) {
        en: " After its progress deadline ({deadline_s} s) the Deployment reports \
        ProgressDeadlineExceeded and still waits.",
        ja: "進行期限（{deadline_s} 秒）を過ぎると Deployment は \
        ProgressDeadlineExceeded になりますが、待ち続けます。",
    }
    /// The progress deadline when the Deployment is not known.
    deadline_default() {
        en: " After the progress deadline (spec.progressDeadlineSeconds, 600 s by default) the \
        Deployment reports ProgressDeadlineExceeded and still waits.",
        ja: "進行期限（spec.progressDeadlineSeconds、既定 600 秒）\
        を過ぎると Deployment は ProgressDeadlineExceeded になりますが、\
        待ち続けます。",
    }
    /// How long the new pod has waited (`m` minutes), then `then`.
    waited(m, then: Said) {
        en: " It has waited {m} min.{then}",
        ja: "{m} 分待っています。{then}",
    }
    /// `gpu-rollout-deadlock` on a Deployment, with the fix.
    deployment_stuck(ns, d, pod, new_rs, revision: Said, want, res, olds: Said, old_rs: Said, surge: Said, waited: Said) {
        en: "The rollout of {ns}/{d} cannot finish: its new pod {pod} (ReplicaSet {new_rs}{revision}) \
        waits for {want} {res} that its old pods {olds} (ReplicaSet {old_rs}) hold on every node it \
        could use.{surge}{waited} For a model that holds a whole GPU, replace the old pod instead of \
        surging: kubectl patch deployment -n {ns} {d} -p \
        '{{\"spec\":{{\"strategy\":{{\"type\":\"Recreate\",\"rollingUpdate\":null}}}}}}' — or keep \
        rolling updates but take one old pod down first: kubectl patch deployment -n {ns} {d} -p \
        '{{\"spec\":{{\"strategy\":{{\"rollingUpdate\":{{\"maxSurge\":0,\"maxUnavailable\":1}}}}}}}}'.",
        ja: "{ns}/{d} のロールアウトは終わりません。新しい Pod {pod}（ReplicaSet \
        {new_rs}{revision}）が {res} を {want} 個待っていますが、行けるすべての Node \
        でそれを古い Pod {olds}（ReplicaSet {old_rs}）が持っています。{surge}{waited}GPU \
        を丸ごと持つモデルでは増やさずに置き換えてください：kubectl patch \
        deployment -n {ns} {d} -p \
        '{{\"spec\":{{\"strategy\":{{\"type\":\"Recreate\",\"rollingUpdate\":null}}}}}}' — \
        ローリングアップデートのままにするなら先に古い Pod を1つ止めます：\
        kubectl patch deployment -n {ns} {d} -p \
        '{{\"spec\":{{\"strategy\":{{\"rollingUpdate\":{{\"maxSurge\":0,\"maxUnavailable\":1}}}}}}}}'。",
    }
    /// A DaemonSet's strategy as written (`sw`) and as rounded (`sv`) for `of` nodes.
    daemonset_strategy(sw, sv, of) {
        en: " Its updateStrategy is RollingUpdate with maxSurge {sw} → {sv} of {of} node(s): the \
        controller starts the new pod on a node before it deletes the old one there.",
        ja: "updateStrategy は RollingUpdate で、{of} 個の Node に対し maxSurge {sw} → {sv} \
        です。コントローラーは Node で新しい Pod を起動してから古い Pod を削除します。",
    }
    /// A DaemonSet's strategy when nothing says it.
    daemonset_surges() {
        en: " The update surges: the controller starts the new pod on a node before it deletes the \
        old one there.",
        ja: "更新は surge します。コントローラーは Node で新しい Pod を起動してから古い Pod を削除します。",
    }
    /// How long the new pod has waited (`m` minutes).
    waited_min(m) {
        en: " It has waited {m} min.",
        ja: "{m} 分待っています。",
    }
    /// `gpu-rollout-deadlock` on a DaemonSet on `node`, with the fix.
    daemonset_stuck(ns, d, node, pod, want, res, olds: Said, surge: Said, waited: Said) {
        en: "The update of DaemonSet {ns}/{d} cannot finish on {node}: its new pod {pod} waits for {want} \
        {res} that its old pod {olds} holds there, and the node has no other unit.{surge}{waited} For \
        a DaemonSet whose pods hold a GPU, delete the old pod first: kubectl patch daemonset -n {ns} \
        {d} -p '{{\"spec\":{{\"updateStrategy\":{{\"rollingUpdate\":{{\"maxSurge\":0,\"maxUnavailable\
        \":1}}}}}}}}'.",
        ja: "DaemonSet {ns}/{d} の更新は {node} で終わりません。新しい Pod {pod} が {res} を \
        {want} 個待っていますが、そこでは古い Pod {olds} がそれを持ち、Node \
        にほかのユニットがありません。{surge}{waited}GPU を持つ DaemonSet \
        では先に古い Pod を削除してください：kubectl patch daemonset -n {ns} {d} -p \
        '{{\"spec\":{{\"updateStrategy\":{{\"rollingUpdate\":{{\"maxSurge\":0,\"maxUnavailable\
        \":1}}}}}}}}'。",
    }
}
