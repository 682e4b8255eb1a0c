//! What gpu-held-by-terminating-pod says (a pod being deleted past its grace period still holds
//! a GPU unit, and why), in English and Japanese: one function per sentence, its parameters
//! named. `terminating.rs` decides which applies.

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const NODE_NOTREADY_SO_NO_KUBELET: Sentence = Sentence {
    key: "terminating.node_notready_so_no_kubelet",
    en: "its node {node_name} is NotReady, so no kubelet confirms that its containers stopped: bring the node back; if it is gone for good, delete \
        the pod with kubectl delete pod -n {ns} {pn} --grace-period=0 --force (only when the node is surely off — its GPU might still be in \
        use)",
    ja: "Node {node_name} が NotReady のため、コンテナの停止を確認する kubelet がいません。Node を戻してください。恒久的に失われた場合は kubectl delete pod -n {ns} {pn} --grace-period=0 \
        --force で削除します（Node が確実に停止している場合のみ — GPU がまだ使われているかもしれません）",
};

/// its node {node_name} is NotReady, so no kubelet confirms that its containers stopped:…
pub(super) fn node_notready_so_no_kubelet(node_name: &impl Display, ns: &impl Display, pn: &impl Display) -> Said {
    NODE_NOTREADY_SO_NO_KUBELET.say(&[
        ("node_name", &Said::text(node_name)),
        ("ns", &Said::text(ns)),
        ("pn", &Said::text(pn)),
    ])
}

const FINALIZERS_HOLD_CONTROLLER_OWNS_THEM: Sentence = Sentence {
    key: "terminating.finalizers_hold_controller_owns_them",
    en: "finalizers hold it ({f}): the controller that owns them must finish its work; if that controller is gone, remove them with kubectl patch pod \
        -n {ns} {pn} --type=merge -p '{{\"metadata\":{{\"finalizers\":null}}}}'",
    ja: "finalizer \
        が削除を止めています（{f}）。それを持つコントローラーが処理を終える必要があります。コントローラーがもうない場合は kubectl patch pod -n {ns} {pn} --type=merge -p \
        '{{\"metadata\":{{\"finalizers\":null}}}}' で外してください",
};

/// finalizers hold it ({f}): the controller that owns them must finish its work; if that…
pub(super) fn finalizers_hold_controller_owns_them(f: &Said, ns: &impl Display, pn: &impl Display) -> Said {
    FINALIZERS_HOLD_CONTROLLER_OWNS_THEM.say(&[("f", f), ("ns", &Said::text(ns)), ("pn", &Said::text(pn))])
}

const KUBELET_HAS_NOT_FINISHED_STOPPING: Sentence = Sentence {
    key: "terminating.kubelet_has_not_finished_stopping",
    en: "the kubelet on {node_name} has not finished stopping its containers: check the container runtime and the kubelet's log there",
    ja: "{node_name} \
        の kubelet がコンテナの停止を終えていません。そこのコンテナランタイムと kubelet のログを確認してください",
};

/// the kubelet on {node_name} has not finished stopping its containers: check the contai…
pub(super) fn kubelet_has_not_finished_stopping(node_name: &impl Display) -> Said {
    KUBELET_HAS_NOT_FINISHED_STOPPING.say(&[("node_name", &Said::text(node_name))])
}

const TERMINATING_SINCE_MIN_PAST_GRACE: Sentence = Sentence {
    key: "terminating.terminating_since_min_past_grace",
    en: "Terminating since {since_s} and {mins} min past its {grace} s grace period, still holding a GPU \
                that a waiting pod needs: {cause}.",
    ja: "{since_s} から終了処理中で、猶予 {grace} 秒を {mins} 分過ぎても、\
                待っている Pod が必要とする GPU を持ったままです：{cause}。",
};

/// Terminating since {since_s} and {mins} min past its {grace} s grace period, still hol…
pub(super) fn terminating_since_min_past_grace(
    since_s: &impl Display,
    mins: &impl Display,
    grace: &impl Display,
    cause: &Said,
) -> Said {
    TERMINATING_SINCE_MIN_PAST_GRACE.say(&[
        ("since_s", &Said::text(since_s)),
        ("mins", &Said::text(mins)),
        ("grace", &Said::text(grace)),
        ("cause", cause),
    ])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    NODE_NOTREADY_SO_NO_KUBELET,
    FINALIZERS_HOLD_CONTROLLER_OWNS_THEM,
    KUBELET_HAS_NOT_FINISHED_STOPPING,
    TERMINATING_SINCE_MIN_PAST_GRACE,
];
