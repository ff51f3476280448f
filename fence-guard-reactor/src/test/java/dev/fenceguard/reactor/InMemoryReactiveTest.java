package dev.fenceguard.reactor;

import dev.fenceguard.core.memory.InMemoryFlightStore;
import dev.fenceguard.core.memory.InMemoryIdempotencyBackend;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.LockBackend;
import org.junit.jupiter.api.Nested;

/** The Mono face on the in-memory reference backend. */
class InMemoryReactiveTest extends ReactiveLockContract {

    private static final InMemoryLockBackend BACKEND = new InMemoryLockBackend();

    @Override
    LockBackend backend() {
        return BACKEND;
    }

    /** The primitives' Mono faces on the in-memory backends. */
    @Nested
    class Primitives extends ReactivePrimitivesContract {
        private final InMemoryIdempotencyBackend idempotency = new InMemoryIdempotencyBackend();
        private final InMemoryFlightStore flights = new InMemoryFlightStore();

        @Override
        LockBackend lockBackend() {
            return BACKEND;
        }

        @Override
        IdempotencyBackend idempotencyBackend() {
            return idempotency;
        }

        @Override
        FlightStore flightStore() {
            return flights;
        }
    }
}
