//! The watchers' reconnect backoff: 250 ms doubling to 4 s with jitter, reset on success.

use std::time::Duration;

/// The watchers' retry delays: 250 ms doubling to 4 s, back to 250 ms after any success, with a
/// little jitter so that the kinds do not retry in lockstep (a 410 Gone relists at once).
/// kube-rs' default (800 ms doubling to 30 s, reset only after two quiet minutes, the same for
/// a 410) took over 10 s to follow an API server back after a 2.5 s restart; five watches
/// retrying every 4 s at worst cost a K3s server nothing.
#[derive(Debug, Clone)]
pub(crate) struct Reconnect {
    next: Duration,
}

impl Reconnect {
    const MIN: Duration = Duration::from_millis(250);
    const MAX: Duration = Duration::from_secs(4);
}

impl Default for Reconnect {
    fn default() -> Self {
        Self { next: Self::MIN }
    }
}

impl Iterator for Reconnect {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        let d = self.next;
        self.next = (self.next * 2).min(Self::MAX);
        // Up to 10 % jitter, from the clock's nanoseconds.
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|t| t.subsec_nanos());
        Some(d + d / 10 * (nanos.unwrap_or(0) % 100) / 100)
    }
}

impl kube::runtime::utils::Backoff for Reconnect {
    fn reset(&mut self) {
        self.next = Self::MIN;
    }
}
