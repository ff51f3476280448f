package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.LockBackendContract;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/**
 * The backend contract for {@link MySqlLockBackend} on the test MariaDB (no MySQL server here), through MySQL
 * Connector/J for both fence strategies, with changed-row counts, and through MariaDB Connector/J.
 */
class MySqlBackendContractTest {

    private static MariaTestSupport connectorJ;
    private static MariaTestSupport changedRows;
    private static MariaTestSupport mariaDriver;

    @BeforeAll
    static void setUp() {
        connectorJ = new MariaTestSupport("my_contract", "mysql", "");
        changedRows = new MariaTestSupport("my_contract_ch", "mysql", "useAffectedRows=true");
        mariaDriver = new MariaTestSupport("my_contract_m", "mariadb", "");
    }

    @AfterAll
    static void tearDown() {
        connectorJ.close();
        changedRows.close();
        mariaDriver.close();
    }

    abstract static class OnMySqlConnectorJ extends LockBackendContract {
        abstract FenceStrategy strategy();

        MariaTestSupport server() {
            return connectorJ;
        }

        @Override
        protected LockBackend backend() {
            return new MySqlLockBackend(server().lockTable("locks_" + strategy().name().toLowerCase(Locale.ROOT)).withFenceStrategy(strategy()));
        }

        @Override
        protected int concurrencyAttemptsPerThread() {
            return 150; // 8 threads x 150 = 1,200 acquisitions on 3 keys
        }
    }

    @Nested
    class DenseCounter extends OnMySqlConnectorJ {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.DENSE;
        }
    }

    @Nested
    class ClockFloored extends OnMySqlConnectorJ {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.CLOCK_FLOORED;
        }
    }

    @Nested
    class DenseCounterWithChangedRowCounts extends OnMySqlConnectorJ {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.DENSE;
        }

        @Override
        MariaTestSupport server() {
            return changedRows;
        }
    }

    @Nested
    class ClockFlooredThroughMariaDbConnectorJ extends OnMySqlConnectorJ {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.CLOCK_FLOORED;
        }

        @Override
        MariaTestSupport server() {
            return mariaDriver;
        }
    }
}
