package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.MySqlErrors;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.ZombieStorm;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm with the SQL fenced writes (claim, then update) on the test MariaDB, once per lock
 * backend of the server family, each through the driver and row-count mode the other does not use, in a
 * database of its own. Size: 300 attempts each, or {@code -Dfenceguard.storm.attempts=N}.
 */
class MariaDbZombieStormTest {

    /**
     * The MariaDB lock backend through MariaDB Connector/J with changed-row counts ({@code useAffectedRows=true}),
     * the mode where an update that changes nothing counts 0.
     */
    @Test
    void theMariaDbBackendThroughMariaDbConnectorJWithChangedRows() throws Exception {
        storm(new MariaTestSupport("storm", "mariadb", "useAffectedRows=true"), MariaTestSupport::mariaDbBackend, "mariadb");
    }

    /** {@code MySqlLockBackend} through MySQL Connector/J with its default found-row counts. */
    @Test
    void theMySqlBackendThroughMySqlConnectorJWithFoundRows() throws Exception {
        storm(new MariaTestSupport("my_storm", "mysql", ""), MariaTestSupport::mySqlBackend, "mysql backend");
    }

    private static void storm(MariaTestSupport server, BiFunction<MariaTestSupport, String, LockBackend> backend, String label)
            throws Exception {
        try (server) {
            ZombieStorm.FencedCounter counter = PgStorms.counter(server.ds, server.db.name(), "counters", MySqlErrors::map);
            ZombieStorm.Result r = PgStorms.storm(backend.apply(server, "locks"), counter, ZombieStorm.attemptsProperty(300)).build().run();
            System.out.println("STORM " + label + ": " + r.summary());
            assertThat(r.stalls()).isPositive();
            assertThat(r.rejectedStale()).isPositive();
            r.requireSafe();
        }
    }
}
