package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.LockBackendContract;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/** The backend contract on the test MariaDB, for both fence strategies, through both drivers. */
class MariaDbBackendContractTest {

    private static MariaTestSupport maria;
    private static MariaTestSupport mysqlDriver;

    @BeforeAll
    static void setUp() {
        maria = new MariaTestSupport("contract");
        mysqlDriver = new MariaTestSupport("contract_cj", "mysql", "");
    }

    @AfterAll
    static void tearDown() {
        maria.close();
        mysqlDriver.close();
    }

    abstract static class OnMariaDb extends LockBackendContract {
        abstract FenceStrategy strategy();

        MariaTestSupport server() {
            return maria;
        }

        @Override
        protected LockBackend backend() {
            return new MariaDbLockBackend(server().lockTable("locks_" + strategy().name().toLowerCase(Locale.ROOT)).withFenceStrategy(strategy()));
        }

        @Override
        protected int concurrencyAttemptsPerThread() {
            return 150; // 8 threads x 150 = 1,200 acquisitions on 3 keys
        }
    }

    @Nested
    class DenseCounter extends OnMariaDb {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.DENSE;
        }
    }

    @Nested
    class ClockFloored extends OnMariaDb {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.CLOCK_FLOORED;
        }
    }

    @Nested
    class DenseCounterThroughMySqlConnectorJ extends OnMariaDb {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.DENSE;
        }

        @Override
        MariaTestSupport server() {
            return mysqlDriver;
        }
    }
}
