//! Update strategies as the controllers read them: `maxSurge`/`maxUnavailable` written as a
//! number or a percentage, scaled to a count.

/// `written` (`1`, `25%`) of `total`, a percentage rounded up or down as the controllers'
/// `GetScaledValueFromIntOrPercent` does (Deployments round surge up and unavailable down;
/// DaemonSets round both up). Anything unreadable counts as 0.
pub fn scaled(written: &str, total: i64, round_up: bool) -> i64 {
    match written.trim().strip_suffix('%') {
        Some(p) => {
            let x = p.trim().parse::<i64>().unwrap_or(0).max(0).saturating_mul(total.max(0));
            if round_up {
                x.saturating_add(99) / 100
            } else {
                x / 100
            }
        }
        None => written.trim().parse::<i64>().unwrap_or(0).max(0),
    }
}

/// A Deployment's rolling update resolved for `replicas`: (surge, unavailable), with the
/// controller's fencepost (never both zero: unavailable becomes 1).
pub fn deployment(max_surge: Option<&str>, max_unavailable: Option<&str>, replicas: i64) -> (i64, i64) {
    let surge = scaled(max_surge.unwrap_or("25%"), replicas, true);
    let unavailable = scaled(max_unavailable.unwrap_or("25%"), replicas, false);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_as_the_controllers_do() {
        assert_eq!(deployment(None, None, 1), (1, 0));
        assert_eq!(deployment(None, None, 4), (1, 1));
        assert_eq!(deployment(None, None, 10), (3, 2));
        assert_eq!(deployment(Some("0"), Some("0%"), 3), (0, 1));
        assert_eq!(deployment(Some("2"), Some("1"), 3), (2, 1));
        assert_eq!(scaled("50%", 3, true), 2);
        assert_eq!(scaled("50%", 3, false), 1);
        assert_eq!(scaled("nonsense", 3, true), 0);
    }
}
