package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/** The backend contract on real PostgreSQL, for both fence strategies. */
class PostgresBackendContractTest {

    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("contract");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    abstract static class OnPostgres extends LockBackendContract {
        abstract FenceStrategy strategy();

        @Override
        protected LockBackend backend() {
            return pg.backend("locks_" + strategy().name().toLowerCase(java.util.Locale.ROOT)).withFenceStrategy(strategy()).build();
        }

        @Override
        protected int concurrencyAttemptsPerThread() {
            return 150; // 8 threads x 150 = 1,200 acquisitions on 3 keys
        }
    }

    @Nested
    class DenseCounter extends OnPostgres {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.DENSE;
        }
    }

    @Nested
    class ClockFloored extends OnPostgres {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.CLOCK_FLOORED;
        }
    }
}
