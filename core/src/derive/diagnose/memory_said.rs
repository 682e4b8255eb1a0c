//! What insufficient-memory says (a pod whose GPU unit is free waits for memory: the board's
//! unified memory on a Jetson, the node's allocatable elsewhere), in English and Japanese: one
//! function per sentence, its parameters named. `waiting.rs` decides which applies.
// A sentence takes every value it names.
#![allow(clippy::too_many_arguments)]

use std::fmt::Display;

use app::i18n::{Said, Sentence};

const BOARD_PODS_USE_NOW: Sentence = Sentence {
    key: "memory.board_pods_use_now",
    en: " (the board's pods use {u} now)",
    ja: "（ボードの Pod の現在の使用量は {u}）",
};

///  (the board's pods use {u} now)
pub(super) fn board_pods_use_now(u: &impl Display) -> Said {
    BOARD_PODS_USE_NOW.say(&[("u", &Said::text(u))])
}

const THEIR_MODELS_HOLD_GPU_MEMORY: Sentence = Sentence {
    key: "memory.their_models_hold_gpu_memory",
    en: " (their models hold {g} of GPU memory besides; {f} of the board is really free)",
    ja: "（そのほかモデルが GPU メモリを {g} 使っており、ボードの実際の空きは {f}）",
};

///  (their models hold {g} of GPU memory besides; {f} of the board is really free)
pub(super) fn their_models_hold_gpu_memory(g: &impl Display, f: &impl Display) -> Said {
    THEIR_MODELS_HOLD_GPU_MEMORY.say(&[("g", &Said::text(g)), ("f", &Said::text(f))])
}

const OTHER_NODE_COULD_GO_HAVE: Sentence = Sentence {
    key: "memory.other_node_could_go_have",
    en: " {n} other node(s) it could go to have less room.",
    ja: "行けるほかの {n} 個の Node はさらに余裕がありません。",
};

///  {n} other node(s) it could go to have less room.
pub(super) fn other_node_could_go_have(n: &impl Display) -> Said {
    OTHER_NODE_COULD_GO_HAVE.say(&[("n", &Said::text(n))])
}

const UNIT_FREE_THERE_BUT_BOARD: Sentence = Sentence {
    key: "memory.unit_free_there_but_board",
    en: " A {r} unit is free there, but the board's memory is not: on a Jetson the model's weights live in that same RAM, shared by CPU and \
        GPU.",
    ja: "そこでは {r} のユニットが空いていますが、ボードのメモリが空いていません。Jetson ではモデルの重みは CPU と GPU が共有する同じ RAM に載ります。",
};

///  A {r} unit is free there, but the board's memory is not: on a Jetson the model's wei…
pub(super) fn unit_free_there_but_board(r: &impl Display) -> Said {
    UNIT_FREE_THERE_BUT_BOARD.say(&[("r", &Said::text(r))])
}

const WAITING_MEMORY_SHARES_BETWEEN_CPU: Sentence = Sentence {
    key: "memory.waiting_memory_shares_between_cpu",
    en: "Waiting for memory: {name} shares {alloc} between CPU and GPU, its pods request {req}, and this pod asks {ask} — {left} left.{replica} Lower \
        the other models' memory requests to their measured use{measured}, move this model to a board with more memory, or drop a model from \
        {name}.{others}",
    ja: "メモリを待っています。{name} は CPU と GPU で {alloc} を共有し、Pod の requests は {req}、この Pod は {ask} を求めています — 残りは {left} \
        です。{replica}ほかのモデルのメモリ requests を実測値まで下げる{measured}、このモデルをメモリの多いボードに移す、または {name} からモデルを1つ外してください。{others}",
};

/// Waiting for memory: {name} shares {alloc} between CPU and GPU, its pods request {req}…
pub(super) fn waiting_memory_shares_between_cpu(
    name: &impl Display,
    alloc: &impl Display,
    req: &impl Display,
    ask: &impl Display,
    left: &impl Display,
    replica: &Said,
    measured: &Said,
    others: &Said,
) -> Said {
    WAITING_MEMORY_SHARES_BETWEEN_CPU.say(&[
        ("name", &Said::text(name)),
        ("alloc", &Said::text(alloc)),
        ("req", &Said::text(req)),
        ("ask", &Said::text(ask)),
        ("left", &Said::text(left)),
        ("replica", replica),
        ("measured", measured),
        ("others", others),
    ])
}

const UNIT_FREE_THERE_BUT_MEMORY: Sentence = Sentence {
    key: "memory.unit_free_there_but_memory",
    en: " A {r} unit is free there, but the memory is not.",
    ja: "そこでは {r} のユニットが空いていますが、メモリが空いていません。",
};

///  A {r} unit is free there, but the memory is not.
pub(super) fn unit_free_there_but_memory(r: &impl Display) -> Said {
    UNIT_FREE_THERE_BUT_MEMORY.say(&[("r", &Said::text(r))])
}

const WAITING_MEMORY_HAS_ALLOCATABLE_PODS: Sentence = Sentence {
    key: "memory.waiting_memory_has_allocatable_pods",
    en: "Waiting for memory: {name} has {alloc} allocatable, its pods request {req}, and this pod asks {ask} — {left} left.{replica} Lower memory \
        requests to measured use{measured}, move a pod off {name}, or add a node with more memory.{others}",
    ja: "メモリを待っています。{name} の allocatable は \
        {alloc}、Pod の requests は {req}、この Pod は {ask} を求めています — 残りは {left} です。{replica}メモリ requests を実測値まで下げる{measured}、{name} から Pod を移す、またはメモリの多い \
        Node を追加してください。{others}",
};

/// Waiting for memory: {name} has {alloc} allocatable, its pods request {req}, and this…
pub(super) fn waiting_memory_has_allocatable_pods(
    name: &impl Display,
    alloc: &impl Display,
    req: &impl Display,
    ask: &impl Display,
    left: &impl Display,
    replica: &Said,
    measured: &Said,
    others: &Said,
) -> Said {
    WAITING_MEMORY_HAS_ALLOCATABLE_PODS.say(&[
        ("name", &Said::text(name)),
        ("alloc", &Said::text(alloc)),
        ("req", &Said::text(req)),
        ("ask", &Said::text(ask)),
        ("left", &Said::text(left)),
        ("replica", replica),
        ("measured", measured),
        ("others", others),
    ])
}

/// Every sentence of this catalogue, by which history says a recorded one again.
pub(crate) const ALL: &[Sentence] = &[
    BOARD_PODS_USE_NOW,
    THEIR_MODELS_HOLD_GPU_MEMORY,
    OTHER_NODE_COULD_GO_HAVE,
    UNIT_FREE_THERE_BUT_BOARD,
    WAITING_MEMORY_SHARES_BETWEEN_CPU,
    UNIT_FREE_THERE_BUT_MEMORY,
    WAITING_MEMORY_HAS_ALLOCATABLE_PODS,
];
