//! A node's memory bars: what they are drawn against, each bar's share, and the one overcommit
//! rule (limits beyond a unified-memory board) that both the card and the diagnosis use.

use gpudash_model::model::MemoryView;

/// `v` in thousandths of `of`, capped at 1000 (a bar never overflows its track).
pub fn permille(v: u64, of: u64) -> u32 {
    if of == 0 {
        return 0;
    }
    let p = (u128::from(v.min(of)) * 1000 + u128::from(of) / 2) / u128::from(of);
    u32::try_from(p).unwrap_or(1000)
}

/// Fills the bar fields of `m` from its totals.
pub fn bars(m: &mut MemoryView, unified: bool) {
    m.board_bytes = if m.allocatable_bytes > 0 { m.allocatable_bytes } else { m.capacity_bytes };
    m.used_permille = m.used_bytes.map(|u| permille(u, m.board_bytes));
    m.requested_permille = permille(m.requested_bytes, m.board_bytes);
    m.limits_permille = permille(m.limits_bytes, m.board_bytes);
    // On a unified board the GPU's memory is this pool too: limits beyond it mean a model can
    // be killed for memory another model's weights hold. Elsewhere limits above allocatable
    // are ordinary burstable overcommit, and neither card nor diagnosis warns.
    m.overcommit_bytes = if unified && m.board_bytes > 0 { m.limits_bytes.saturating_sub(m.board_bytes) } else { 0 };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_round_to_the_nearest_thousandth_and_never_overflow() {
        assert_eq!(permille(1, 3), 333);
        assert_eq!(permille(2, 3), 667);
        assert_eq!(permille(5, 4), 1000);
        assert_eq!(permille(5, 0), 0);
        assert_eq!(permille(u64::MAX, u64::MAX), 1000);
    }

    #[test]
    fn one_overcommit_rule_for_card_and_diagnosis_unified_boards_only() {
        let mut m = MemoryView {
            allocatable_bytes: 8 << 30,
            limits_bytes: 10 << 30,
            requested_bytes: 4 << 30,
            ..MemoryView::default()
        };
        bars(&mut m, true);
        assert_eq!(
            (m.board_bytes, m.overcommit_bytes, m.requested_permille, m.limits_permille),
            (8 << 30, 2 << 30, 500, 1000)
        );
        assert_eq!(m.used_permille, None, "unknown use stays unknown");
        bars(&mut m, false);
        assert_eq!(m.overcommit_bytes, 0, "ordinary nodes overcommit limits by design");
        let mut cap_only = MemoryView { capacity_bytes: 4 << 30, used_bytes: Some(1 << 30), ..MemoryView::default() };
        bars(&mut cap_only, true);
        assert_eq!((cap_only.board_bytes, cap_only.used_permille), (4 << 30, Some(250)));
    }
}
