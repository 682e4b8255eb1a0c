//! What the DRA diagnoses say (dra-driver-missing, dra-deviceclass-missing, a claim no pod holds,
//! GPUs offered twice), in English and Japanese: one entry per sentence, its placeholders its
//! parameters (`: Said` where each language has its own words). `dra.rs` decides which applies.

gpudash_model::sentences! { "dra";
    ///  Pods waiting for a GPU claim: {who}.
    pods_waiting_gpu_claim(who: Said) {
        en: " Pods waiting for a GPU claim: {who}.",
        ja: "GPU の claim を待っている Pod：{who}。",
    }
    /// {name} looks like a GPU node but publishes no GPU ResourceSlice, while the cluster ha…
    looks_like_gpu_node_but(name, classes, stakes: Said) {
        en: "{name} looks like a GPU node but publishes no GPU ResourceSlice, while the cluster hands out GPUs through DRA (DeviceClass {classes}) and \
        runs no device plugin: the DRA driver's kubelet plugin is not running there — check its DaemonSet's pods on this node (kubectl get pods -A -o \
        wide --field-selector spec.nodeName={name}) and kubectl get resourceslices --field-selector spec.nodeName={name}.{stakes}",
        ja: "{name} は GPU Node \
        に見えますが GPU の ResourceSlice を公開していません。クラスターは DRA で GPU を配り（DeviceClass {classes}）、device plugin は動いていません。DRA ドライバーの kubelet プラグインがそこで動いていません — \
        この Node の DaemonSet の Pod（kubectl get pods -A -o wide --field-selector spec.nodeName={name}）と kubectl get resourceslices --field-selector \
        spec.nodeName={name} を確認してください。{stakes}",
    }
    /// its ResourceClaimTemplate {ns}/{t}
    resourceclaimtemplate(ns, t) {
        en: "its ResourceClaimTemplate {ns}/{t}",
        ja: "ResourceClaimTemplate {ns}/{t}",
    }
    /// its ResourceClaim {ns}/{c}
    resourceclaim(ns, c) {
        en: "its ResourceClaim {ns}/{c}",
        ja: "ResourceClaim {ns}/{c}",
    }
    /// its claim
    claim() {
        en: "its claim",
        ja: "その claim",
    }
    /// {ns}/{pn} cannot be scheduled: {via} asks for DeviceClass {class}, which does not exi…
    cannot_scheduled_asks_deviceclass_which(ns, pn, via: Said, class) {
        en: "{ns}/{pn} cannot be scheduled: {via} asks for DeviceClass {class}, which does not exist (kubectl get deviceclasses lists those that do) — \
        fix the class name in the template, or install the DRA driver that provides it.",
        ja: "{ns}/{pn} はスケジュールできません。{via} が求める DeviceClass {class} \
        は存在しません（あるものは kubectl get deviceclasses で一覧できます）— テンプレートのクラス名を直すか、それを提供する DRA ドライバーを入れてください。",
    }
    /// ResourceClaim {ns}/{name} asks for DeviceClass {class}, which does not exist: it can…
    resourceclaim_asks_deviceclass_which_does(ns, name, class) {
        en: "ResourceClaim {ns}/{name} asks for DeviceClass {class}, which does not exist: it can never be allocated, and pods that use it will wait — \
        fix the class name or install the DRA driver that provides it.",
        ja: "ResourceClaim {ns}/{name} が求める DeviceClass {class} は存在しません。割り当てられることはなく、使う \
        Pod は待ち続けます — クラス名を直すか、それを提供する DRA ドライバーを入れてください。",
    }
    /// ResourceClaimTemplate {ns}/{name} asks for DeviceClass {class}, which does not exist:…
    resourceclaimtemplate_asks_deviceclass_which_does(ns, name, class) {
        en: "ResourceClaimTemplate {ns}/{name} asks for DeviceClass {class}, which does not exist: every pod made from it will wait — fix the class name \
        or install the DRA driver that provides it.",
        ja: "ResourceClaimTemplate {ns}/{name} が求める DeviceClass {class} は存在しません。これから作られる Pod はすべて待ち続けます — \
        クラス名を直すか、それを提供する DRA ドライバーを入れてください。",
    }
    /// ResourceClaim {ns}/{name} holds {devs} but no pod uses it: the device stays allocated…
    resourceclaim_holds_but_no_pod(ns, name, devs: Said) {
        en: "ResourceClaim {ns}/{name} holds {devs} but no pod uses it: the device stays allocated and no other claim can get it — delete the claim \
        (kubectl -n {ns} delete resourceclaim {name}) if nothing will use it.",
        ja: "ResourceClaim {ns}/{name} は {devs} を持っていますが、使っている Pod \
        がありません。デバイスは割り当てられたままで、ほかの claim は得られません — 使う予定がなければ claim を削除してください（kubectl -n {ns} delete resourceclaim {name}）。",
    }
    /// {nn} offers its GPUs twice: the device plugin advertises {pc} nvidia.com/gpu and the…
    offers_gpus_twice_device_plugin(nn, pc, dr, dc) {
        en: "{nn} offers its GPUs twice: the device plugin advertises {pc} nvidia.com/gpu and the DRA driver {dr} publishes {dc} device(s); the two \
        allocators do not know of each other and can give one GPU to two pods — run one of them on this node (disable the device plugin where the DRA \
        driver runs).",
        ja: "{nn} は GPU を二重に提供しています。device plugin が nvidia.com/gpu を {pc} 個公開し、DRA ドライバー {dr} がデバイスを {dc} 個公開しています。2つの割り当て機構は互いを知らず、1つの \
        GPU を2つの Pod に渡しうるので — この Node ではどちらか一方だけを動かしてください（DRA ドライバーが動く所では device plugin を無効に）。",
    }
}
