package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Runs the core samples on the in-memory backend. */
class CoreSamplesTest {

    @Test
    void fenceTokenTextIsFifteenDigitsAndParsesBack() {
        assertThat(CoreSamples.fenceTokenText()).containsExactly(FenceToken.of(42), "000000000000042", FenceToken.of(42));
    }

    @Test
    void lockNamesTagTheMetersWithTheKeysPrefix() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LockClient locks = CoreSamples.lockNames(registry, new InMemoryLockBackend());
        locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> "done");
        assertThat(registry.find("fenceguard.lock.acquire").tag("lock.name", "orders").timer()).isNotNull();
    }

    @Test
    void observationsSeeTheLock() throws Exception {
        StoppedObservations seen = new StoppedObservations();
        LockClient locks = CoreSamples.observations(seen.registry, new InMemoryLockBackend());
        locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> "done");
        assertThat(seen.names).isNotEmpty().allMatch(name -> name.startsWith("fenceguard."));
    }
}
