package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.jdbc.internal.MySqlErrors;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.ZombieStorm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm on the MariaDB lock backend with the SQL fenced writes (claim, then update), through
 * MariaDB Connector/J with changed-row counts ({@code useAffectedRows=true}), the mode where an update
 * that changes nothing counts 0. Size: 300 attempts, or {@code -Dfenceguard.storm.attempts=N}.
 */
class MariaDbZombieStormTest {

    private static final MariaTestSupport MARIA = new MariaTestSupport("storm", "mariadb", "useAffectedRows=true");

    @AfterAll
    static void dropDatabase() {
        MARIA.close();
    }

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        ZombieStorm.FencedCounter counter = PgStorms.counter(MARIA.ds, MARIA.db.name(), "counters", MySqlErrors::map);
        ZombieStorm.Result r = PgStorms.storm(MARIA.mariaDbBackend("locks"), counter, ZombieStorm.attemptsProperty(300)).build().run();
        System.out.println("STORM mariadb: " + r.summary());
        assertThat(r.stalls()).isPositive();
        assertThat(r.rejectedStale()).isPositive();
        r.requireSafe();
    }
}
