//! What a Pending pod is told and what its diagnoses say (insufficient-gpu, insufficient-memory, a
//! GPU held past its grace period, a cordoned or dark node, time-slicing and MIG naming), in
//! English and Japanese: one entry per sentence, its placeholders its parameters (`: Said` where
//! each language has its own words). `waiting.rs` decides which applies.

gpudash_model::sentences! { "waiting";
    /// Waiting for {want} {res} on {node} … no MPS control daemon runs there …
    waiting_node_aimed_mps(want, res, node) {
        en: "Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: {node} shares its GPUs through MPS and no MPS \
        control daemon runs there, so the NVIDIA device plugin offers nothing (see that node's gpu-mps-daemon-missing diagnosis) — start the \
        daemon; freeing a GPU elsewhere will not help.",
        ja: "対象の Node {node} で {res} を {want} 個待っていますが、{node} は1つも公開していません。{node} は MPS で GPU \
        を共有していますが MPS コントロールデーモンが動いておらず、\
        NVIDIA device plugin が何も公開しません（その Node の gpu-mps-daemon-missing \
        を参照）— デーモンを起動してください。ほかで GPU を空けても解決しません。",
    }
    /// Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: t…
    waiting_node_aimed_at_which(want, res, node) {
        en: "Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: the NVIDIA device plugin is missing or failing there \
        (see that node's device-plugin-missing diagnosis) — fix the plugin; freeing a GPU elsewhere will not help.",
        ja: "対象の Node {node} で {res} を {want} \
        個待っていますが、{node} は1つも公開していません。そこで NVIDIA device plugin がないか失敗しています（その Node の device-plugin-missing を参照）— プラグインを直してください。ほかで GPU を空けても解決しません。",
    }
    /// no GPU node shows why (no node looks like a GPU node): check that the NVIDIA device p…
    no_gpu_node_shows_why() {
        en: "no GPU node shows why (no node looks like a GPU node): check that the NVIDIA device plugin runs on the GPU nodes",
        ja: "理由を示す GPU Node \
        がありません（GPU Node らしい Node がない）。GPU Node で NVIDIA device plugin が動いているか確認してください",
    }
    /// the NVIDIA device plugin is missing or failing on {who} (see device-plugin-missing) —…
    nvidia_device_plugin_missing_failing(who: Said) {
        en: "the NVIDIA device plugin is missing or failing on {who} (see device-plugin-missing) — fix the plugin there",
        ja: "{who} で NVIDIA device plugin \
        がないか失敗しています（device-plugin-missing を参照）— そこでプラグインを直してください",
    }
    /// Waiting for {want} {res}, which no node it can go to advertises at all: {where_}. The…
    nowhere_advertised(want, res, where_: Said) {
        en: "Waiting for {want} {res}, which no node it can go to advertises at all: {where_}. There is nothing to free, and time-slicing cannot help \
        while the plugin is down.",
        ja: "{res} を {want} 個待っていますが、行ける Node はどれも {res} を公開していません：{where_}。空けられるものはなく、プラグインが止まっている間はタイムスライスも役に立ちません。",
    }
    /// {o} of {c} on {n} out of service
    out_service(o, c, n) {
        en: "{o} of {c} on {n} out of service",
        ja: "{n} の {c} 個中 {o} 個が使用不可",
    }
    /// Waiting for {want} {res}: the GPU it needs has failed — {parts} (the device plugin ma…
    waiting_gpu_needs_has_failed(want, res, parts: Said) {
        en: "Waiting for {want} {res}: the GPU it needs has failed — {parts} (the device plugin marked it unhealthy; see gpu-unhealthy) and the rest is \
        held. Bring the GPU back (check the node's kernel log for Xid errors, nvidia-smi, the device plugin's log) or free a unit elsewhere.",
        ja: "{res} \
        を {want} 個待っています。必要な GPU が故障しています — {parts}（device plugin が異常と判断。gpu-unhealthy を参照）、残りは使用中です。GPU を戻す（Node のカーネルログの Xid エラー、nvidia-smi、device \
        plugin のログを確認）か、ほかでユニットを空けてください。",
    }
    ///  It is past its grace period: see gpu-held-by-terminating-pod for why it may be stuck.
    past_grace_period_gpu_held() {
        en: " It is past its grace period: see gpu-held-by-terminating-pod for why it may be stuck.",
        ja: "猶予期間を過ぎています。止まっている理由は gpu-held-by-terminating-pod を参照してください。",
    }
    /// Waiting for {want} {res}: every matching unit is held, and {holder}, which holds one,…
    waiting_every_matching_unit_held(want, res, holder, since, grace, stuck: Said) {
        en: "Waiting for {want} {res}: every matching unit is held, and {holder}, which holds one, is terminating (deleting since {since}, grace {grace} \
        s) — the unit frees when it is gone; nothing to do yet.{stuck}",
        ja: "{res} を {want} 個待っています。合うユニットはすべて使用中で、そのうち1つを持つ {holder} は終了処理中です（{since} \
        から削除中、猶予 {grace} 秒）— 終わればユニットが空きます。今はすることはありません。{stuck}",
    }
    /// free a replica (scale down or remove a pod holding one), raise time-slicing replicas,…
    free_replica_scale_down_remove() {
        en: "free a replica (scale down or remove a pod holding one), raise time-slicing replicas, or add a GPU node",
        ja: "レプリカを空ける（持っている Pod \
        をスケールダウンか削除）、タイムスライスのレプリカ数を増やす、または GPU Node を追加してください",
    }
    /// free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA de…
    free_one_scale_down_pod() {
        en: "free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA device plugin, or add a GPU node",
        ja: "1つ空ける（持っている Pod \
        をスケールダウン）、NVIDIA device plugin でタイムスライスのレプリカを有効にする、または GPU Node を追加してください",
    }
    /// Waiting for {want} {res}: every matching node's {res} is already held — {hint}.
    waiting_every_matching_node_already(want, res, hint: Said) {
        en: "Waiting for {want} {res}: every matching node's {res} is already held — {hint}.",
        ja: "{res} を {want} 個待っています。合う Node の {res} はすべて使用中です — {hint}。",
    }
    /// Waiting for {want} {res}, which no node advertises: this cluster hands out GPUs throu…
    waiting_which_no_node_advertises(want, res, classes: Said, class) {
        en: "Waiting for {want} {res}, which no node advertises: this cluster hands out GPUs through DRA (DeviceClass {classes}), not a device plugin. \
        Ask for the GPU with a ResourceClaim instead: remove {res} from resources.limits and add spec.resourceClaims naming a ResourceClaimTemplate \
        whose request has deviceClassName: {class}.",
        ja: "{res} を {want} 個待っていますが、どの Node も公開していません。このクラスタは device plugin ではなく DRA（DeviceClass \
        {classes}）で GPU を割り当てます。ResourceClaim で要求してください：resources.limits から {res} を外し、deviceClassName: {class} の ResourceClaimTemplate を \
        spec.resourceClaims で指定します。",
    }
    /// the NVIDIA device plugin's time-slicing with renameByDefault: true advertises shared…
    nvidia_device_plugin_time_slicing(offered) {
        en: "the NVIDIA device plugin's time-slicing with renameByDefault: true advertises shared GPUs as {offered}",
        ja: "NVIDIA device plugin のタイムスライスで \
        renameByDefault: true のため、共有 GPU は {offered} として公開されています",
    }
    /// the GPU is partitioned with MIG, and the mixed strategy advertises each profile by it…
    gpu_partitioned_mig_mixed_strategy() {
        en: "the GPU is partitioned with MIG, and the mixed strategy advertises each profile by its name",
        ja: "GPU が MIG で分割され、mixed 戦略では各プロファイルが名前で公開されます",
    }
    /// time-slicing is not renamed there (or is off), so the GPU is advertised as {offered}
    time_slicing_not_renamed_there(offered) {
        en: "time-slicing is not renamed there (or is off), so the GPU is advertised as {offered}",
        ja: "そこではタイムスライスが改名されていない（または無効）ため、GPU は {offered} として公開されています",
    }
    /// the device plugin advertises the GPU as {offered}
    device_plugin_advertises_gpu(offered) {
        en: "the device plugin advertises the GPU as {offered}",
        ja: "device plugin は GPU を {offered} として公開しています",
    }
    /// Waiting for {want} {res}, which no node it can go to advertises — but {who} advertise…
    resource_renamed_elsewhere(want, res, who: Said, offered, why: Said) {
        en: "Waiting for {want} {res}, which no node it can go to advertises — but {who} advertise {offered}: the device plugin runs; {why}. Change the \
        pod's resources.limits from {res}: {want} to {offered}: {want} (or set the device plugin to advertise {res}).",
        ja: "{res} を {want} 個待っていますが、行ける \
        Node はどれも公開していません — ただし {who} は {offered} を公開しています。device plugin は動いています。{why}。Pod の resources.limits を {res}: {want} から {offered}: {want} \
        に変えてください（または device plugin が {res} を公開するよう設定してください）。",
    }
    ///  since {s}
    since(s) {
        en: " since {s}",
        ja: "（{s} から）",
    }
    /// the node(s) with {r} it could run on
    nodes_with_it_could_run_on(r) {
        en: "the node(s) with {r} it could run on",
        ja: "行ける {r} の Node",
    }
    /// the node(s) it could run on
    nodes_it_could_run_on() {
        en: "the node(s) it could run on",
        ja: "行ける Node",
    }
    /// Waiting because {what} — {who} — are cordoned (spec.unschedulable{since}), perhaps le…
    waiting_because_cordoned_spec_unschedulable(what: Said, who, since: Said, first) {
        en: "Waiting because {what} — {who} — are cordoned (spec.unschedulable{since}), perhaps left over from maintenance. When the work there is done: \
        kubectl uncordon {first}.",
        ja: "{what}（{who}）が cordon されているため待っています（spec.unschedulable{since}）。メンテナンスの戻し忘れかもしれません。作業が終わっていれば：kubectl uncordon \
        {first}",
    }
    /// Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: r…
    requests_more_than_replica_time() {
        en: "Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: request 1 (a replica is not a bigger share of the \
        GPU).",
        ja: "タイムスライスの GPU のレプリカを2つ以上要求しており、device plugin が拒否します。1 を要求してください（レプリカを増やしても GPU の取り分は増えません）。",
    }
}
