//! What the what-if check advises when no HAMi card has a pod's memory share, in English and
//! Japanese. `mod.rs` (`hami_shortage`) decides which applies; the words are here.

gpudash_model::sentences! { "fit-hami";
    /// {want} MiB of one GPU is more than the largest card has ({max} MiB, on {node})…
    more_than_largest_card(want, max, node) {
        en: "{want} MiB of one GPU (nvidia.com/gpumem) is more than the largest card has ({max} MiB, on {node}): HAMi \
        could never place it — ask for at most {max} MiB a vGPU, or split the model over more vGPUs",
        ja: "1 つの GPU に {want} MiB（nvidia.com/gpumem）は最大のカード（{node} の {max} MiB）より大きく、HAMi \
        は決して配置できません — vGPU あたり {max} MiB 以下にするか、モデルをより多くの vGPU に分けてください",
    }
    /// no card has {want} MiB free for a vGPU: the most free is GPU {i} of {node}…
    no_card_has_free(want, i, node, free, total) {
        en: "no card has {want} MiB free for a vGPU: the most free is GPU {i} of {node}, {free} of {total} MiB — free \
        a share there (scale down a pod holding it), ask for less nvidia.com/gpumem, or add a card",
        ja: "vGPU に {want} MiB 空いているカードはありません。最も空いているのは {node} の GPU {i}（{total} MiB 中 {free} \
        MiB）— そこの共有を空ける（持っている Pod をスケールダウン）、nvidia.com/gpumem \
        を減らす、またはカードを追加してください",
    }
}
