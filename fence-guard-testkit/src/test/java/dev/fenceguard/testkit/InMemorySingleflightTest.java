package dev.fenceguard.testkit;

import dev.fenceguard.core.memory.InMemoryFlightStore;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.LockBackend;

/** The contract on the reference model: one in-memory lock backend and one in-memory store, shared by the "processes". */
class InMemorySingleflightTest extends SingleflightContract {

    private final InMemoryLockBackend locks = new InMemoryLockBackend();
    private final InMemoryFlightStore store = new InMemoryFlightStore();

    @Override
    protected LockBackend lockBackend() {
        return locks;
    }

    @Override
    protected FlightStore newStore() {
        return store;
    }
}
