//! What gpu-held-by-terminating-pod says (a pod being deleted past its grace period still holds a
//! GPU unit, and why), in English and Japanese: one entry per sentence, its placeholders its
//! parameters (`: Said` where each language has its own words). `terminating.rs` decides which
//! applies.

gpudash_model::sentences! { "terminating";
    /// its node {node_name} is NotReady, so no kubelet confirms that its containers stopped:…
    node_notready_so_no_kubelet(node_name, ns, pn) {
        en: "its node {node_name} is NotReady, so no kubelet confirms that its containers stopped: bring the node back; if it is gone for good, delete \
        the pod with kubectl delete pod -n {ns} {pn} --grace-period=0 --force (only when the node is surely off — its GPU might still be in \
        use)",
        ja: "Node {node_name} が NotReady のため、コンテナの停止を確認する kubelet がいません。Node を戻してください。恒久的に失われた場合は kubectl delete pod -n {ns} {pn} --grace-period=0 \
        --force で削除します（Node が確実に停止している場合のみ — GPU がまだ使われているかもしれません）",
    }
    /// finalizers hold it ({f}): the controller that owns them must finish its work; if that…
    finalizers_hold_controller_owns_them(f: Said, ns, pn) {
        en: "finalizers hold it ({f}): the controller that owns them must finish its work; if that controller is gone, remove them with kubectl patch pod \
        -n {ns} {pn} --type=merge -p '{{\"metadata\":{{\"finalizers\":null}}}}'",
        ja: "finalizer \
        が削除を止めています（{f}）。それを持つコントローラーが処理を終える必要があります。コントローラーがもうない場合は kubectl patch pod -n {ns} {pn} --type=merge -p \
        '{{\"metadata\":{{\"finalizers\":null}}}}' で外してください",
    }
    /// the kubelet on {node_name} has not finished stopping its containers: check the contai…
    kubelet_has_not_finished_stopping(node_name) {
        en: "the kubelet on {node_name} has not finished stopping its containers: check the container runtime and the kubelet's log there",
        ja: "{node_name} \
        の kubelet がコンテナの停止を終えていません。そこのコンテナランタイムと kubelet のログを確認してください",
    }
    /// Terminating since {since_s} and {mins} min past its {grace} s grace period, still hol…
    terminating_since_min_past_grace(since_s, mins, grace, cause: Said) {
        en: "Terminating since {since_s} and {mins} min past its {grace} s grace period, still holding a GPU \
                that a waiting pod needs: {cause}.",
        ja: "{since_s} から終了処理中で、猶予 {grace} 秒を {mins} 分過ぎても、\
                待っている Pod が必要とする GPU を持ったままです：{cause}。",
    }
}
