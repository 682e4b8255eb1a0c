-- GPU-hours reports: what each interval held, in terms a report can add up.
-- workload: `Kind/name` of the pod's controller (a ReplicaSet's Deployment), NULL for a bare pod.
-- gpu_share: the physical GPUs the held units amount to (a time-slicing or MPS replica is
--   1/replicas of a GPU, a MIG slice its compute slices of the GPU's, a DRA device or whole GPU 1).
-- mem_request_bytes, unified: the pod's memory request, and whether the board shares its memory
--   between CPU and GPU (Jetson) — memory-hours are reported for those.
-- Rows written before this migration have NULLs and count as unknown, never as zero.
ALTER TABLE pod_intervals ADD COLUMN workload TEXT;
ALTER TABLE pod_intervals ADD COLUMN gpu_share REAL;
ALTER TABLE pod_intervals ADD COLUMN mem_request_bytes INTEGER;
ALTER TABLE pod_intervals ADD COLUMN unified INTEGER;
CREATE INDEX pod_intervals_by_end ON pod_intervals (end);
