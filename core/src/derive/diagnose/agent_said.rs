//! What the node agent's diagnoses say (no agent, a silent agent, time-slice contention), in
//! English and Japanese: one entry per sentence, its placeholders its parameters (`: Said` where
//! each language has its own words). `agent.rs` decides which applies.

gpudash_model::sentences! { "agent";
    /// No gpudash-agent runs on {name}: which pod holds which GPU replica, and how busy its…
    no_gpudash_agent_runs_which(name) {
        en: "No gpudash-agent runs on {name}: which pod holds which GPU replica, and how busy its GPUs are, are not known here — check that the agent \
        DaemonSet tolerates and selects this node.",
        ja: "{name} で gpudash-agent が動いていません。どの Pod がどの GPU レプリカを持つか、GPU の使用率はここでは分かりません — agent の DaemonSet \
        がこの Node を選び、許容しているか確認してください。",
    }
    /// it never answered
    never_answered() {
        en: "it never answered",
        ja: "一度も応答がありません",
    }
    /// last heard at {t}
    last_heard_at(t) {
        en: "last heard at {t}",
        ja: "最後の応答は {t}",
    }
    /// The gpudash-agent on {name} is silent, {since}{why}: its GPU use and replica map are…
    gpudash_agent_silent_gpu_use(name, since: Said, why) {
        en: "The gpudash-agent on {name} is silent, {since}{why}: its GPU use and replica map are shown as last known, marked stale — check the agent \
        pod's logs.",
        ja: "{name} の gpudash-agent が応答しません（{since}{why}）。GPU の使用状況とレプリカの対応は最後に分かった値を「更新停止」として表示しています — agent の Pod のログを確認してください。",
    }
    /// GPU {i} of {r} on {name} is {busy}% busy, shared by time-slicing between {holders} po…
    gpu_busy_shared_time_slicing(i, r, name, busy, holders, pods) {
        en: "GPU {i} of {r} on {name} is {busy}% busy, shared by time-slicing between {holders} pods ({pods}): each gets a slice of its time, none its \
        full speed — move a model to a free GPU or give it a whole one.",
        ja: "{name} の {r} の GPU {i} は使用率 {busy}% で、{holders} 個の Pod \
        がタイムスライスで共有しています（{pods}）。各 Pod は時間の一部しか得られず、全速では動きません — モデルを空いている GPU に移すか、GPU を専有させてください。",
    }
}
