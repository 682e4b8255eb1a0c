//! Allocation history in SQLite: the recorder (fed by the view stream), queries, retention and
//! downsampling, and server-side SVG charts. Collection and rendering are kept apart.

pub mod charts;
pub mod http;
pub mod query;
pub mod recorder;
pub mod report;
pub mod retention;

pub use gpudash_web::series::Config;

/// Who reports on history's health. Each writer has its own slot: one that recovers clears
/// its own problem and no other's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// Opening the database at start-up.
    Open = 0,
    /// The recorder's batches.
    Recorder = 1,
    /// Pruning and rollups.
    Retention = 2,
}

/// What each writer last reported: a problem, or nothing while it works.
#[derive(Debug, Default)]
pub struct Health {
    slots: std::sync::Mutex<[Option<String>; 3]>,
}

impl Health {
    /// Sets (or, with `None`, clears) one writer's problem.
    pub fn set(&self, w: Writer, problem: Option<String>) {
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[w as usize] = problem;
    }

    /// Every current problem, in writer order.
    pub fn problems(&self) -> Vec<String> {
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().flatten().cloned().collect()
    }

    /// The current problems as one line, if any.
    pub fn problem(&self) -> Option<String> {
        let all = self.problems();
        (!all.is_empty()).then(|| all.join("; "))
    }
}

#[cfg(test)]
mod tests;
