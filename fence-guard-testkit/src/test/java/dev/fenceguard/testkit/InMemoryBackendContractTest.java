package dev.fenceguard.testkit;

import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.LockBackend;

/** The reference model keeps the contract it defines. */
class InMemoryBackendContractTest extends LockBackendContract {

    private static final InMemoryLockBackend BACKEND = new InMemoryLockBackend();

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }
}
