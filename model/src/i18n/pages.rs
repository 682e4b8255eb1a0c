//! The strings of the pages only the server renders (node, history, fit, quotas) and of the
//! charts it draws.

catalog! {
    /// The server-rendered pages' strings.
    S {
        // Node page.
        node_title: "Node {0}", "Node {0}";
        node_missing: "No such node in the cluster (it may have been removed).", "クラスターにこの Node はありません（削除された可能性があります）。";
        node_holders: "GPU holders", "GPU を使っている Pod";
        col_namespace: "Namespace", "Namespace";
        col_pod: "Pod", "Pod";
        col_resource: "Resource", "リソース";
        col_count: "Count", "数";
        col_age: "Age", "経過時間";
        col_runtime_class: "RuntimeClass", "RuntimeClass";
        none: "— none —", "— なし —";
        node_dra: "DRA devices · ", "DRA デバイス · ";
        node_kubelet: "GPUs as the kubelet handed them out · ", "kubelet が割り当てた GPU · ";
        col_device: "Device", "デバイス";
        col_type: "Type", "種類";
        col_product: "Product", "製品";
        col_memory: "Memory", "メモリ";
        col_uuid: "UUID", "UUID";
        col_busy: "Busy", "使用率";
        col_memory_used: "Memory used", "使用メモリ";
        col_claims: "Claims", "Claim";
        col_pods: "Pods", "Pod";
        shared: " · shared", " · 共有";
        free: "free", "空き";
        share: "{0}/{1} (share {2})", "{0}/{1}（共有 {2}）";
        no_pod: "— no pod —", "— Pod なし —";
        replica: "{0}/{1} (replica {2})", "{0}/{1}（レプリカ {2}）";
        node_memory: "Memory by pod", "Pod ごとのメモリ";
        col_request: "Request", "Request";
        col_limit: "Limit", "Limit";
        col_used: "Used", "使用量";
        unbounded: "unbounded", "上限なし";
        unknown: "unknown", "不明";
        col_gpu_memory: "GPU memory", "GPU メモリ";
        node_split: "Board memory by holder", "ボードのメモリ（保持者別）";
        split_gpu_pods: "GPU memory of pods", "Pod の GPU メモリ";
        split_other_pods: "pods' own memory", "Pod 自身のメモリ";
        split_system: "system and the rest", "システムほか";
        split_free: "free", "空き";
        split_outside: "of which GPU memory outside pods: {0}", "うち Pod 外の GPU メモリ {0}";
        split_nvmap: "nvmap holds {0} in all (NvMapMemUsed)", "nvmap の合計 {0}（NvMapMemUsed）";
        split_no_metrics: "pods' own memory unknown (no metrics.k8s.io): counted with the rest", "Pod 自身のメモリは不明（metrics.k8s.io なし）：ほかに含めています";
        alt_gpumem: "GPU memory by pod on {0} over time", "{0} の Pod ごとの GPU メモリの推移";
        chart_gpumem: "GPU memory by pod", "Pod ごとの GPU メモリ";
        chart_nvmap: "all GPU memory (nvmap)", "GPU メモリ合計（nvmap）";
        node_conditions: "Conditions", "Condition";
        node_labels: "GPU labels", "GPU のラベル";
        // History page.
        history_title: "History", "履歴";
        history_ranges: "Time range", "期間";
        history_pod: "Pod {0}", "Pod {0}";
        alt_pod: "Pending and running intervals of {0}", "{0} の Pending と実行の期間";
        alt_pending: "Number of pending pods over time", "Pending の Pod 数の推移";
        alt_waits: "How long pods waited to be scheduled", "Pod がスケジュールされるまでの待ち時間";
        alt_busy: "How busy each GPU of {0} on {1} was, as its agent measured", "{1} の {0} の各 GPU の使用率（agent の計測）";
        alt_gpu: "GPU allocation of {0} on {1} over time", "{1} の {0} の GPU 割り当ての推移";
        alt_memory: "Memory use, requests and limits on {0} over time", "{0} のメモリ使用量・requests・limits の推移";
        // What-if page.
        fit_title: "Will my next model fit?", "次のモデルは配置できるか？";
        fit_intro: "Checks a workload against the cluster's current allocation with the default scheduler's filters. Nothing is created in the \
            cluster.", "ワークロードを、クラスターの現在の割り当てに対して既定のスケジューラーのフィルターで確かめます。クラスターには何も作成しません。";
        fit_gpu_resource: "GPU resource", "GPU リソース";
        fit_gpu_count: "GPUs per replica", "レプリカあたりの GPU";
        fit_cpu_request: "CPU request", "CPU request";
        fit_cpu_limit: "CPU limit", "CPU limit";
        fit_memory_request: "Memory request", "メモリ request";
        fit_memory_limit: "Memory limit", "メモリ limit";
        fit_node_selector: "Node selector", "nodeSelector";
        fit_tolerations: "Tolerations", "tolerations";
        fit_replicas: "Replicas", "レプリカ数";
        fit_yaml: "…or paste a Pod or Deployment (YAML or JSON; replaces the fields above), with the ResourceClaimTemplates it uses as further --- \
            documents", "…または Pod か Deployment を貼り付け（YAML か JSON。上の項目の代わりに使います）。使う ResourceClaimTemplate は --- で区切って続けます";
        fit_check: "Check", "確かめる";
        fit_yes: "✓ It fits", "✓ 配置できます";
        fit_no: "✗ It does not fit", "✗ 配置できません";
        fit_suggestions: "What would make it fit", "配置できるようにするには";
        fit_update_completes: "Its update can complete", "この更新は完了できます";
        fit_update_stuck: "Its update cannot complete as written", "この更新は書かれたままでは完了しません";
        fit_col_node: "Node", "Node";
        fit_col_verdict: "Verdict", "判定";
        fit_col_reasons: "Reasons (scheduler's words)", "理由（スケジューラーの原文）";
        fit_col_replicas: "Replicas it can take", "受け入れられるレプリカ数";
        fit_col_headroom: "Unified memory headroom after placing (requests / limits)", "配置後のユニファイドメモリの余裕（requests / limits）";
        fit_fits: "✓ fits", "✓ 可";
        fit_no_fit: "✗ does not fit", "✗ 不可";
        fit_headroom: "{0} / {1} of {2}", "{2} 中 {0} / {1}";
        fit_over: "−{0} (over)", "−{0}（超過）";
        fit_board_free: "{0} · {1} really free now (agent)", "{0} · 現在の実際の空き {1}（agent）";
        // Charts.
        chart_no_data: "no data ({0})", "データなし（{0}）";
        chart_site_held: "GPU units held", "使用中の GPU ユニット";
        chart_site_units: "GPU units", "GPU ユニット";
        chart_site_pending: "pending pods", "Pending の Pod";
        gap_not_running: "gpudash not running", "gpudash 停止中";
        gap_watch_stale: "cluster watch stale", "クラスターの監視が停止";
        gap_site_not_live: "site not live (stale or unreachable)", "サイトが稼働していない（更新なし・接続不能）";
        chart_running: "running", "実行中";
        chart_pending: "pending", "Pending";
        chart_pending_title: "Pending pods", "Pending の Pod";
        chart_pending_gpu: "pending for a GPU", "GPU 待ちの Pending";
        chart_allocated: "allocated", "割り当て済み";
        chart_allocatable: "allocatable", "割り当て可能";
        chart_capacity: "capacity", "容量";
        chart_memory: "memory", "メモリ";
        chart_used: "used", "使用量";
        chart_board: "board / allocatable", "ボード / 割り当て可能";
        chart_board_used: "board use (agent)", "ボード実使用（agent）";
        chart_busy: "GPU busy", "GPU 使用率";
        chart_wait: "wait (one bar per pending pod)", "待ち時間（Pending の Pod ごとに1本）";
        // The fleet page (`gpudash fleet`).
        fleet_brand: "gpudash fleet", "gpudash フリート";
        fleet_title: "Fleet · {0} sites", "フリート · {0} サイト";
        fleet_live: "● live", "● 稼働中";
        fleet_stale: "⏸ stale", "⏸ 更新なし";
        fleet_stale_since: "⏸ stale since {0}", "⏸ {0} から更新なし";
        fleet_unreachable: "✖ unreachable", "✖ 接続不能";
        fleet_unreachable_since: "✖ unreachable since {0}", "✖ {0} から接続不能";
        fleet_no_view: "No view from this site yet.", "このサイトからのビューはまだありません。";
        fleet_nodes_ready: "nodes ready", "Ready の Node";
        fleet_gpu_held: "GPU units held", "確保中の GPU";
        fleet_pending: "pending", "Pending";
        fleet_critical: "critical", "重大";
        fleet_warnings: "warnings", "警告";
        fleet_held: "held", "確保中";
        fleet_status: "{0} live · {1} stale · {2} unreachable · as of {3}",
            "稼働中 {0} · 更新なし {1} · 接続不能 {2} · {3} 時点";
        fleet_history: "History", "履歴";
        fleet_chart_alt: "GPU units and pending pods at {0} over time", "{0} の GPU と Pending の Pod の推移";
        fleet_metrics: "Metrics", "メトリクス";
        // Sign-in pages.
        login_title: "gpudash · sign in", "gpudash · サインイン";
        login_token: "Access token", "アクセストークン";
        login_submit: "Sign in", "サインイン";
        login_wrong: "Wrong token.", "トークンが違います。";
        login_again: "Try again", "もう一度";
        login_oidc: "Sign in with your organisation's account", "組織のアカウントでサインイン";
        login_or_token: "Or with an access token:", "またはアクセストークンで：";
        login_failed: "Sign-in did not succeed:", "サインインできませんでした：";
        login_done: "Signed in — opening gpudash…", "サインインしました — gpudash を開いています…";
        logout_title: "gpudash · sign out", "gpudash · サインアウト";
        logout_submit: "Sign out", "サインアウト";
        // Quotas page.
        quotas_title: "GPU quotas", "GPU クォータ";
        // GPU-hours reports.
        reports_title: "GPU-hours", "GPU 時間";
        reports_intro: "GPU-hours each team, workload and pod held, how much of that the GPU was busy, and how long \
            models waited — from history. A GPU-hour is one physical GPU for one hour: a time-slicing \
            replica counts as its share of the GPU, a MIG slice as its share of the compute. Used = held \
            time weighted by the busy % the node agent measured; idle-held = held while the GPU was under 5 \
            % busy.", "各チーム・ワークロード・Pod が確保した GPU 時間、そのうち GPU \
            が実際に動いていた割合、モデルが待った時間を履歴から集計します。\
            1 GPU 時間は物理 GPU 1 基の 1 時間です（タイムスライスのレプリカは GPU \
            の持ち分、MIG スライスは演算ユニットの持ち分で数えます）。使用 = \
            確保時間 × ノードエージェントが計測した使用率、アイドル確保 = \
            使用率 5 % 未満の間の確保。";
        reports_by: "Group by", "集計単位";
        reports_by_namespace: "Namespace", "Namespace";
        reports_by_workload: "Workload", "ワークロード";
        reports_by_pod: "Pod", "Pod";
        reports_prev: "← previous month", "← 前月";
        reports_next: "next month →", "翌月 →";
        reports_range: "{0} to {1} ({2})", "{0} 〜 {1}（{2}）";
        reports_gaps: "History has gaps here ({0} in all): that time is left out of every figure, never counted as held \
            or free.", "この期間の履歴には欠落があります（合計 {0}）。\
            その時間はどの数値にも含めず、確保とも空きとも数えていません。";
        reports_none: "No pod held or waited for a GPU in this range.",
            "この期間に GPU を確保した Pod も、GPU を待った Pod もありません。";
        reports_csv: "Download CSV", "CSV をダウンロード";
        reports_total: "Total", "合計";
        reports_chart: "GPU-hours held per namespace per day", "Namespace ごとの日別確保 GPU 時間";
        reports_unmeasured: "Used and idle-held are blank where no node agent measured the GPU.",
            "使用・アイドル確保が空欄の行は、ノードエージェントが GPU \
            を計測していない時間です。";
        col_workload: "Workload", "ワークロード";
        col_held: "GPU-h held", "確保 GPU 時間";
        col_measured: "GPU-h measured", "計測済み GPU 時間";
        col_gpu_used: "GPU-h used", "使用 GPU 時間";
        col_idle: "GPU-h idle-held", "アイドル確保 GPU 時間";
        col_memory_hours: "Memory GiB-h (unified)", "メモリ GiB 時間（統合メモリ）";
        col_waited: "Hours waiting for a GPU", "GPU 待ち時間";
        quotas_blocked: "{0} workload(s) cannot create their pods: a quota refuses them", "{0} 件のワークロードが Pod を作成できません（クォータが拒否）";
        quotas_none: "No ResourceQuota limits a GPU resource here.", "GPU リソースを制限する ResourceQuota はありません。";
        quotas_free: "{0} free {1} in the cluster", "クラスターで空いている {1}: {0}";
        quotas_class: "DeviceClass {0}", "DeviceClass {0}";
        quotas_no_pod: "no pod holds it now", "今使っている Pod はありません";
        quotas_full: "✖ full", "✖ 上限";
        quotas_used: "{0} / {1} used", "{0} / {1} 使用中";
        quotas_alt: "{0} use over 24 h", "{0} の24時間の使用量";
        // A large site's paged overview.
        sheet_summary: "{0} nodes · {1} need attention (shown first) · page {2} of {3}",
            "{0} 台の Node · 要対応 {1} 台（先頭に表示） · {2} / {3} ページ";
        sheet_groups: "Nodes by GPU", "GPU 別の Node";
        sheet_group_all: "All GPUs", "すべての GPU";
        sheet_no_gpu: "No GPU", "GPU なし";
        col_gpu: "GPU", "GPU";
        col_nodes_ready: "Nodes (Ready)", "Node（Ready）";
        col_attention: "Need attention", "要対応";
        col_gpu_held: "GPU units held", "使用中の GPU";
        col_pending: "Pending pods", "Pending の Pod";
        sheet_prev: "‹ Previous page", "‹ 前のページ";
        sheet_next: "Next page ›", "次のページ ›";
        sheet_pages: "Overview pages", "概要のページ";
        // A long pending or diagnoses list, paged.
        list_summary: "{0}–{1} of {2} (most severe and longest waiting first) · page {3} of {4}",
            "{2} 件中 {0}–{1} 件目（重大なもの・待ちの長いものから） · {4} ページ中 {3} ページ目";
        list_filtered: " · {0} in all", " · 全 {0} 件";
        list_code: "Diagnosis ", "診断 ";
        list_pages: "List pages", "一覧のページ";
        reports_rows: "Rows {0}–{1} of {2} (the CSV has every row)", "{2} 行中 {0}–{1} 行目（CSV にはすべての行）";
    }
}
