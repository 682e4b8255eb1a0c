//! What `gpu-rollout-deadlock` says, and what its waiting pod is told, in English and
//! Japanese: one function per sentence, its parameters named. `rollout.rs` finds the
//! deadlock and picks the sentences; the words are here.

use gpudash_model::i18n::{Said, Sentence};

/// Who the diagnosis is about: the workload, its waiting new pod and what it waits for.
pub(super) struct Who<'a> {
    pub(super) ns: &'a str,
    pub(super) d: &'a str,
    pub(super) pod: &'a str,
    pub(super) res: &'a str,
    pub(super) want: u64,
}

const WAITING_DEPLOYMENT: Sentence = Sentence {
    key: "rollout.waiting_deployment",
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
};

/// The waiting pod of a Deployment's rolling update, told why.
pub(super) fn waiting_deployment(want: u64, res: &str, olds: Said, workload: &str) -> Said {
    WAITING_DEPLOYMENT.say(&[
        ("want", &Said::text(want)),
        ("res", &Said::text(res)),
        ("olds", &olds),
        ("workload", &Said::text(workload)),
    ])
}

const WAITING_DAEMONSET: Sentence = Sentence {
    key: "rollout.waiting_daemonset",
    en: "Waiting for {want} {res} on {node} that the old pod of its own \
        DaemonSet holds there ({olds}): the update of {workload} surges (maxSurge) — it starts this new \
        pod on the node before it deletes the old one — and there is no other unit; it will not finish \
        by itself. See gpu-rollout-deadlock for the fix (maxSurge 0 with maxUnavailable 1).",
    ja: "{node} で自分の DaemonSet の古い Pod（{olds}）が持つ {res} を {want} 個待っています。\
        {workload} の更新は maxSurge で、古い Pod を削除する前にこの Node \
        で新しい Pod を起動し、ほかにユニットがありません — このままでは終わりません。\
        直し方は gpu-rollout-deadlock を参照（maxSurge 0・maxUnavailable 1）。",
};

/// The waiting pod of a DaemonSet's surging update on `node`, told why.
pub(super) fn waiting_daemonset(want: u64, res: &str, node: &str, olds: Said, workload: &str) -> Said {
    WAITING_DAEMONSET.say(&[
        ("want", &Said::text(want)),
        ("res", &Said::text(res)),
        ("node", &Said::text(node)),
        ("olds", &olds),
        ("workload", &Said::text(workload)),
    ])
}

const REVISION: Sentence = Sentence { key: "rollout.revision", en: ", revision {r}", ja: "、リビジョン {r}" };

/// `, revision 3` after the new ReplicaSet's name.
pub(super) fn revision(r: &str) -> Said {
    REVISION.say(&[("r", &Said::text(r))])
}

const DEPLOYMENT_STRATEGY: Sentence = Sentence {
    key: "rollout.deployment_strategy",
    en: " Its strategy is RollingUpdate with maxSurge {sw} → {sv} and maxUnavailable {uw} → \
        {uv} for {of} replica(s) (surge rounds up, unavailable rounds down): the controller \
        starts new pods first and takes no old pod down before a new one is ready.",
    ja: "strategy は RollingUpdate で、{of} レプリカに対し maxSurge {sw} → {sv}、\
        maxUnavailable {uw} → {uv}（surge は切り上げ、unavailable は切り捨て）\
        です。コントローラーは先に新しい Pod を起動し、新しい Pod が Ready \
        になるまで古い Pod を止めません。",
};

/// A Deployment's strategy as written (`sw`, `uw`) and as rounded (`sv`, `uv`) for `of`.
pub(super) fn deployment_strategy(sw: &str, sv: i64, uw: &str, uv: i64, of: i64) -> Said {
    DEPLOYMENT_STRATEGY.say(&[
        ("sw", &Said::text(sw)),
        ("sv", &Said::text(sv)),
        ("uw", &Said::text(uw)),
        ("uv", &Said::text(uv)),
        ("of", &Said::text(of)),
    ])
}

const REPLICASET_SURGE: Sentence = Sentence {
    key: "rollout.replicaset_surge",
    en: " The ReplicaSet says {desired} replica(s) may grow to {max} (maxSurge {s}); \
        maxUnavailable, 25 % by default, rounds down to 0 for so few replicas, so no old pod \
        is taken down before the new one is ready.",
    ja: "ReplicaSet によれば {desired} レプリカが {max} まで増えられます（maxSurge {s}）\
        。maxUnavailable（既定 25 %）はこの少ないレプリカ数では 0 \
        に切り捨てられるため、新しい Pod が Ready になるまで古い Pod \
        は止められません。",
};

/// The strategy as the new ReplicaSet's annotations give it (`desired` may grow to `max`).
pub(super) fn replicaset_surge(desired: i64, max: i64, s: i64) -> Said {
    REPLICASET_SURGE.say(&[("desired", &Said::text(desired)), ("max", &Said::text(max)), ("s", &Said::text(s))])
}

const SURGES_FIRST: Sentence = Sentence {
    key: "rollout.surges_first",
    en: " The rolling update surges first and takes no old pod down before the new one is ready.",
    ja: "ローリングアップデートはまず Pod を増やし、新しい Pod が Ready になるまで古い Pod を止めません。",
};

/// The strategy when nothing says it.
pub(super) fn surges_first() -> Said {
    SURGES_FIRST.say(&[])
}

const DEADLINE_PASSED: Sentence = Sentence {
    key: "rollout.deadline_passed",
    en: " It passed its progress deadline ({deadline_s} s) at {t}: the Deployment reports \
        ProgressDeadlineExceeded and still waits.",
    ja: "進行期限（{deadline_s} 秒）を {t} に過ぎ、Deployment は \
        ProgressDeadlineExceeded になりましたが、待ち続けます。",
};

/// The progress deadline (`deadline_s`), passed at `t`.
pub(super) fn deadline_passed(deadline_s: i64, t: &str) -> Said {
    DEADLINE_PASSED.say(&[("deadline_s", &Said::text(deadline_s)), ("t", &Said::text(t))])
}

const DEADLINE_AHEAD: Sentence = Sentence {
    key: "rollout.deadline_ahead",
    en: " After its progress deadline ({deadline_s} s) the Deployment reports \
        ProgressDeadlineExceeded and still waits.",
    ja: "進行期限（{deadline_s} 秒）を過ぎると Deployment は \
        ProgressDeadlineExceeded になりますが、待ち続けます。",
};

/// The progress deadline (`deadline_s`), not passed yet.
pub(super) fn deadline_ahead(deadline_s: i64) -> Said {
    DEADLINE_AHEAD.say(&[("deadline_s", &Said::text(deadline_s))])
}

const DEADLINE_DEFAULT: Sentence = Sentence {
    key: "rollout.deadline_default",
    en: " After the progress deadline (spec.progressDeadlineSeconds, 600 s by default) the \
        Deployment reports ProgressDeadlineExceeded and still waits.",
    ja: "進行期限（spec.progressDeadlineSeconds、既定 600 秒）\
        を過ぎると Deployment は ProgressDeadlineExceeded になりますが、\
        待ち続けます。",
};

/// The progress deadline when the Deployment is not known.
pub(super) fn deadline_default() -> Said {
    DEADLINE_DEFAULT.say(&[])
}

const WAITED: Sentence =
    Sentence { key: "rollout.waited", en: " It has waited {m} min.{then}", ja: "{m} 分待っています。{then}" };

/// How long the new pod has waited (`m` minutes), then `then`.
pub(super) fn waited(m: i64, then: Said) -> Said {
    WAITED.say(&[("m", &Said::text(m)), ("then", &then)])
}

const DEPLOYMENT_STUCK: Sentence = Sentence {
    key: "rollout.deployment_stuck",
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
};

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
    DEPLOYMENT_STUCK.say(&[
        ("ns", &Said::text(ns)),
        ("d", &Said::text(d)),
        ("pod", &Said::text(pod)),
        ("new_rs", &Said::text(new_rs)),
        ("revision", &revision),
        ("want", &Said::text(want)),
        ("res", &Said::text(res)),
        ("olds", &olds),
        ("old_rs", &old_rs),
        ("surge", &surge),
        ("waited", &waited),
    ])
}

const DAEMONSET_STRATEGY: Sentence = Sentence {
    key: "rollout.daemonset_strategy",
    en: " Its updateStrategy is RollingUpdate with maxSurge {sw} → {sv} of {of} node(s): the \
        controller starts the new pod on a node before it deletes the old one there.",
    ja: "updateStrategy は RollingUpdate で、{of} 個の Node に対し maxSurge {sw} → {sv} \
        です。コントローラーは Node で新しい Pod を起動してから古い Pod を削除します。",
};

/// A DaemonSet's strategy as written (`sw`) and as rounded (`sv`) for `of` nodes.
pub(super) fn daemonset_strategy(sw: &str, sv: i64, of: i64) -> Said {
    DAEMONSET_STRATEGY.say(&[("sw", &Said::text(sw)), ("sv", &Said::text(sv)), ("of", &Said::text(of))])
}

const DAEMONSET_SURGES: Sentence = Sentence {
    key: "rollout.daemonset_surges",
    en: " The update surges: the controller starts the new pod on a node before it deletes the \
        old one there.",
    ja: "更新は surge します。コントローラーは Node で新しい Pod を起動してから古い Pod を削除します。",
};

/// A DaemonSet's strategy when nothing says it.
pub(super) fn daemonset_surges() -> Said {
    DAEMONSET_SURGES.say(&[])
}

const WAITED_MIN: Sentence =
    Sentence { key: "rollout.waited_min", en: " It has waited {m} min.", ja: "{m} 分待っています。" };

/// How long the new pod has waited (`m` minutes).
pub(super) fn waited_min(m: i64) -> Said {
    WAITED_MIN.say(&[("m", &Said::text(m))])
}

const DAEMONSET_STUCK: Sentence = Sentence {
    key: "rollout.daemonset_stuck",
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
};

/// `gpu-rollout-deadlock` on a DaemonSet on `node`, with the fix.
pub(super) fn daemonset_stuck(who: &Who<'_>, node: &str, olds: Said, surge: Said, waited: Said) -> Said {
    let Who { ns, d, pod, res, want } = who;
    DAEMONSET_STUCK.say(&[
        ("ns", &Said::text(ns)),
        ("d", &Said::text(d)),
        ("node", &Said::text(node)),
        ("pod", &Said::text(pod)),
        ("want", &Said::text(want)),
        ("res", &Said::text(res)),
        ("olds", &olds),
        ("surge", &surge),
        ("waited", &waited),
    ])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    WAITING_DEPLOYMENT,
    WAITING_DAEMONSET,
    REVISION,
    DEPLOYMENT_STRATEGY,
    REPLICASET_SURGE,
    SURGES_FIRST,
    DEADLINE_PASSED,
    DEADLINE_AHEAD,
    DEADLINE_DEFAULT,
    WAITED,
    DEPLOYMENT_STUCK,
    DAEMONSET_STRATEGY,
    DAEMONSET_SURGES,
    WAITED_MIN,
    DAEMONSET_STUCK,
];
