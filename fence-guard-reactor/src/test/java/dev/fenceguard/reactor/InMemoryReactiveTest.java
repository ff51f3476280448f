package dev.fenceguard.reactor;

import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.LockBackend;

/** The Mono face on the in-memory reference backend. */
class InMemoryReactiveTest extends ReactiveLockContract {

    private static final InMemoryLockBackend BACKEND = new InMemoryLockBackend();

    @Override
    LockBackend backend() {
        return BACKEND;
    }
}
