//! What the update check says, in English and Japanese: one entry per sentence, its
//! placeholders its parameters. `update.rs` decides which applies; the words are here.

gpudash_model::sentences! { "update";
    /// A DaemonSet with `updateStrategy: OnDelete` whose new pods fit once the old are deleted.
    on_delete(count) {
        en: "updateStrategy OnDelete: on each of its {count} node(s) the new pod starts when you delete the \
        old one, and it fits there once the old one is gone.",
        ja: "updateStrategy OnDelete：{count} 個の Node それぞれで、古い Pod を削除すると新しい Pod \
        が起動し、古い Pod がなくなればそこに収まります。",
    }
    /// A DaemonSet surging `sw` (`surge` of `count` nodes) whose new pods fit beside the old.
    surge_fits_everywhere(sw, surge, count) {
        en: "RollingUpdate with maxSurge {sw} → {surge} of {count} node(s): on every node the new pod fits \
        beside the old one before it is deleted — the update can complete.",
        ja: "RollingUpdate で {count} 個の Node に対し maxSurge {sw} → {surge}：どの Node \
        でも新しい Pod が古い Pod の横に収まり、その後古い Pod が削除されます — 更新は完了できます。",
    }
    /// A DaemonSet surging on nodes (`where_`) where the new pod cannot fit beside the old.
    surge_deadlock(sw, surge, count, where_) {
        en: "RollingUpdate with maxSurge {sw} → {surge} of {count} node(s): on {where_} the controller \
        starts the new pod beside the old one, which holds what it needs, and deletes the old one only \
        when the new one is ready — the update would stop there for ever (gpu-rollout-deadlock). Set \
        updateStrategy.rollingUpdate to maxSurge 0 and maxUnavailable 1: the old pod goes first.",
        ja: "RollingUpdate で {count} 個の Node に対し maxSurge {sw} → {surge}：{where_} \
        ではコントローラーが古い Pod の横に新しい Pod を起動しますが、必要なものは古い Pod \
        が持っており、新しい Pod が Ready になるまで古い Pod は削除されません — \
        更新はそこで止まったままになります（gpu-rollout-deadlock）。updateStrategy.rollingUpdate \
        を maxSurge 0・maxUnavailable 1 にすれば、古い Pod が先に消えます。",
    }
    /// A DaemonSet updating without surge (`uw` unavailable) whose new pods fit in place.
    in_place_fits(uw, count) {
        en: "Without surge (maxUnavailable {uw}) the old pod on each of its {count} node(s) goes first and \
        the new one fits in its place — the update can complete.",
        ja: "surge なし（maxUnavailable {uw}）では {count} 個の Node それぞれで古い Pod \
        が先に消え、新しい Pod がその場所に収まります — 更新は完了できます。",
    }
    /// A DaemonSet whose new pod does not fit on `where_` even with the old one gone.
    does_not_fit_on(where_) {
        en: "On {where_} the new pod does not fit even with the old one gone (see the nodes below): the \
        update would stop there.",
        ja: "{where_} では古い Pod がなくなっても新しい Pod が収まりません（下の Node \
        を参照）。更新はそこで止まります。",
    }
    /// `strategy: Recreate`: the `n_old` old pods go, then every one of `replicas` fits.
    recreate_fits(n_old, replicas) {
        en: "Strategy Recreate: its {n_old} running pod(s) go first — a break in service — then all \
        {replicas} new pod(s) fit.",
        ja: "strategy Recreate：動いている {n_old} 個の Pod が先に消え（サービスは途切れます）、\
        その後 {replicas} 個の新しい Pod がすべて収まります。",
    }
    /// `strategy: Recreate` where only `placed` of `replicas` fit even then.
    recreate_part_way(n_old, placed, replicas) {
        en: "Strategy Recreate: its {n_old} running pod(s) go first, but even then only {placed} of \
        {replicas} new pod(s) fit — the rollout would stop part way.",
        ja: "strategy Recreate：動いている {n_old} 個の Pod が先に消えますが、それでも {replicas} \
        個中 {placed} 個しか収まりません — ロールアウトは途中で止まります。",
    }
    /// A rolling update that can neither surge nor free room: it waits for ever; `placed` would
    /// fit with Recreate.
    rolling_deadlock(sw, surge, uw, unavailable, replicas, n_old, placed) {
        en: "RollingUpdate with maxSurge {sw} → {surge} and maxUnavailable {uw} → {unavailable} for \
        {replicas} replica(s): the controller starts a new pod before it takes an old one down, and \
        no node has room for it beside the {n_old} old pod(s) — the rollout would wait for ever \
        (gpu-rollout-deadlock). With strategy Recreate (or maxSurge 0 and maxUnavailable 1), \
        {placed} of {replicas} new pod(s) fit once the old ones are gone.",
        ja: "RollingUpdate で {replicas} レプリカに対し maxSurge {sw} → {surge}、maxUnavailable \
        {uw} → {unavailable}：コントローラーは古い Pod を止める前に新しい Pod \
        を起動しますが、{n_old} 個の古い Pod の横に入る余裕のある Node がありません — \
        ロールアウトは待ち続けます（gpu-rollout-deadlock）。strategy Recreate（または \
        maxSurge 0・maxUnavailable 1）なら、古い Pod がなくなった後に {replicas} 個中 {placed} \
        個の新しい Pod が収まります。",
    }
    /// A rolling update that starts but where only `placed` of `replicas` fit in the end.
    rolling_part_way(n_old, placed, replicas) {
        en: "The rollout can start, but with the {n_old} old pod(s) gone only {placed} of {replicas} \
        new pod(s) fit — it would stop part way.",
        ja: "ロールアウトは始められますが、{n_old} 個の古い Pod がなくなっても {replicas} 個中 \
        {placed} 個しか収まりません — 途中で止まります。",
    }
    /// A rolling update whose new pods fit beside the old ones.
    rolling_beside(sw, surge, uw, unavailable, replicas, n_old) {
        en: "RollingUpdate with maxSurge {sw} → {surge} and maxUnavailable {uw} → {unavailable} for \
        {replicas} replica(s): a new pod fits beside the {n_old} old one(s), and each old pod taken \
        down makes room for the next — the rollout can complete.",
        ja: "RollingUpdate で {replicas} レプリカに対し maxSurge {sw} → {surge}、maxUnavailable \
        {uw} → {unavailable}：新しい Pod が {n_old} 個の古い Pod の横に収まり、古い Pod \
        が1つ止まるごとに次の場所が空きます — ロールアウトは完了できます。",
    }
    /// A rolling update whose new pods fit in the room the first old pods taken down free.
    rolling_freed(sw, surge, uw, unavailable, replicas) {
        en: "RollingUpdate with maxSurge {sw} → {surge} and maxUnavailable {uw} → {unavailable} for \
        {replicas} replica(s): no new pod fits beside the old ones, but the controller takes \
        {unavailable} old pod(s) down first and a new pod fits in what they free — the rollout can \
        complete, with fewer pods serving meanwhile.",
        ja: "RollingUpdate で {replicas} レプリカに対し maxSurge {sw} → {surge}、maxUnavailable \
        {uw} → {unavailable}：古い Pod の横には収まりませんが、コントローラーが先に \
        {unavailable} 個の古い Pod を止め、空いた場所に新しい Pod が収まります — \
        ロールアウトは完了できます（その間は動く Pod が減ります）。",
    }
}
