//! What the node's decisions after binding say (`after.rs` decides which applies), in English and
//! Japanese: one entry per sentence, its placeholders its parameters (`: Said` where each language
//! has its own words).

gpudash_model::sentences! { "after";
    /// A bound pod whose containers the kubelet has not started.
    containers_not_started() {
        en: "the kubelet has not started its containers",
        ja: "kubelet がコンテナを起動していません",
    }
    /// Why the kubelet refused: the node offers none of the resource now.
    node_offers_none_now(res) {
        en: "the node offers no {res} now — the kubelet restarted and the device plugin has not registered again, or the plugin is gone \
             (see device-plugin-missing): the scheduler counted units the kubelet's device manager did not have",
        ja: "この Node は今 {res} を提供していません — kubelet が再起動してデバイスプラグインがまだ再登録していないか、プラグインがありません\
             （device-plugin-missing を参照）。スケジューラーは kubelet のデバイスマネージャーが持っていないユニットを数えていました",
    }
    /// Why the kubelet refused while units are free now.
    units_free_now(free, res) {
        en: "{free} {res} are free there now: the device manager had none to give at that moment (a kubelet restart before the device \
             plugin registered again, or a pod that set spec.nodeName while the units were held)",
        ja: "今はそこで {res} が {free} 個空いています。その時点ではデバイスマネージャーに渡せるものがありませんでした\
             （デバイスプラグインの再登録前の kubelet 再起動、またはユニットが使用中のときに spec.nodeName を指定した Pod）",
    }
    /// Why the kubelet refused: every unit is held.
    every_unit_held(res, allocatable, who: Said) {
        en: "every {res} there ({allocatable}) is held, by {who}: a pod that sets spec.nodeName bypasses the scheduler, which would \
             have kept it Pending",
        ja: "そこの {res}（{allocatable} 個）はすべて {who} が使用中です。spec.nodeName を指定した Pod はスケジューラーを\
             通らないため、Pending で待つ代わりに拒否されます",
    }
    /// gpu-admission-rejected.
    rejected_at_admission(count, owner, node, reason, words, why: Said, ns) {
        en: "{count} GPU pod(s) of {owner} refused by the kubelet on {node} at admission after the scheduler had placed them ({reason}: \"{words}\"); \
             {why}. Failed pods hold nothing and are not retried: let the scheduler place the pods (a nodeSelector rather than \
             spec.nodeName), make sure the device plugin runs on {node}, then delete the Failed pods with kubectl delete pods -n {ns} \
             --field-selector=status.phase=Failed.",
        ja: "{owner} の {count} 個の GPU Pod が、スケジューラーが配置した後に {node} の kubelet にアドミッションで拒否されました（{reason}：「{words}」）。\
             {why}。Failed の Pod は何も持たず、再試行もされません。Pod の配置はスケジューラーに任せ（spec.nodeName ではなく \
             nodeSelector）、{node} でデバイスプラグインが動いていることを確かめてから、kubectl delete pods -n {ns} \
             --field-selector=status.phase=Failed で Failed の Pod を削除してください。",
    }
    /// The evicting node's pressure now.
    node_under_pressure(cond, taint) {
        en: "; the node reports {cond} now, and its taint {taint} keeps new pods off it — its free GPU included — until the pressure ends",
        ja: "。この Node は今 {cond} を報告しており、その taint {taint} が圧迫の終わるまで新しい Pod を（空いている GPU も含めて）締め出します",
    }
    /// A unified-memory board's use, with the models' GPU memory.
    board_use_with_gpu(used, board, gpu) {
        en: "; on this unified-memory board {used} of {board} is in use, {gpu} of it the models' GPU memory",
        ja: "。このユニファイドメモリーのボードでは {board} 中 {used} が使用中で、そのうち {gpu} がモデルの GPU メモリーです",
    }
    /// A unified-memory board's use.
    board_use(used, board) {
        en: "; on this unified-memory board {used} of {board} is in use (CPU and GPU share it)",
        ja: "。このユニファイドメモリーのボードでは {board} 中 {used} が使用中です（CPU と GPU で共有）",
    }
    /// A unified-memory board whose use nobody measures.
    board_use_unknown(board) {
        en: "; this is a unified-memory board of {board} shared by CPU and GPU (no agent measures its use)",
        ja: "。これは CPU と GPU で共有する {board} のユニファイドメモリーのボードです（使用量を測るエージェントはありません）",
    }
    /// gpu-pod-evicted.
    evicted(count, owner, node, words, more: Said, ns) {
        en: "{count} GPU pod(s) of {owner} evicted by the kubelet on {node}: \"{words}\"{more}. Evicted pods hold nothing: give the models memory \
             requests and limits that cover what they use (the kubelet evicts first the pods using most beyond their requests), and \
             delete the Failed pods with kubectl delete pods -n {ns} --field-selector=status.phase=Failed.",
        ja: "{owner} の {count} 個の GPU Pod が {node} の kubelet に退避（evict）させられました：「{words}」{more}。退避した Pod は何も持ちません。\
             モデルには使用量をまかなうメモリーの requests と limits を設定し（kubelet は requests を最も超えて使っている Pod から退避させます）、\
             kubectl delete pods -n {ns} --field-selector=status.phase=Failed で Failed の Pod を削除してください。",
    }
    /// gpu-pod-evicted for local storage (an emptyDir's sizeLimit, an ephemeral-storage limit).
    evicted_storage(count, owner, node, words, ns) {
        en: "{count} GPU pod(s) of {owner} evicted by the kubelet on {node} for local storage: \"{words}\". Evicted pods hold nothing: \
             raise the emptyDir's sizeLimit or the container's ephemeral-storage limit to what the model writes (caches, downloaded \
             weights), or write it to a persistent volume, and delete the Failed pods with kubectl delete pods -n {ns} \
             --field-selector=status.phase=Failed.",
        ja: "{owner} の {count} 個の GPU Pod が {node} の kubelet に\
             ローカルストレージのため退避（evict）させられました：「{words}」。\
             退避した Pod は何も持ちません。emptyDir の sizeLimit かコンテナーの ephemeral-storage の limit を\
             モデルが書く量（キャッシュ、\
             ダウンロードした重み）まで上げるか、永続ボリュームに書くようにし、kubectl delete pods -n {ns} \
             --field-selector=status.phase=Failed で Failed の Pod を削除してください。",
    }
    /// An OOM-killed container crash-loops now.
    crash_loops_now() {
        en: ", and it crash-loops now (CrashLoopBackOff)",
        ja: "。現在 CrashLoopBackOff で再起動を繰り返しています",
    }
    /// When the last OOM kill was.
    last_at(at) {
        en: ", the last at {at}",
        ja: "（最後は {at}）",
    }
    /// gpu-model-oom-killed.
    oom_killed(pod, container, exit, times, looping: Said, at: Said, memory: Said) {
        en: "Container {container} of {pod} was killed for memory (OOMKilled, exit {exit}) {times} time(s){at}{looping}: {memory}.",
        ja: "{pod} のコンテナ {container} がメモリー不足で強制終了されました（OOMKilled、終了コード {exit}）— {times} 回{at}{looping}。{memory}。",
    }
    /// What the agent measured of an OOM-killed model's GPU memory.
    measured_gpu_memory(gpu) {
        en: " (the agent measured {gpu} of GPU memory for it)",
        ja: "（エージェントの計測では GPU メモリーを {gpu} 使用）",
    }
    /// An OOM-killed model's limit on a unified-memory board.
    unified_limit(node, board, limit, gpu: Said) {
        en: "{node} is a unified-memory board of {board}, so the model's GPU memory comes out of the same pool and counts against the \
             pod's memory limit of {limit}{gpu} — raise the limit to cover the model's GPU memory as well as its CPU memory, or load a \
             smaller or quantised model",
        ja: "{node} は {board} のユニファイドメモリーのボードなので、モデルの GPU メモリーも同じプールから取られ、Pod のメモリー limit \
             {limit} に数えられます{gpu} — limit を CPU メモリーに加えてモデルの GPU メモリーもまかなえるまで上げるか、より小さいまたは\
             量子化したモデルを読み込んでください",
    }
    /// An OOM-killed model without a limit on a unified-memory board.
    unified_no_limit(node, board, gpu: Said) {
        en: "{node} is a unified-memory board of {board} and the pod has no memory limit, so the board itself ran out of memory{gpu} — \
             see what else holds memory there, and give the model a memory request and limit that cover its GPU memory",
        ja: "{node} は {board} のユニファイドメモリーのボードで、Pod にメモリー limit がないため、ボード自体のメモリーが尽きました{gpu} — \
             ほかに何がメモリーを使っているか確かめ、モデルには GPU メモリーもまかなうメモリーの request と limit を設定してください",
    }
    /// An OOM-killed model's limit on a discrete GPU's node.
    discrete_limit(limit) {
        en: "its memory limit is {limit}: raise it to what the model needs in host memory, or lower its batch or model size",
        ja: "メモリー limit は {limit} です。モデルが必要とするホストメモリーまで上げるか、バッチやモデルのサイズを下げてください",
    }
    /// An OOM-killed model without a limit on a discrete GPU's node.
    discrete_no_limit() {
        en: "it has no memory limit, so the node ran out of memory: give it a memory request and limit that match what it uses",
        ja: "メモリー limit がないため、Node のメモリーが尽きました。使用量に合ったメモリーの request と limit を設定してください",
    }
    /// Why a holder does not run: a container's state.
    container_is(container, reason) {
        en: "container {container} is {reason}",
        ja: "コンテナ {container} は {reason} です",
    }
    /// Why a holder does not run: a container's state and its words.
    container_is_with(container, reason, message) {
        en: "container {container} is {reason} (\"{message}\")",
        ja: "コンテナ {container} は {reason} です（「{message}」）",
    }
    /// Pods wait for what a stalled holder holds.
    while_pods_wait(waiting, res) {
        en: ", while {waiting} pod(s) wait for {res}",
        ja: "。その間 {waiting} 個の Pod が {res} を待っています",
    }
    /// gpu-held-not-running.
    held_not_running(pod, held, node, took: Said, why: Said, waiters: Said, fix: Said) {
        en: "{pod} holds {held} on {node} but has not run for {took}: {why}{waiters}. {fix}.",
        ja: "{pod} は {node} で {held} を持っていますが、{took}動いていません：{why}{waiters}。{fix}。",
    }
    /// How long, in seconds.
    seconds(n) {
        en: "{n} s",
        ja: "{n} 秒間",
    }
    /// How long, in minutes.
    minutes(n) {
        en: "{n} min",
        ja: "{n} 分間",
    }
    /// How long, in hours and minutes.
    hours(h, m) {
        en: "{h} h {m} min",
        ja: "{h} 時間 {m} 分間",
    }
    /// The fix when the kubelet never started the containers.
    fix_not_started(node) {
        en: "Check the kubelet and the container runtime on {node} (kubectl describe pod shows their events); delete the pod to free the unit",
        ja: "{node} の kubelet とコンテナランタイムを確認してください（kubectl describe pod でイベントが見られます）。ユニットを空けるには Pod を削除します",
    }
    /// The fix for an image built for another architecture.
    fix_wrong_arch(arch) {
        en: "The image has no build for this node's architecture ({arch}): \"exec format error\" means the binary is for another CPU — \
             use an image with a linux/{arch} build",
        ja: "イメージにこの Node のアーキテクチャ（{arch}）向けのビルドがありません。「exec format error」はバイナリーが別の CPU 向けであることを\
             示します — linux/{arch} のビルドを持つイメージを使ってください",
    }
    /// The fix for an image without the node's platform.
    fix_no_platform(arch) {
        en: "The image's manifest has no linux/{arch} entry: use an image built for {arch}",
        ja: "イメージのマニフェストに linux/{arch} がありません。{arch} 向けにビルドしたイメージを使ってください",
    }
    /// The fix for an image that cannot be pulled.
    fix_image(arch) {
        en: "The image cannot be pulled: fix its name, tag or pull secret, and make sure it has a linux/{arch} build; until then the \
             unit is held from every other pod",
        ja: "イメージを pull できません。名前、タグ、pull secret を直し、linux/{arch} のビルドがあることを確かめてください。それまでユニットは\
             ほかのどの Pod も使えません",
    }
    /// The fix for a crash loop.
    fix_crash_loop(ns, pod) {
        en: "The model crashes on start: read kubectl logs -n {ns} {pod} --previous; scale it down to free the unit meanwhile",
        ja: "モデルが起動時にクラッシュしています。kubectl logs -n {ns} {pod} --previous を読んでください。その間ユニットを空けるにはスケールダウンします",
    }
    /// The fix otherwise.
    fix_describe(ns, pod) {
        en: "See kubectl describe pod -n {ns} {pod} for the kubelet's events; delete or fix it to free the unit",
        ja: "kubelet のイベントは kubectl describe pod -n {ns} {pod} で見られます。ユニットを空けるには削除するか直してください",
    }
    /// The preemptor's PriorityClass.
    priority_class(class) {
        en: " (PriorityClass {class})",
        ja: "（PriorityClass {class}）",
    }
    /// gpu-preempted, the preemptor unknown.
    preempted_unknown(node, at) {
        en: "Preempted on {node} at {at} by a pod of higher priority. Its workload's replacement waits for a unit: give it a \
             PriorityClass at least as high, or add GPU capacity.",
        ja: "{at} に {node} で、より優先度の高い Pod にプリエンプトされました。ワークロードの代わりの Pod はユニットを待ちます。\
             同等以上の PriorityClass を付けるか、GPU を増やしてください。",
    }
    /// gpu-preempted.
    preempted(node, at, by, class: Said) {
        en: "Preempted on {node} at {at} by {by}{class}, a pod of higher priority, to make room for it. Its workload's replacement \
             waits for a unit: give it a PriorityClass at least as high, set preemptionPolicy: Never on the other, or add GPU capacity.",
        ja: "{at} に {node} で、より優先度の高い {by}{class} の場所を空けるためにプリエンプトされました。ワークロードの代わりの Pod は\
             ユニットを待ちます。同等以上の PriorityClass を付けるか、相手に preemptionPolicy: Never を設定するか、GPU を増やしてください。",
    }
    /// gpu-held-idle.
    held_idle(pod, held, node, line, took: Said, busy, waiting) {
        en: "{pod} holds {held} on {node}, and its GPU has been under {line} % busy for {took} ({busy} % now, as the node's agent \
             measures it) while {waiting} pod(s) that could go there wait for it: scale it down or stop it when it is not serving, so \
             that the waiting model gets the unit.",
        ja: "{pod} は {node} で {held} を持っていますが、その GPU の使用率は {took}、{line} % 未満のままです（今は {busy} %、ノードのエージェントの計測）。\
             その間、そこに行ける {waiting} 個の Pod がそれを待っています。使っていないときはスケールダウンするか止めて、待っているモデルに\
             ユニットを渡してください。",
    }
    /// gpu-admission-rejected on its node's card.
    card_rejected(count, owner, reason) {
        en: "{count} GPU pod(s) of {owner} refused by the kubelet ({reason}).",
        ja: "{owner} の GPU Pod {count} 個を kubelet が拒否（{reason}）。",
    }
    /// gpu-pod-evicted on its node's card.
    card_evicted(count, owner) {
        en: "{count} GPU pod(s) of {owner} evicted by the kubelet.",
        ja: "{owner} の GPU Pod {count} 個を kubelet が退避。",
    }
    /// gpu-model-oom-killed on its node's card.
    card_oom_killed(pod, times, looping: Said) {
        en: "{pod} OOM-killed {times} time(s){looping}.",
        ja: "{pod} がメモリー不足で {times} 回強制終了{looping}。",
    }
    /// gpu-held-not-running on its node's card.
    card_held_not_running(pod, held, took: Said, reason: Said) {
        en: "{pod} holds {held} without running for {took} ({reason}).",
        ja: "{pod} が {held} を持ったまま {took}動いていません（{reason}）。",
    }
    /// insufficient-gpu where a holder does not run.
    waiting_for_stalled(want, res, holder, node, took: Said, reason: Said) {
        en: "Waiting for {want} {res}: every matching unit is held, and {holder} holds one on {node} without running for {took} \
             ({reason}) — see gpu-held-not-running: fix or delete it to free the unit.",
        ja: "{res} を {want} 個待っています。合うユニットはすべて使用中で、{node} の {holder} は {took}動かないまま 1 つを持っています\
             （{reason}）— gpu-held-not-running を参照し、直すか削除してユニットを空けてください。",
    }
    /// insufficient-gpu where a unit is free but the pod is kept off its node.
    free_but_kept_off(want, res, node, why: Said) {
        en: "Waiting for {want} {res}: a unit is free on {node}, but the scheduler keeps the pod off that node — {why}.",
        ja: "{res} を {want} 個待っています。{node} ではユニットが空いていますが、スケジューラーはその Node に Pod を置きません — {why}。",
    }
    /// Kept off by a pressure condition.
    kept_off_pressure(cond, taint) {
        en: "it reports {cond} and is tainted {taint}: the kubelet is evicting pods there (see gpu-pod-evicted); free memory on the \
             board, and the taint goes when the pressure ends",
        ja: "その Node は {cond} を報告しており taint {taint} が付いています。kubelet がそこで Pod を退避させています（gpu-pod-evicted を参照）。\
             ボードのメモリーを空ければ、圧迫が終わると taint は外れます",
    }
    /// Kept off by taints.
    kept_off_taints(taints) {
        en: "it has taints the pod does not tolerate ({taints})",
        ja: "その Node には Pod が許容しない taint があります（{taints}）",
    }
    /// Kept off for another reason.
    kept_off_other() {
        en: "see the scheduler's other reasons for that node",
        ja: "その Node についてのスケジューラーのほかの理由を見てください",
    }
}
