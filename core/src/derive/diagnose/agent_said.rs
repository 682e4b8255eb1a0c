//! What the node agent's diagnoses say (no agent, a silent agent, time-slice contention), in
//! English and Japanese: one function per sentence, its parameters named. `agent.rs` decides
//! which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const NO_GPUDASH_AGENT_RUNS_WHICH: Sentence = Sentence {
    key: "agent.no_gpudash_agent_runs_which",
    en: "No gpudash-agent runs on {name}: which pod holds which GPU replica, and how busy its GPUs are, are not known here — check that the agent \
        DaemonSet tolerates and selects this node.",
    ja: "{name} で gpudash-agent が動いていません。どの Pod がどの GPU レプリカを持つか、GPU の使用率はここでは分かりません — agent の DaemonSet \
        がこの Node を選び、許容しているか確認してください。",
};

/// No gpudash-agent runs on {name}: which pod holds which GPU replica, and how busy its…
pub(super) fn no_gpudash_agent_runs_which(name: &impl Display) -> Said {
    NO_GPUDASH_AGENT_RUNS_WHICH.say(&[("name", &Said::text(name))])
}

const NEVER_ANSWERED: Sentence =
    Sentence { key: "agent.never_answered", en: "it never answered", ja: "一度も応答がありません" };

/// it never answered
pub(super) fn never_answered() -> Said {
    NEVER_ANSWERED.say(&[])
}

const LAST_HEARD_AT: Sentence =
    Sentence { key: "agent.last_heard_at", en: "last heard at {t}", ja: "最後の応答は {t}" };

/// last heard at {t}
pub(super) fn last_heard_at(t: &impl Display) -> Said {
    LAST_HEARD_AT.say(&[("t", &Said::text(t))])
}

const GPUDASH_AGENT_SILENT_GPU_USE: Sentence = Sentence {
    key: "agent.gpudash_agent_silent_gpu_use",
    en: "The gpudash-agent on {name} is silent, {since}{why}: its GPU use and replica map are shown as last known, marked stale — check the agent \
        pod's logs.",
    ja: "{name} の gpudash-agent が応答しません（{since}{why}）。GPU の使用状況とレプリカの対応は最後に分かった値を「更新停止」として表示しています — agent の Pod のログを確認してください。",
};

/// The gpudash-agent on {name} is silent, {since}{why}: its GPU use and replica map are…
pub(super) fn gpudash_agent_silent_gpu_use(name: &impl Display, since: &Said, why: &impl Display) -> Said {
    GPUDASH_AGENT_SILENT_GPU_USE.say(&[("name", &Said::text(name)), ("since", since), ("why", &Said::text(why))])
}

const GPU_BUSY_SHARED_TIME_SLICING: Sentence = Sentence {
    key: "agent.gpu_busy_shared_time_slicing",
    en: "GPU {i} of {r} on {name} is {busy}% busy, shared by time-slicing between {holders} pods ({pods}): each gets a slice of its time, none its \
        full speed — move a model to a free GPU or give it a whole one.",
    ja: "{name} の {r} の GPU {i} は使用率 {busy}% で、{holders} 個の Pod \
        がタイムスライスで共有しています（{pods}）。各 Pod は時間の一部しか得られず、全速では動きません — モデルを空いている GPU に移すか、GPU を専有させてください。",
};

/// GPU {i} of {r} on {name} is {busy}% busy, shared by time-slicing between {holders} po…
pub(super) fn gpu_busy_shared_time_slicing(
    i: &impl Display,
    r: &impl Display,
    name: &impl Display,
    busy: &impl Display,
    holders: &impl Display,
    pods: &impl Display,
) -> Said {
    GPU_BUSY_SHARED_TIME_SLICING.say(&[
        ("i", &Said::text(i)),
        ("r", &Said::text(r)),
        ("name", &Said::text(name)),
        ("busy", &Said::text(busy)),
        ("holders", &Said::text(holders)),
        ("pods", &Said::text(pods)),
    ])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    NO_GPUDASH_AGENT_RUNS_WHICH,
    NEVER_ANSWERED,
    LAST_HEARD_AT,
    GPUDASH_AGENT_SILENT_GPU_USE,
    GPU_BUSY_SHARED_TIME_SLICING,
];
