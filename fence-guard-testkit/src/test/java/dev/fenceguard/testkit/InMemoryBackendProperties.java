package dev.fenceguard.testkit;

import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.LockBackend;

/** The reference model against itself on the system clock: checks the property machinery and expiry in real time. */
class InMemoryBackendProperties extends LockBackendProperties {
    private final InMemoryLockBackend backend = new InMemoryLockBackend();

    @Override
    protected LockBackend backend() {
        return backend;
    }
}
