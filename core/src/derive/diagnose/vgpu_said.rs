//! What a HAMi vGPU share no card can give says (gpu-share-exceeds-gpu,
//! insufficient-gpu-memory), in English and Japanese.

gpudash_model::sentences! { "vgpu";
    /// Asks for {ask} MiB of one GPU (nvidia.com/gpumem), more than any card it can go to has…
    share_exceeds_card(ask, largest, product, node) {
        en: "Asks for {ask} MiB of one GPU (nvidia.com/gpumem), more than any card it can go to has: the largest is {largest} MiB \
        ({product} on {node}). HAMi can never place it — ask for at most {largest} MiB a vGPU, or split the model over more vGPUs \
        (nvidia.com/gpu).",
        ja: "1 つの GPU に {ask} MiB（nvidia.com/gpumem）を求めていますが、\
        行けるどのカードのメモリより大きい値です。最大は {largest} MiB（{node} の {product}）。\
        HAMi は決して配置できません — vGPU あたり {largest} MiB 以下にするか、\
        モデルをより多くの vGPU（nvidia.com/gpu）に分けてください。",
    }
    /// Asks for {percent} % of one GPU's memory (nvidia.com/gpumem-percentage): no card has…
    percent_exceeds_card(percent) {
        en: "Asks for {percent} % of one GPU's memory (nvidia.com/gpumem-percentage): no card has more than 100 %, so HAMi can never \
        place it — ask for 100 or less.",
        ja: "1 つの GPU のメモリの {percent} %（nvidia.com/gpumem-percentage）を求めていますが、どのカードも 100 % \
        を超えられないため HAMi は決して配置できません — 100 以下にしてください。",
    }
    /// Waiting for {count} vGPU(s) with {ask} of one card each: no card it can go to has that…
    no_card_has_free(count, ask, best: Said) {
        en: "Waiting for {count} vGPU(s) with {ask} of one card each: no card it can go to has that much free. The most free on each node: \
        {best}. Free memory on a card (scale down a pod holding a share of it), ask for less, or add a card.",
        ja: "カード 1 枚あたり {ask} の vGPU を {count} 個待っていますが、\
        行けるカードにそれだけの空きはありません。各 Node で最も空いているカード：{best}。\
        カードのメモリを空ける（共有している Pod をスケールダウン）、要求を減らす、\
        またはカードを追加してください。",
    }
    /// {node} GPU {index}: {free} of {total} MiB free
    node_best_card(node, index, free, total) {
        en: "{node} GPU {index}: {free} of {total} MiB free",
        ja: "{node} の GPU {index}：{total} MiB 中 {free} MiB 空き",
    }
}
