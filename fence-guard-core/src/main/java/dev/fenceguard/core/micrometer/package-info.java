/** Micrometer binding for {@link dev.fenceguard.core.LockMetrics}; needs micrometer-core on the class path. */
package dev.fenceguard.core.micrometer;
