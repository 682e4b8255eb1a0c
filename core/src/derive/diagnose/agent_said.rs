//! What the node agent's diagnoses say (no agent, a silent agent, time-slice contention), in
//! English and Japanese: one function per sentence, its parameters named. `agent.rs` decides
//! which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::Said;
use app::say;

/// No gpudash-agent runs on {name}: which pod holds which GPU replica, and how busy its…
pub(super) fn no_gpudash_agent_runs_which(name: &impl Display) -> Said {
    say!("No gpudash-agent runs on {name}: which pod holds which GPU replica, and how busy its GPUs are, are not known here — check that the agent \
        DaemonSet tolerates and selects this node.", "{name} で gpudash-agent が動いていません。どの Pod がどの GPU レプリカを持つか、GPU の使用率はここでは分かりません — agent の DaemonSet \
        がこの Node を選び、許容しているか確認してください。")
}

/// it never answered
pub(super) fn never_answered() -> Said {
    say!("it never answered", "一度も応答がありません")
}

/// last heard at {t}
pub(super) fn last_heard_at(t: &impl Display) -> Said {
    say!("last heard at {t}", "最後の応答は {t}")
}

/// The gpudash-agent on {name} is silent, {since}{why}: its GPU use and replica map are…
pub(super) fn gpudash_agent_silent_gpu_use(name: &impl Display, since: &Said, why: &impl Display) -> Said {
    say!("The gpudash-agent on {name} is silent, {since}{why}: its GPU use and replica map are shown as last known, marked stale — check the agent \
        pod's logs.", "{name} の gpudash-agent が応答しません（{since}{why}）。GPU の使用状況とレプリカの対応は最後に分かった値を「更新停止」として表示しています — agent の Pod のログを確認してください。"; since)
}

/// GPU {i} of {r} on {name} is {busy}% busy, shared by time-slicing between {holders} po…
pub(super) fn gpu_busy_shared_time_slicing(
    i: &impl Display,
    r: &impl Display,
    name: &impl Display,
    busy: &impl Display,
    holders: &impl Display,
    pods: &impl Display,
) -> Said {
    say!("GPU {i} of {r} on {name} is {busy}% busy, shared by time-slicing between {holders} pods ({pods}): each gets a slice of its time, none its \
        full speed — move a model to a free GPU or give it a whole one.", "{name} の {r} の GPU {i} は使用率 {busy}% で、{holders} 個の Pod \
        がタイムスライスで共有しています（{pods}）。各 Pod は時間の一部しか得られず、全速では動きません — モデルを空いている GPU に移すか、GPU を専有させてください。")
}
