package dev.fenceguard.testkit;

import dev.fenceguard.core.memory.InMemoryIdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyBackend;

/** The reference model against itself on the system clock: checks the property machinery. */
class InMemoryIdempotencyProperties extends IdempotencyBackendProperties {
    private final InMemoryIdempotencyBackend backend = new InMemoryIdempotencyBackend();

    @Override
    protected IdempotencyBackend backend() {
        return backend;
    }
}
