package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import org.junit.jupiter.api.AfterAll;

/** {@link LockTableBackendTest} for {@link MariaDbLockBackend}. */
class MariaDbLockBackendTest extends LockTableBackendTest {

    private static final MariaTestSupport MARIA = new MariaTestSupport("mbackend");

    @AfterAll
    static void dropDatabase() {
        MARIA.close();
    }

    @Override
    MariaTestSupport server() {
        return MARIA;
    }

    @Override
    LockBackend backend(String table, FenceStrategy strategy) {
        return MARIA.backend(table).withFenceStrategy(strategy).build();
    }

    @Override
    LockBackend backendWithoutTable() {
        return MariaDbLockBackend.builder(MARIA.ds).withSchema(MARIA.db.name()).withTable("no_such_table").build();
    }
}
