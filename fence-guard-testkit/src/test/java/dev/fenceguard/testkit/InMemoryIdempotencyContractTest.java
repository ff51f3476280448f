package dev.fenceguard.testkit;

import dev.fenceguard.core.memory.InMemoryIdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyBackend;

/** The reference model keeps the idempotency contract it defines, on the system clock. */
class InMemoryIdempotencyContractTest extends IdempotencyBackendContract {

    private static final InMemoryIdempotencyBackend BACKEND = new InMemoryIdempotencyBackend();

    @Override
    protected IdempotencyBackend backend() {
        return BACKEND;
    }
}
