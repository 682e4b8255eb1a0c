//! The strings of the views the browser renders too (header, overview, cards, pending,
//! diagnoses). Kubernetes words stay as operators type them.

catalog! {
    /// The live views' strings.
    T {
        // The document and the header.
        title_pending: "Pending pods · gpudash", "Pending の Pod · gpudash";
        title_diagnoses: "Diagnoses · gpudash", "診断 · gpudash";
        title_history: "History · gpudash", "履歴 · gpudash";
        title_fit: "Will it fit? · gpudash", "配置できるか · gpudash";
        title_quotas: "GPU quotas · gpudash", "GPU クォータ · gpudash";
        title_reports: "GPU-hours · gpudash", "GPU 時間 · gpudash";
        nav_label: "Pages", "ページ";
        nav_overview: "Overview", "概要";
        nav_pending: "Pending ({0})", "Pending ({0})";
        nav_diagnoses: "Diagnoses ({0})", "診断 ({0})";
        nav_history: "History", "履歴";
        nav_quotas: "Quotas", "クォータ";
        nav_reports: "GPU-hours", "GPU 時間";
        nav_fit: "Will it fit?", "配置できるか";
        lang_label: "Language", "言語";
        source_demo: "SIMULATED cluster (demo)", "シミュレーションのクラスター（デモ）";
        source_cluster: "cluster {0}", "クラスター {0}";
        status_since: "since {0} ({1} ago)", "{0} から（{1}前）";
        status_conn_lost: "Stale {0} — connection to gpudash lost, reconnecting…", "更新停止 {0} — gpudash への接続が切れました。再接続中…";
        status_watch_down: "Stale {0} — the cluster watch is down{1}; showing the last known state", "更新停止 {0} — クラスターの監視が止まっています{1}。最後に分かった状態を表示しています";
        status_connecting: "Connecting… first sync {0}/{1} kinds, {2} objects", "接続中… 初回同期 {0}/{1} 種類、{2} オブジェクト";
        status_live: "Live · revision {0} · updated {1}", "ライブ · リビジョン {0} · {1} 更新";
        status_snapshot: "Snapshot · revision {0} · as of {1} ({2})", "スナップショット · リビジョン {0} · {1} 時点（{2}）";
        status_refreshes: "updates by itself", "自動更新";
        status_reload: "reload for the latest", "最新はページを再読み込み";
        // Overview.
        overview_title: "GPU overview", "GPU の概要";
        totals_label: "Cluster totals", "クラスターの合計";
        totals_nodes: "nodes ready", "Ready の Node";
        totals_gpu: "GPU units held", "使用中の GPU ユニット";
        totals_pending: "pending pods", "Pending の Pod";
        totals_blocked: "+ {0} blocked by quota", "+ クォータで止められたもの {0}";
        totals_critical: "critical", "重大";
        totals_warnings: "warnings", "警告";
        filter_namespace: "Namespace ", "Namespace ";
        filter_all: "all", "すべて";
        filter_label: "Node label ", "Node のラベル ";
        filter_submit: "Filter", "絞り込む";
        // Node cards.
        card_ready: "✓ Ready", "✓ Ready";
        card_not_ready: "✗ Not ready", "✗ NotReady";
        card_cordoned: "⊘ Cordoned", "⊘ cordon 済み";
        card_unified: "unified memory", "ユニファイドメモリ";
        card_default_runtime: "{0} · default runtime {1}", "{0} · 既定のランタイム {1}";
        card_pending: "◔ {0} pending", "◔ Pending {0}";
        card_agent_ok: "agent ✓", "agent ✓";
        card_agent_silent: "⏸ agent silent since {0}", "⏸ agent が {0} から応答なし";
        card_agent_never: "⏸ agent never answered", "⏸ agent の応答なし";
        card_no_gpu: "No GPU resources advertised", "GPU リソースの公開なし";
        card_outside: "GPU used outside the scheduler", "スケジューラー外で使われている GPU";
        slot_free: "free", "空き";
        slot_out: "✖ out of service", "✖ 使用不可";
        row_units: "units", "ユニット";
        row_unknown: "replicas (GPU unknown)", "レプリカ（GPU 不明）";
        row_slices: "slices", "スライス";
        row_gpu: "GPU {0}", "GPU {0}";
        caption_held: "{0}/{1} held", "{0}/{1} 使用中";
        caption_out: " · {0} out of service", " · 使用不可 {0}";
        caption_mig: "MIG slices · {0}", "MIG スライス · {0}";
        caption_shared: "{0} GPU × {1} {2} replicas · {3}", "GPU {0} 基 × {2} {1} レプリカ · {3}";
        caption_shared_n: "{0} GPUs × {1} {2} replicas · {3}", "GPU {0} 基 × {2} {1} レプリカ · {3}";
        caption_time_slicing: "time-slicing", "タイムスライス";
        caption_shared_unknown: "shared, GPU count unknown · {0}", "共有、GPU 数不明 · {0}";
        caption_whole: "{0} whole GPU · {1}", "GPU {0} 基（専有） · {1}";
        caption_whole_n: "{0} whole GPUs · {1}", "GPU {0} 基（専有） · {1}";
        caption_units: "{0} units, GPU count unknown · {1}", "{0} ユニット、GPU 数不明 · {1}";
        caption_dra: "DRA devices · {0}/{1} allocated", "DRA デバイス · {0}/{1} 割り当て済み";
        note_no_labels: "No GPU feature-discovery labels: whole GPUs or time-slicing replicas cannot be told apart.", "GPU feature-discovery \
            のラベルがないため、専有 GPU かタイムスライスのレプリカかを区別できません。";
        note_placement_unknown: "Kubernetes does not report which physical GPU each replica is on; placement shown as unknown.", "各レプリカがどの物理 GPU にあるかを \
            Kubernetes は報告しないため、配置は不明として表示しています。";
        // Memory bars.
        mem_unified: "Unified memory (CPU + GPU)", "ユニファイドメモリ（CPU + GPU）";
        mem_memory: "Memory", "メモリ";
        mem_allocatable: "{0} · {1} allocatable", "{0} · 割り当て可能 {1}";
        mem_used: "used", "使用量";
        mem_requests: "requests", "requests";
        mem_limits: "limits", "limits";
        mem_board: "board use", "実使用";
        mem_unknown: "unknown (no metrics)", "不明（メトリクスなし）";
        mem_over: "⚠ Limits exceed the board by {0}", "⚠ limits がボードを {0} 超えています";
        mem_unbounded: "{0} container(s) without a memory limit (unbounded)", "メモリ limit のないコンテナー {0} 個（上限なし）";
        // Pending.
        pending_title: "Pending pods", "Pending の Pod";
        pending_none: "No pod is waiting for the scheduler.", "スケジューラーを待っている Pod はありません。";
        pending_blocked: "⊘ blocked by quota {0}", "⊘ クォータで停止 {0}";
        pending_waiting: "◔ waiting {0}", "◔ {0}待機中";
        pending_memory: "{0} memory", "メモリ {0}";
        pending_scheduler: "scheduler: {0}", "スケジューラー: {0}";
        pending_claim: "claim ", "claim ";
        pending_nodes_of: "{0} of {1} nodes", "{1} Node 中 {0}";
        pending_nodes_of_1: "{0} of {1} node", "{1} Node 中 {0}";
        pending_nodes: "{0} nodes", "{0} Node";
        pending_nodes_1: "{0} node", "{0} Node";
        pending_raw: "Scheduler message", "スケジューラーのメッセージ（原文）";
        pending_history: "History of this pod", "この Pod の履歴";
        // Diagnoses.
        diagnoses_title: "Diagnoses", "診断";
        diagnoses_none: "Nothing to report.", "報告することはありません。";
        diagnosis_since: "for {0}", "{0}継続";
        sev_critical: "✖ critical", "✖ 重大";
        sev_warning: "⚠ warning", "⚠ 警告";
        sev_info: "ℹ info", "ℹ 情報";
        not_found: "Not found", "見つかりません";
        not_found_back: "Back to the overview", "概要に戻る";
    }
}
