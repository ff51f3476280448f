/**
 * Micrometer bindings: {@link dev.fenceguard.core.micrometer.MicrometerLockMetrics} for
 * {@link dev.fenceguard.core.LockMetrics} (needs micrometer-core) and
 * {@link dev.fenceguard.core.micrometer.MicrometerLockObservations} for
 * {@link dev.fenceguard.core.LockObservations} (needs micrometer-observation). Each is loaded only when
 * used.
 */
package dev.fenceguard.core.micrometer;
