//! Which events a diagnosis reads, kept between revisions: an event's message is searched once,
//! when it first arrives, not on every revision. A real cluster keeps thousands of events (the
//! scheduler's, the controllers', the kubelets'); searching every message for a missing
//! RuntimeClass or runtime handler on every revision cost a quarter of gpudash's CPU on a real
//! API server at 1,000 nodes (docs/benchmarks.md, twenty-second round).

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Event;

use super::pods::{addr, changed, AddrHash};

/// What the runtime diagnoses look for in an event's message (see `diagnose::runtime`): the
/// quoted name of a RuntimeClass, or of a runtime handler containerd lacks.
pub(crate) const RUNTIME_CLASS: &str = "RuntimeClass ";
/// See [`RUNTIME_CLASS`].
pub(crate) const RUNTIME_HANDLER: &str = "no runtime for ";

/// The events by address, each with whether its message names a runtime.
#[derive(Debug, Default)]
pub struct EventIndex {
    /// The addresses in the order the last input listed them.
    order: Vec<usize>,
    /// Held so that an address is not reused while it is a key.
    by_addr: HashMap<usize, (Arc<Event>, bool), AddrHash>,
    /// How many of them name a runtime.
    naming_runtime: usize,
}

fn names_runtime(e: &Event) -> bool {
    e.message.as_deref().is_some_and(|m| m.contains(RUNTIME_CLASS) || m.contains(RUNTIME_HANDLER))
}

impl EventIndex {
    /// Takes in the events as they are now.
    pub fn update(&mut self, events: &[Arc<Event>]) {
        let Some((gone, new)) = changed(&self.order, events) else { return };
        for a in gone {
            if let Some((_, true)) = self.by_addr.remove(&a) {
                self.naming_runtime -= 1;
            }
        }
        for i in new {
            let e = &events[i];
            if let std::collections::hash_map::Entry::Vacant(v) = self.by_addr.entry(addr(e)) {
                let named = names_runtime(e);
                self.naming_runtime += usize::from(named);
                v.insert((e.clone(), named));
            }
        }
        self.order = events.iter().map(addr).collect();
    }

    /// Whether any event's message names a RuntimeClass or a runtime handler: where none does,
    /// the runtime diagnoses need not read the events.
    pub fn names_runtime(&self) -> bool {
        self.naming_runtime > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(msg: &str) -> Arc<Event> {
        Arc::new(Event { message: Some(msg.into()), ..Event::default() })
    }

    #[test]
    fn an_event_naming_a_runtime_is_counted_while_it_is_listed() {
        // Messages as the ReplicaSet controller and the kubelet write them.
        let class = event(r#"Error creating: pods "m-1" is forbidden: pod rejected: RuntimeClass "nvidia" not found"#);
        let handler = event(
            r#"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured"#,
        );
        let other = event("Successfully assigned ml/m-1 to orin-1");
        let mut ix = EventIndex::default();
        ix.update(std::slice::from_ref(&other));
        assert!(!ix.names_runtime());
        ix.update(&[other.clone(), class.clone()]);
        assert!(ix.names_runtime());
        // The same list again changes nothing; a list in another order keeps what it knew.
        ix.update(&[other.clone(), class.clone()]);
        ix.update(&[class.clone(), other.clone()]);
        assert!(ix.names_runtime());
        ix.update(std::slice::from_ref(&other));
        assert!(!ix.names_runtime(), "the event that named a runtime is gone");
        ix.update(&[handler.clone(), class.clone()]);
        assert_eq!(ix.naming_runtime, 2);
        ix.update(&[]);
        assert!(!ix.names_runtime() && ix.by_addr.is_empty());
    }
}
