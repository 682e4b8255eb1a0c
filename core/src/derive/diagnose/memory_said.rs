//! What insufficient-memory says (a pod whose GPU unit is free waits for memory: the board's
//! unified memory on a Jetson, the node's allocatable elsewhere), in English and Japanese: one
//! entry per sentence, its placeholders its parameters (`: Said` where each language has its own
//! words). `waiting.rs` decides which applies.

gpudash_model::sentences! { "memory";
    ///  (the board's pods use {u} now)
    board_pods_use_now(u) {
        en: " (the board's pods use {u} now)",
        ja: "（ボードの Pod の現在の使用量は {u}）",
    }
    ///  (their models hold {g} of GPU memory besides; {f} of the board is really free)
    their_models_hold_gpu_memory(g, f) {
        en: " (their models hold {g} of GPU memory besides; {f} of the board is really free)",
        ja: "（そのほかモデルが GPU メモリを {g} 使っており、ボードの実際の空きは {f}）",
    }
    ///  {n} other node(s) it could go to have less room.
    other_node_could_go_have(n) {
        en: " {n} other node(s) it could go to have less room.",
        ja: "行けるほかの {n} 個の Node はさらに余裕がありません。",
    }
    ///  A {r} unit is free there, but the board's memory is not: on a Jetson the model's wei…
    unit_free_there_but_board(r) {
        en: " A {r} unit is free there, but the board's memory is not: on a Jetson the model's weights live in that same RAM, shared by CPU and \
        GPU.",
        ja: "そこでは {r} のユニットが空いていますが、ボードのメモリが空いていません。Jetson ではモデルの重みは CPU と GPU が共有する同じ RAM に載ります。",
    }
    /// Waiting for memory: {name} shares {alloc} between CPU and GPU, its pods request {req}…
    waiting_memory_shares_between_cpu(name, alloc, req, ask, left, replica: Said, measured: Said, others: Said) {
        en: "Waiting for memory: {name} shares {alloc} between CPU and GPU, its pods request {req}, and this pod asks {ask} — {left} left.{replica} Lower \
        the other models' memory requests to their measured use{measured}, move this model to a board with more memory, or drop a model from \
        {name}.{others}",
        ja: "メモリを待っています。{name} は CPU と GPU で {alloc} を共有し、Pod の requests は {req}、この Pod は {ask} を求めています — 残りは {left} \
        です。{replica}ほかのモデルのメモリ requests を実測値まで下げる{measured}、このモデルをメモリの多いボードに移す、または {name} からモデルを1つ外してください。{others}",
    }
    ///  A {r} unit is free there, but the memory is not.
    unit_free_there_but_memory(r) {
        en: " A {r} unit is free there, but the memory is not.",
        ja: "そこでは {r} のユニットが空いていますが、メモリが空いていません。",
    }
    /// Waiting for memory: {name} has {alloc} allocatable, its pods request {req}, and this…
    waiting_memory_has_allocatable_pods(name, alloc, req, ask, left, replica: Said, measured: Said, others: Said) {
        en: "Waiting for memory: {name} has {alloc} allocatable, its pods request {req}, and this pod asks {ask} — {left} left.{replica} Lower memory \
        requests to measured use{measured}, move a pod off {name}, or add a node with more memory.{others}",
        ja: "メモリを待っています。{name} の allocatable は \
        {alloc}、Pod の requests は {req}、この Pod は {ask} を求めています — 残りは {left} です。{replica}メモリ requests を実測値まで下げる{measured}、{name} から Pod を移す、またはメモリの多い \
        Node を追加してください。{others}",
    }
}
