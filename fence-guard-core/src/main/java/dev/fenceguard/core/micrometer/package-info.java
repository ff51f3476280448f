/**
 * Micrometer bindings, one per component's meter sink (each needs micrometer-core):
 * {@link dev.fenceguard.core.micrometer.MicrometerLockMetrics} for {@link dev.fenceguard.core.LockMetrics},
 * {@link dev.fenceguard.core.micrometer.MicrometerIdempotencyMetrics} for
 * {@link dev.fenceguard.core.idempotency.IdempotencyMetrics},
 * {@link dev.fenceguard.core.micrometer.MicrometerLeaderMetrics} for
 * {@link dev.fenceguard.core.leader.LeaderMetrics} and
 * {@link dev.fenceguard.core.micrometer.MicrometerSingleflightMetrics} for
 * {@link dev.fenceguard.core.singleflight.SingleflightMetrics}; and
 * {@link dev.fenceguard.core.micrometer.MicrometerLockObservations} for
 * {@link dev.fenceguard.core.LockObservations} (needs micrometer-observation). Each is loaded only when
 * used.
 */
package dev.fenceguard.core.micrometer;
