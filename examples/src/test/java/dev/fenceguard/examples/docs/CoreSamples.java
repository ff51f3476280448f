package dev.fenceguard.examples.docs;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.micrometer.MicrometerLockMetrics;
import dev.fenceguard.core.micrometer.MicrometerLockObservations;
import dev.fenceguard.core.spi.LockBackend;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;

/** Samples of core: fence tokens (Javadoc) and metrics (docs/metrics.md). */
final class CoreSamples {

    private CoreSamples() {}

    /** The token and its two text round trips, as the Javadoc of FenceToken shows them. */
    static List<Object> fenceTokenText() {
        // dev/fenceguard/core/FenceToken.java: text form (begin)
        FenceToken t = FenceToken.of(42);
        t.toString();                         // "000000000000042"
        FenceToken.parse("000000000000042");  // == t
        // dev/fenceguard/core/FenceToken.java: text form (end)
        return List.of(t, t.toString(), FenceToken.parse("000000000000042"));
    }

    static LockClient lockNames(MeterRegistry registry, LockBackend backend) {
        // docs/metrics.md: lock names (begin)
        LockMetrics metrics = MicrometerLockMetrics.builder(registry)
                .withLockNames(MicrometerLockMetrics.prefixUpTo(':'), 50)   // "orders:42" -> "orders"; at most 50 names
                .build();
        LockClient locks = LockClient.builder(backend).withMetrics(metrics).build();
        // docs/metrics.md: lock names (end)
        return locks;
    }

    static LockClient observations(ObservationRegistry observationRegistry, LockBackend backend) {
        // docs/metrics.md: observations (begin)
        LockObservations observations = MicrometerLockObservations.of(observationRegistry);
        LockClient locks = LockClient.builder(backend).withObservations(observations).build();
        // and the same object to each fenced-write helper's builder (withObservations), so writes nest under withLock
        // docs/metrics.md: observations (end)
        return locks;
    }
}
