//! What the DRA diagnoses say (dra-driver-missing, dra-deviceclass-missing, a claim no pod holds,
//! GPUs offered twice), in English and Japanese: one function per sentence, its parameters named.
//! `dra.rs` decides which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const PODS_WAITING_GPU_CLAIM: Sentence = Sentence {
    key: "dra.pods_waiting_gpu_claim",
    en: " Pods waiting for a GPU claim: {who}.",
    ja: "GPU の claim を待っている Pod：{who}。",
};

///  Pods waiting for a GPU claim: {who}.
pub(super) fn pods_waiting_gpu_claim(who: &Said) -> Said {
    PODS_WAITING_GPU_CLAIM.say(&[("who", who)])
}

const LOOKS_LIKE_GPU_NODE_BUT: Sentence = Sentence {
    key: "dra.looks_like_gpu_node_but",
    en: "{name} looks like a GPU node but publishes no GPU ResourceSlice, while the cluster hands out GPUs through DRA (DeviceClass {classes}) and \
        runs no device plugin: the DRA driver's kubelet plugin is not running there — check its DaemonSet's pods on this node (kubectl get pods -A -o \
        wide --field-selector spec.nodeName={name}) and kubectl get resourceslices --field-selector spec.nodeName={name}.{stakes}",
    ja: "{name} は GPU Node \
        に見えますが GPU の ResourceSlice を公開していません。クラスターは DRA で GPU を配り（DeviceClass {classes}）、device plugin は動いていません。DRA ドライバーの kubelet プラグインがそこで動いていません — \
        この Node の DaemonSet の Pod（kubectl get pods -A -o wide --field-selector spec.nodeName={name}）と kubectl get resourceslices --field-selector \
        spec.nodeName={name} を確認してください。{stakes}",
};

/// {name} looks like a GPU node but publishes no GPU ResourceSlice, while the cluster ha…
pub(super) fn looks_like_gpu_node_but(name: &impl Display, classes: &impl Display, stakes: &Said) -> Said {
    LOOKS_LIKE_GPU_NODE_BUT.say(&[("name", &Said::text(name)), ("classes", &Said::text(classes)), ("stakes", stakes)])
}

const RESOURCECLAIMTEMPLATE: Sentence = Sentence {
    key: "dra.resourceclaimtemplate",
    en: "its ResourceClaimTemplate {ns}/{t}",
    ja: "ResourceClaimTemplate {ns}/{t}",
};

/// its ResourceClaimTemplate {ns}/{t}
pub(super) fn resourceclaimtemplate(ns: &impl Display, t: &impl Display) -> Said {
    RESOURCECLAIMTEMPLATE.say(&[("ns", &Said::text(ns)), ("t", &Said::text(t))])
}

const RESOURCECLAIM: Sentence =
    Sentence { key: "dra.resourceclaim", en: "its ResourceClaim {ns}/{c}", ja: "ResourceClaim {ns}/{c}" };

/// its ResourceClaim {ns}/{c}
pub(super) fn resourceclaim(ns: &impl Display, c: &impl Display) -> Said {
    RESOURCECLAIM.say(&[("ns", &Said::text(ns)), ("c", &Said::text(c))])
}

const CLAIM: Sentence = Sentence { key: "dra.claim", en: "its claim", ja: "その claim" };

/// its claim
pub(super) fn claim() -> Said {
    CLAIM.say(&[])
}

const CANNOT_SCHEDULED_ASKS_DEVICECLASS_WHICH: Sentence = Sentence {
    key: "dra.cannot_scheduled_asks_deviceclass_which",
    en: "{ns}/{pn} cannot be scheduled: {via} asks for DeviceClass {class}, which does not exist (kubectl get deviceclasses lists those that do) — \
        fix the class name in the template, or install the DRA driver that provides it.",
    ja: "{ns}/{pn} はスケジュールできません。{via} が求める DeviceClass {class} \
        は存在しません（あるものは kubectl get deviceclasses で一覧できます）— テンプレートのクラス名を直すか、それを提供する DRA ドライバーを入れてください。",
};

/// {ns}/{pn} cannot be scheduled: {via} asks for DeviceClass {class}, which does not exi…
pub(super) fn cannot_scheduled_asks_deviceclass_which(
    ns: &impl Display,
    pn: &impl Display,
    via: &Said,
    class: &impl Display,
) -> Said {
    CANNOT_SCHEDULED_ASKS_DEVICECLASS_WHICH.say(&[
        ("ns", &Said::text(ns)),
        ("pn", &Said::text(pn)),
        ("via", via),
        ("class", &Said::text(class)),
    ])
}

const RESOURCECLAIM_ASKS_DEVICECLASS_WHICH_DOES: Sentence = Sentence {
    key: "dra.resourceclaim_asks_deviceclass_which_does",
    en: "ResourceClaim {ns}/{name} asks for DeviceClass {class}, which does not exist: it can never be allocated, and pods that use it will wait — \
        fix the class name or install the DRA driver that provides it.",
    ja: "ResourceClaim {ns}/{name} が求める DeviceClass {class} は存在しません。割り当てられることはなく、使う \
        Pod は待ち続けます — クラス名を直すか、それを提供する DRA ドライバーを入れてください。",
};

/// ResourceClaim {ns}/{name} asks for DeviceClass {class}, which does not exist: it can…
pub(super) fn resourceclaim_asks_deviceclass_which_does(
    ns: &impl Display,
    name: &impl Display,
    class: &impl Display,
) -> Said {
    RESOURCECLAIM_ASKS_DEVICECLASS_WHICH_DOES.say(&[
        ("ns", &Said::text(ns)),
        ("name", &Said::text(name)),
        ("class", &Said::text(class)),
    ])
}

const RESOURCECLAIMTEMPLATE_ASKS_DEVICECLASS_WHICH_DOES: Sentence = Sentence {
    key: "dra.resourceclaimtemplate_asks_deviceclass_which_does",
    en: "ResourceClaimTemplate {ns}/{name} asks for DeviceClass {class}, which does not exist: every pod made from it will wait — fix the class name \
        or install the DRA driver that provides it.",
    ja: "ResourceClaimTemplate {ns}/{name} が求める DeviceClass {class} は存在しません。これから作られる Pod はすべて待ち続けます — \
        クラス名を直すか、それを提供する DRA ドライバーを入れてください。",
};

/// ResourceClaimTemplate {ns}/{name} asks for DeviceClass {class}, which does not exist:…
pub(super) fn resourceclaimtemplate_asks_deviceclass_which_does(
    ns: &impl Display,
    name: &impl Display,
    class: &impl Display,
) -> Said {
    RESOURCECLAIMTEMPLATE_ASKS_DEVICECLASS_WHICH_DOES.say(&[
        ("ns", &Said::text(ns)),
        ("name", &Said::text(name)),
        ("class", &Said::text(class)),
    ])
}

const RESOURCECLAIM_HOLDS_BUT_NO_POD: Sentence = Sentence {
    key: "dra.resourceclaim_holds_but_no_pod",
    en: "ResourceClaim {ns}/{name} holds {devs} but no pod uses it: the device stays allocated and no other claim can get it — delete the claim \
        (kubectl -n {ns} delete resourceclaim {name}) if nothing will use it.",
    ja: "ResourceClaim {ns}/{name} は {devs} を持っていますが、使っている Pod \
        がありません。デバイスは割り当てられたままで、ほかの claim は得られません — 使う予定がなければ claim を削除してください（kubectl -n {ns} delete resourceclaim {name}）。",
};

/// ResourceClaim {ns}/{name} holds {devs} but no pod uses it: the device stays allocated…
pub(super) fn resourceclaim_holds_but_no_pod(ns: &impl Display, name: &impl Display, devs: &Said) -> Said {
    RESOURCECLAIM_HOLDS_BUT_NO_POD.say(&[("ns", &Said::text(ns)), ("name", &Said::text(name)), ("devs", devs)])
}

const OFFERS_GPUS_TWICE_DEVICE_PLUGIN: Sentence = Sentence {
    key: "dra.offers_gpus_twice_device_plugin",
    en: "{nn} offers its GPUs twice: the device plugin advertises {pc} nvidia.com/gpu and the DRA driver {dr} publishes {dc} device(s); the two \
        allocators do not know of each other and can give one GPU to two pods — run one of them on this node (disable the device plugin where the DRA \
        driver runs).",
    ja: "{nn} は GPU を二重に提供しています。device plugin が nvidia.com/gpu を {pc} 個公開し、DRA ドライバー {dr} がデバイスを {dc} 個公開しています。2つの割り当て機構は互いを知らず、1つの \
        GPU を2つの Pod に渡しうるので — この Node ではどちらか一方だけを動かしてください（DRA ドライバーが動く所では device plugin を無効に）。",
};

/// {nn} offers its GPUs twice: the device plugin advertises {pc} nvidia.com/gpu and the…
pub(super) fn offers_gpus_twice_device_plugin(
    nn: &impl Display,
    pc: &impl Display,
    dr: &impl Display,
    dc: &impl Display,
) -> Said {
    OFFERS_GPUS_TWICE_DEVICE_PLUGIN.say(&[
        ("nn", &Said::text(nn)),
        ("pc", &Said::text(pc)),
        ("dr", &Said::text(dr)),
        ("dc", &Said::text(dc)),
    ])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    PODS_WAITING_GPU_CLAIM,
    LOOKS_LIKE_GPU_NODE_BUT,
    RESOURCECLAIMTEMPLATE,
    RESOURCECLAIM,
    CLAIM,
    CANNOT_SCHEDULED_ASKS_DEVICECLASS_WHICH,
    RESOURCECLAIM_ASKS_DEVICECLASS_WHICH_DOES,
    RESOURCECLAIMTEMPLATE_ASKS_DEVICECLASS_WHICH_DOES,
    RESOURCECLAIM_HOLDS_BUT_NO_POD,
    OFFERS_GPUS_TWICE_DEVICE_PLUGIN,
];
