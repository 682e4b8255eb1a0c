//! What `gpu-rollout-deadlock` says, and what its waiting pod is told, in English and
//! Japanese: one function per sentence, its parameters named. `rollout.rs` finds the
//! deadlock and picks the sentences; the words are here.

use app::i18n::Said;
use app::say;

/// Who the diagnosis is about: the workload, its waiting new pod and what it waits for.
pub(super) struct Who<'a> {
    pub(super) ns: &'a str,
    pub(super) d: &'a str,
    pub(super) pod: &'a str,
    pub(super) res: &'a str,
    pub(super) want: u64,
}

/// The waiting pod of a Deployment's rolling update, told why.
pub(super) fn waiting_deployment(want: u64, res: &str, olds: Said, workload: &str) -> Said {
    say!("Waiting for {want} {res} that the old pods of its own Deployment hold \
        ({olds}): the rolling update of {workload} starts this new pod before it takes an old one down, \
        and there is no other unit — it will not finish by itself; see gpu-rollout-deadlock for the fix \
        (strategy Recreate, or maxSurge 0 with maxUnavailable 1). Scaling down or adding replicas will \
        not help.",
        "自分の Deployment の古い Pod（{olds}）が持つ {res} を {want} 個待っています。\
        {workload} のローリングアップデートは古い Pod を止める前にこの新しい \
        Pod を起動し、ほかにユニットがありません — \
        このままでは終わりません。直し方は gpu-rollout-deadlock を参照（strategy \
        を Recreate に、または maxSurge 0・maxUnavailable 1）。\
        スケールダウンやレプリカ追加では解決しません。"; olds)
}

/// The waiting pod of a DaemonSet's surging update on `node`, told why.
pub(super) fn waiting_daemonset(want: u64, res: &str, node: &str, olds: Said, workload: &str) -> Said {
    say!("Waiting for {want} {res} on {node} that the old pod of its own \
        DaemonSet holds there ({olds}): the update of {workload} surges (maxSurge) — it starts this new \
        pod on the node before it deletes the old one — and there is no other unit; it will not finish \
        by itself. See gpu-rollout-deadlock for the fix (maxSurge 0 with maxUnavailable 1).",
        "{node} で自分の DaemonSet の古い Pod（{olds}）が持つ {res} を {want} 個待っています。\
        {workload} の更新は maxSurge で、古い Pod を削除する前にこの Node \
        で新しい Pod を起動し、ほかにユニットがありません — このままでは終わりません。\
        直し方は gpu-rollout-deadlock を参照（maxSurge 0・maxUnavailable 1）。"; olds)
}

/// `, revision 3` after the new ReplicaSet's name.
pub(super) fn revision(r: &str) -> Said {
    say!(", revision {r}", "、リビジョン {r}")
}

/// A Deployment's strategy as written (`sw`, `uw`) and as rounded (`sv`, `uv`) for `of`.
pub(super) fn deployment_strategy(sw: &str, sv: i64, uw: &str, uv: i64, of: i64) -> Said {
    say!(
        " Its strategy is RollingUpdate with maxSurge {sw} → {sv} and maxUnavailable {uw} → \
        {uv} for {of} replica(s) (surge rounds up, unavailable rounds down): the controller \
        starts new pods first and takes no old pod down before a new one is ready.",
        "strategy は RollingUpdate で、{of} レプリカに対し maxSurge {sw} → {sv}、\
        maxUnavailable {uw} → {uv}（surge は切り上げ、unavailable は切り捨て）\
        です。コントローラーは先に新しい Pod を起動し、新しい Pod が Ready \
        になるまで古い Pod を止めません。"
    )
}

/// The strategy as the new ReplicaSet's annotations give it (`desired` may grow to `max`).
pub(super) fn replicaset_surge(desired: i64, max: i64, s: i64) -> Said {
    say!(
        " The ReplicaSet says {desired} replica(s) may grow to {max} (maxSurge {s}); \
        maxUnavailable, 25 % by default, rounds down to 0 for so few replicas, so no old pod \
        is taken down before the new one is ready.",
        "ReplicaSet によれば {desired} レプリカが {max} まで増えられます（maxSurge {s}）\
        。maxUnavailable（既定 25 %）はこの少ないレプリカ数では 0 \
        に切り捨てられるため、新しい Pod が Ready になるまで古い Pod \
        は止められません。"
    )
}

/// The strategy when nothing says it.
pub(super) fn surges_first() -> Said {
    say!(
        " The rolling update surges first and takes no old pod down before the new one is ready.",
        "ローリングアップデートはまず Pod を増やし、新しい Pod が Ready になるまで古い Pod を止めません。"
    )
}

/// The progress deadline (`deadline_s`), passed at `t`.
pub(super) fn deadline_passed(deadline_s: i64, t: &str) -> Said {
    say!(
        " It passed its progress deadline ({deadline_s} s) at {t}: the Deployment reports \
        ProgressDeadlineExceeded and still waits.",
        "進行期限（{deadline_s} 秒）を {t} に過ぎ、Deployment は \
        ProgressDeadlineExceeded になりましたが、待ち続けます。"
    )
}

/// The progress deadline (`deadline_s`), not passed yet.
pub(super) fn deadline_ahead(deadline_s: i64) -> Said {
    say!(
        " After its progress deadline ({deadline_s} s) the Deployment reports \
        ProgressDeadlineExceeded and still waits.",
        "進行期限（{deadline_s} 秒）を過ぎると Deployment は \
        ProgressDeadlineExceeded になりますが、待ち続けます。"
    )
}

/// The progress deadline when the Deployment is not known.
pub(super) fn deadline_default() -> Said {
    say!(
        " After the progress deadline (spec.progressDeadlineSeconds, 600 s by default) the \
        Deployment reports ProgressDeadlineExceeded and still waits.",
        "進行期限（spec.progressDeadlineSeconds、既定 600 秒）\
        を過ぎると Deployment は ProgressDeadlineExceeded になりますが、\
        待ち続けます。"
    )
}

/// How long the new pod has waited (`m` minutes), then `then`.
pub(super) fn waited(m: i64, then: Said) -> Said {
    say!(" It has waited {m} min.{then}", "{m} 分待っています。{then}"; then)
}

/// `gpu-rollout-deadlock` on a Deployment, with the fix.
pub(super) fn deployment_stuck(
    who: &Who<'_>,
    new_rs: &str,
    revision: Said,
    olds: Said,
    old_rs: Said,
    surge: Said,
    waited: Said,
) -> Said {
    let Who { ns, d, pod, res, want } = who;
    say!("The rollout of {ns}/{d} cannot finish: its new pod {pod} (ReplicaSet {new_rs}{revision}) \
        waits for {want} {res} that its old pods {olds} (ReplicaSet {old_rs}) hold on every node it \
        could use.{surge}{waited} For a model that holds a whole GPU, replace the old pod instead of \
        surging: kubectl patch deployment -n {ns} {d} -p \
        '{{\"spec\":{{\"strategy\":{{\"type\":\"Recreate\",\"rollingUpdate\":null}}}}}}' — or keep \
        rolling updates but take one old pod down first: kubectl patch deployment -n {ns} {d} -p \
        '{{\"spec\":{{\"strategy\":{{\"rollingUpdate\":{{\"maxSurge\":0,\"maxUnavailable\":1}}}}}}}}'.",
        "{ns}/{d} のロールアウトは終わりません。新しい Pod {pod}（ReplicaSet \
        {new_rs}{revision}）が {res} を {want} 個待っていますが、行けるすべての Node \
        でそれを古い Pod {olds}（ReplicaSet {old_rs}）が持っています。{surge}{waited}GPU \
        を丸ごと持つモデルでは増やさずに置き換えてください：kubectl patch \
        deployment -n {ns} {d} -p \
        '{{\"spec\":{{\"strategy\":{{\"type\":\"Recreate\",\"rollingUpdate\":null}}}}}}' — \
        ローリングアップデートのままにするなら先に古い Pod を1つ止めます：\
        kubectl patch deployment -n {ns} {d} -p \
        '{{\"spec\":{{\"strategy\":{{\"rollingUpdate\":{{\"maxSurge\":0,\"maxUnavailable\":1}}}}}}}}'。";
        olds, old_rs, revision, surge, waited)
}

/// A DaemonSet's strategy as written (`sw`) and as rounded (`sv`) for `of` nodes.
pub(super) fn daemonset_strategy(sw: &str, sv: i64, of: i64) -> Said {
    say!(
        " Its updateStrategy is RollingUpdate with maxSurge {sw} → {sv} of {of} node(s): the \
        controller starts the new pod on a node before it deletes the old one there.",
        "updateStrategy は RollingUpdate で、{of} 個の Node に対し maxSurge {sw} → {sv} \
        です。コントローラーは Node で新しい Pod を起動してから古い Pod を削除します。"
    )
}

/// A DaemonSet's strategy when nothing says it.
pub(super) fn daemonset_surges() -> Said {
    say!(
        " The update surges: the controller starts the new pod on a node before it deletes the \
        old one there.",
        "更新は surge します。コントローラーは Node で新しい Pod を起動してから古い Pod を削除します。"
    )
}

/// How long the new pod has waited (`m` minutes).
pub(super) fn waited_min(m: i64) -> Said {
    say!(" It has waited {m} min.", "{m} 分待っています。")
}

/// `gpu-rollout-deadlock` on a DaemonSet on `node`, with the fix.
pub(super) fn daemonset_stuck(who: &Who<'_>, node: &str, olds: Said, surge: Said, waited: Said) -> Said {
    let Who { ns, d, pod, res, want } = who;
    say!("The update of DaemonSet {ns}/{d} cannot finish on {node}: its new pod {pod} waits for {want} \
        {res} that its old pod {olds} holds there, and the node has no other unit.{surge}{waited} For \
        a DaemonSet whose pods hold a GPU, delete the old pod first: kubectl patch daemonset -n {ns} \
        {d} -p '{{\"spec\":{{\"updateStrategy\":{{\"rollingUpdate\":{{\"maxSurge\":0,\"maxUnavailable\
        \":1}}}}}}}}'.",
        "DaemonSet {ns}/{d} の更新は {node} で終わりません。新しい Pod {pod} が {res} を \
        {want} 個待っていますが、そこでは古い Pod {olds} がそれを持ち、Node \
        にほかのユニットがありません。{surge}{waited}GPU を持つ DaemonSet \
        では先に古い Pod を削除してください：kubectl patch daemonset -n {ns} {d} -p \
        '{{\"spec\":{{\"updateStrategy\":{{\"rollingUpdate\":{{\"maxSurge\":0,\"maxUnavailable\
        \":1}}}}}}}}'。"; olds, surge, waited)
}
