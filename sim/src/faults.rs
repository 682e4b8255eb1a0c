//! The faults tests switch on and off: watches closed, a hung server, slow answers, a restart.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::watch;

/// Faults that tests switch on and off.
#[derive(Debug)]
pub struct Faults {
    pub(crate) close: watch::Sender<u64>,
    pub(crate) stalled: AtomicBool,
    pub(crate) delay_ms: AtomicU64,
    pub(crate) unavailable_until: Mutex<Option<Instant>>,
}

impl Faults {
    pub(crate) fn new() -> Self {
        Self {
            close: watch::channel(0).0,
            stalled: AtomicBool::new(false),
            delay_ms: AtomicU64::new(0),
            unavailable_until: Mutex::new(None),
        }
    }

    /// A receiver that changes whenever every open watch must end.
    pub fn close_signal(&self) -> watch::Receiver<u64> {
        self.close.subscribe()
    }

    pub(crate) fn close_all(&self) {
        self.close.send_modify(|n| *n += 1);
    }

    /// Whether new watches are accepted and then left silent.
    pub fn stalled(&self) -> bool {
        self.stalled.load(Ordering::Relaxed)
    }

    /// The delay added to every response.
    pub fn delay(&self) -> Duration {
        Duration::from_millis(self.delay_ms.load(Ordering::Relaxed))
    }

    /// Whether the API answers 503 (restarting).
    pub fn unavailable(&self) -> bool {
        let mut u = self.unavailable_until.lock().unwrap_or_else(|e| e.into_inner());
        match *u {
            Some(t) if Instant::now() < t => true,
            Some(_) => {
                *u = None;
                false
            }
            None => false,
        }
    }
}
