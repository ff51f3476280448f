package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.LockBackendContract;
import dev.fenceguard.testkit.servers.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/**
 * The backend contract on real PostgreSQL, for both fence strategies, on the test server
 * ({@link TestPostgres#server()}) and on embedded PostgreSQL 18, so every run covers two versions.
 */
class PostgresBackendContractTest {

    private static PgTestSupport pg;
    private static PgTestSupport pg18;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("contract");
        pg18 = new PgTestSupport(TestPostgres.embedded(), "contract");
        assertThat(TestPostgres.embedded().version()).startsWith("18.");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
        pg18.close();
    }

    abstract static class OnPostgres extends LockBackendContract {
        abstract FenceStrategy strategy();

        PgTestSupport server() {
            return pg;
        }

        @Override
        protected LockBackend backend() {
            return new PostgresLockBackend(server().lockTable("locks_" + strategy().name().toLowerCase(java.util.Locale.ROOT)).withFenceStrategy(strategy()));
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

    @Nested
    class DenseCounterOnEmbeddedPostgres18 extends OnPostgres {
        @Override
        FenceStrategy strategy() {
            return FenceStrategy.DENSE;
        }

        @Override
        PgTestSupport server() {
            return pg18;
        }
    }
}
