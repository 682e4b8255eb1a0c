-- The diagnoses about one object (a pod's timeline marks what happened to it): found by the
-- object, then by time, rather than by scanning every diagnosis of the range.
CREATE INDEX diagnosis_events_by_object ON diagnosis_events (kind, namespace, name, raised);
