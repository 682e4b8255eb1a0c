//! What a Pending pod is told and what its diagnoses say (insufficient-gpu, insufficient-memory,
//! a GPU held past its grace period, a cordoned or dark node, time-slicing and MIG naming), in
//! English and Japanese: one function per sentence, its parameters named. `waiting.rs` decides
//! which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::Said;
use app::say;

/// Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: t…
pub(super) fn waiting_node_aimed_at_which(want: &impl Display, res: &impl Display, node: &impl Display) -> Said {
    say!("Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: the NVIDIA device plugin is missing or failing there \
        (see that node's device-plugin-missing diagnosis) — fix the plugin; freeing a GPU elsewhere will not help.", "対象の Node {node} で {res} を {want} \
        個待っていますが、{node} は1つも公開していません。そこで NVIDIA device plugin がないか失敗しています（その Node の device-plugin-missing を参照）— プラグインを直してください。ほかで GPU を空けても解決しません。")
}

/// no GPU node shows why (no node looks like a GPU node): check that the NVIDIA device p…
pub(super) fn no_gpu_node_shows_why() -> Said {
    say!("no GPU node shows why (no node looks like a GPU node): check that the NVIDIA device plugin runs on the GPU nodes", "理由を示す GPU Node \
        がありません（GPU Node らしい Node がない）。GPU Node で NVIDIA device plugin が動いているか確認してください")
}

/// the NVIDIA device plugin is missing or failing on {who} (see device-plugin-missing) —…
pub(super) fn nvidia_device_plugin_missing_failing(who: &Said) -> Said {
    say!("the NVIDIA device plugin is missing or failing on {who} (see device-plugin-missing) — fix the plugin there", "{who} で NVIDIA device plugin \
        がないか失敗しています（device-plugin-missing を参照）— そこでプラグインを直してください"; who)
}

/// Waiting for {want} {res}, which no node it can go to advertises at all: {where_}. The…
pub(super) fn nowhere_advertised(want: &impl Display, res: &impl Display, where_: &Said) -> Said {
    say!("Waiting for {want} {res}, which no node it can go to advertises at all: {where_}. There is nothing to free, and time-slicing cannot help \
        while the plugin is down.", "{res} を {want} 個待っていますが、行ける Node はどれも {res} を公開していません：{where_}。空けられるものはなく、プラグインが止まっている間はタイムスライスも役に立ちません。"; where_)
}

/// {o} of {c} on {n} out of service
pub(super) fn out_service(o: &impl Display, c: &impl Display, n: &impl Display) -> Said {
    say!("{o} of {c} on {n} out of service", "{n} の {c} 個中 {o} 個が使用不可")
}

/// Waiting for {want} {res}: the GPU it needs has failed — {parts} (the device plugin ma…
pub(super) fn waiting_gpu_needs_has_failed(want: &impl Display, res: &impl Display, parts: &Said) -> Said {
    say!("Waiting for {want} {res}: the GPU it needs has failed — {parts} (the device plugin marked it unhealthy; see gpu-unhealthy) and the rest is \
        held. Bring the GPU back (check the node's kernel log for Xid errors, nvidia-smi, the device plugin's log) or free a unit elsewhere.", "{res} \
        を {want} 個待っています。必要な GPU が故障しています — {parts}（device plugin が異常と判断。gpu-unhealthy を参照）、残りは使用中です。GPU を戻す（Node のカーネルログの Xid エラー、nvidia-smi、device \
        plugin のログを確認）か、ほかでユニットを空けてください。"; parts)
}

///  It is past its grace period: see gpu-held-by-terminating-pod for why it may be stuck.
pub(super) fn past_grace_period_gpu_held() -> Said {
    say!(
        " It is past its grace period: see gpu-held-by-terminating-pod for why it may be stuck.",
        "猶予期間を過ぎています。止まっている理由は gpu-held-by-terminating-pod を参照してください。"
    )
}

/// Waiting for {want} {res}: every matching unit is held, and {holder}, which holds one,…
pub(super) fn waiting_every_matching_unit_held(
    want: &impl Display,
    res: &impl Display,
    holder: &impl Display,
    since: &impl Display,
    grace: &impl Display,
    stuck: &Said,
) -> Said {
    say!("Waiting for {want} {res}: every matching unit is held, and {holder}, which holds one, is terminating (deleting since {since}, grace {grace} \
        s) — the unit frees when it is gone; nothing to do yet.{stuck}", "{res} を {want} 個待っています。合うユニットはすべて使用中で、そのうち1つを持つ {holder} は終了処理中です（{since} \
        から削除中、猶予 {grace} 秒）— 終わればユニットが空きます。今はすることはありません。{stuck}"; stuck)
}

/// free a replica (scale down or remove a pod holding one), raise time-slicing replicas,…
pub(super) fn free_replica_scale_down_remove() -> Said {
    say!(
        "free a replica (scale down or remove a pod holding one), raise time-slicing replicas, or add a GPU node",
        "レプリカを空ける（持っている Pod \
        をスケールダウンか削除）、タイムスライスのレプリカ数を増やす、または GPU Node を追加してください"
    )
}

/// free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA de…
pub(super) fn free_one_scale_down_pod() -> Said {
    say!("free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA device plugin, or add a GPU node", "1つ空ける（持っている Pod \
        をスケールダウン）、NVIDIA device plugin でタイムスライスのレプリカを有効にする、または GPU Node を追加してください")
}

/// Waiting for {want} {res}: every matching node's {res} is already held — {hint}.
pub(super) fn waiting_every_matching_node_already(want: &impl Display, res: &impl Display, hint: &Said) -> Said {
    say!("Waiting for {want} {res}: every matching node's {res} is already held — {hint}.", "{res} を {want} 個待っています。合う Node の {res} はすべて使用中です — {hint}。"; hint)
}

/// Waiting for {want} {res}, which no node advertises: this cluster hands out GPUs throu…
pub(super) fn waiting_which_no_node_advertises(
    want: &impl Display,
    res: &impl Display,
    classes: &Said,
    class: &impl Display,
) -> Said {
    say!("Waiting for {want} {res}, which no node advertises: this cluster hands out GPUs through DRA (DeviceClass {classes}), not a device plugin. \
        Ask for the GPU with a ResourceClaim instead: remove {res} from resources.limits and add spec.resourceClaims naming a ResourceClaimTemplate \
        whose request has deviceClassName: {class}.", "{res} を {want} 個待っていますが、どの Node も公開していません。このクラスタは device plugin ではなく DRA（DeviceClass \
        {classes}）で GPU を割り当てます。ResourceClaim で要求してください：resources.limits から {res} を外し、deviceClassName: {class} の ResourceClaimTemplate を \
        spec.resourceClaims で指定します。"; classes)
}

/// the NVIDIA device plugin's time-slicing with renameByDefault: true advertises shared…
pub(super) fn nvidia_device_plugin_time_slicing(offered: &impl Display) -> Said {
    say!(
        "the NVIDIA device plugin's time-slicing with renameByDefault: true advertises shared GPUs as {offered}",
        "NVIDIA device plugin のタイムスライスで \
        renameByDefault: true のため、共有 GPU は {offered} として公開されています"
    )
}

/// the GPU is partitioned with MIG, and the mixed strategy advertises each profile by it…
pub(super) fn gpu_partitioned_mig_mixed_strategy() -> Said {
    say!(
        "the GPU is partitioned with MIG, and the mixed strategy advertises each profile by its name",
        "GPU が MIG で分割され、mixed 戦略では各プロファイルが名前で公開されます"
    )
}

/// time-slicing is not renamed there (or is off), so the GPU is advertised as {offered}
pub(super) fn time_slicing_not_renamed_there(offered: &impl Display) -> Said {
    say!(
        "time-slicing is not renamed there (or is off), so the GPU is advertised as {offered}",
        "そこではタイムスライスが改名されていない（または無効）ため、GPU は {offered} として公開されています"
    )
}

/// the device plugin advertises the GPU as {offered}
pub(super) fn device_plugin_advertises_gpu(offered: &impl Display) -> Said {
    say!("the device plugin advertises the GPU as {offered}", "device plugin は GPU を {offered} として公開しています")
}

/// Waiting for {want} {res}, which no node it can go to advertises — but {who} advertise…
pub(super) fn resource_renamed_elsewhere(
    want: &impl Display,
    res: &impl Display,
    who: &Said,
    offered: &impl Display,
    why: &Said,
) -> Said {
    say!("Waiting for {want} {res}, which no node it can go to advertises — but {who} advertise {offered}: the device plugin runs; {why}. Change the \
        pod's resources.limits from {res}: {want} to {offered}: {want} (or set the device plugin to advertise {res}).", "{res} を {want} 個待っていますが、行ける \
        Node はどれも公開していません — ただし {who} は {offered} を公開しています。device plugin は動いています。{why}。Pod の resources.limits を {res}: {want} から {offered}: {want} \
        に変えてください（または device plugin が {res} を公開するよう設定してください）。"; who, why)
}

/// its node {node_name} is NotReady, so no kubelet confirms that its containers stopped:…
pub(super) fn node_notready_so_no_kubelet(node_name: &impl Display, ns: &impl Display, pn: &impl Display) -> Said {
    say!("its node {node_name} is NotReady, so no kubelet confirms that its containers stopped: bring the node back; if it is gone for good, delete \
        the pod with kubectl delete pod -n {ns} {pn} --grace-period=0 --force (only when the node is surely off — its GPU might still be in \
        use)", "Node {node_name} が NotReady のため、コンテナの停止を確認する kubelet がいません。Node を戻してください。恒久的に失われた場合は kubectl delete pod -n {ns} {pn} --grace-period=0 \
        --force で削除します（Node が確実に停止している場合のみ — GPU がまだ使われているかもしれません）")
}

/// finalizers hold it ({f}): the controller that owns them must finish its work; if that…
pub(super) fn finalizers_hold_controller_owns_them(f: &Said, ns: &impl Display, pn: &impl Display) -> Said {
    say!("finalizers hold it ({f}): the controller that owns them must finish its work; if that controller is gone, remove them with kubectl patch pod \
        -n {ns} {pn} --type=merge -p '{{\"metadata\":{{\"finalizers\":null}}}}'", "finalizer \
        が削除を止めています（{f}）。それを持つコントローラーが処理を終える必要があります。コントローラーがもうない場合は kubectl patch pod -n {ns} {pn} --type=merge -p \
        '{{\"metadata\":{{\"finalizers\":null}}}}' で外してください"; f)
}

/// the kubelet on {node_name} has not finished stopping its containers: check the contai…
pub(super) fn kubelet_has_not_finished_stopping(node_name: &impl Display) -> Said {
    say!("the kubelet on {node_name} has not finished stopping its containers: check the container runtime and the kubelet's log there", "{node_name} \
        の kubelet がコンテナの停止を終えていません。そこのコンテナランタイムと kubelet のログを確認してください")
}

/// Terminating since {since_s} and {mins} min past its {grace} s grace period, still hol…
pub(super) fn terminating_since_min_past_grace(
    since_s: &impl Display,
    mins: &impl Display,
    grace: &impl Display,
    cause: &Said,
) -> Said {
    say!("Terminating since {since_s} and {mins} min past its {grace} s grace period, still holding a GPU \
                that a waiting pod needs: {cause}.", "{since_s} から終了処理中で、猶予 {grace} 秒を {mins} 分過ぎても、\
                待っている Pod が必要とする GPU を持ったままです：{cause}。"; cause)
}

///  since {s}
pub(super) fn since(s: &impl Display) -> Said {
    say!(" since {s}", "（{s} から）")
}

/// the node(s) with {r} it could run on
pub(super) fn nodes_with_it_could_run_on(r: &impl Display) -> Said {
    say!("the node(s) with {r} it could run on", "行ける {r} の Node")
}

/// the node(s) it could run on
pub(super) fn nodes_it_could_run_on() -> Said {
    say!("the node(s) it could run on", "行ける Node")
}

/// Waiting because {what} — {who} — are cordoned (spec.unschedulable{since}), perhaps le…
pub(super) fn waiting_because_cordoned_spec_unschedulable(
    what: &Said,
    who: &impl Display,
    since: &Said,
    first: &impl Display,
) -> Said {
    say!("Waiting because {what} — {who} — are cordoned (spec.unschedulable{since}), perhaps left over from maintenance. When the work there is done: \
        kubectl uncordon {first}.", "{what}（{who}）が cordon されているため待っています（spec.unschedulable{since}）。メンテナンスの戻し忘れかもしれません。作業が終わっていれば：kubectl uncordon \
        {first}"; what, since)
}

/// Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: r…
pub(super) fn requests_more_than_replica_time() -> Said {
    say!("Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: request 1 (a replica is not a bigger share of the \
        GPU).", "タイムスライスの GPU のレプリカを2つ以上要求しており、device plugin が拒否します。1 を要求してください（レプリカを増やしても GPU の取り分は増えません）。")
}

///  (the board's pods use {u} now)
pub(super) fn board_pods_use_now(u: &impl Display) -> Said {
    say!(" (the board's pods use {u} now)", "（ボードの Pod の現在の使用量は {u}）")
}

///  (their models hold {g} of GPU memory besides; {f} of the board is really free)
pub(super) fn their_models_hold_gpu_memory(g: &impl Display, f: &impl Display) -> Said {
    say!(
        " (their models hold {g} of GPU memory besides; {f} of the board is really free)",
        "（そのほかモデルが GPU メモリを {g} 使っており、ボードの実際の空きは {f}）"
    )
}

///  {n} other node(s) it could go to have less room.
pub(super) fn other_node_could_go_have(n: &impl Display) -> Said {
    say!(" {n} other node(s) it could go to have less room.", "行けるほかの {n} 個の Node はさらに余裕がありません。")
}

///  A {r} unit is free there, but the board's memory is not: on a Jetson the model's wei…
pub(super) fn unit_free_there_but_board(r: &impl Display) -> Said {
    say!(" A {r} unit is free there, but the board's memory is not: on a Jetson the model's weights live in that same RAM, shared by CPU and \
        GPU.", "そこでは {r} のユニットが空いていますが、ボードのメモリが空いていません。Jetson ではモデルの重みは CPU と GPU が共有する同じ RAM に載ります。")
}

/// Waiting for memory: {name} shares {alloc} between CPU and GPU, its pods request {req}…
pub(super) fn waiting_memory_shares_between_cpu(
    name: &impl Display,
    alloc: &impl Display,
    req: &impl Display,
    ask: &impl Display,
    left: &impl Display,
    replica: &Said,
    measured: &Said,
    others: &Said,
) -> Said {
    say!("Waiting for memory: {name} shares {alloc} between CPU and GPU, its pods request {req}, and this pod asks {ask} — {left} left.{replica} Lower \
        the other models' memory requests to their measured use{measured}, move this model to a board with more memory, or drop a model from \
        {name}.{others}", "メモリを待っています。{name} は CPU と GPU で {alloc} を共有し、Pod の requests は {req}、この Pod は {ask} を求めています — 残りは {left} \
        です。{replica}ほかのモデルのメモリ requests を実測値まで下げる{measured}、このモデルをメモリの多いボードに移す、または {name} からモデルを1つ外してください。{others}"; replica, measured, others)
}

///  A {r} unit is free there, but the memory is not.
pub(super) fn unit_free_there_but_memory(r: &impl Display) -> Said {
    say!(
        " A {r} unit is free there, but the memory is not.",
        "そこでは {r} のユニットが空いていますが、メモリが空いていません。"
    )
}

/// Waiting for memory: {name} has {alloc} allocatable, its pods request {req}, and this…
pub(super) fn waiting_memory_has_allocatable_pods(
    name: &impl Display,
    alloc: &impl Display,
    req: &impl Display,
    ask: &impl Display,
    left: &impl Display,
    replica: &Said,
    measured: &Said,
    others: &Said,
) -> Said {
    say!("Waiting for memory: {name} has {alloc} allocatable, its pods request {req}, and this pod asks {ask} — {left} left.{replica} Lower memory \
        requests to measured use{measured}, move a pod off {name}, or add a node with more memory.{others}", "メモリを待っています。{name} の allocatable は \
        {alloc}、Pod の requests は {req}、この Pod は {ask} を求めています — 残りは {left} です。{replica}メモリ requests を実測値まで下げる{measured}、{name} から Pod を移す、またはメモリの多い \
        Node を追加してください。{others}"; replica, measured, others)
}
