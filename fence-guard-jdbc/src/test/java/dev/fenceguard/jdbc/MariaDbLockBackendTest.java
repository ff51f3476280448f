package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
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
        return new MariaDbLockBackend(MARIA.lockTable(table).withFenceStrategy(strategy));
    }

    @Override
    LockBackend backendOn(TableSettings settings) {
        return new MariaDbLockBackend(settings);
    }
}
