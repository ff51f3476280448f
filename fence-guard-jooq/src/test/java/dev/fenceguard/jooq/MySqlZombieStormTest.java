package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.jdbc.internal.MySqlErrors;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.ZombieStorm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm on {@code MySqlLockBackend} with the SQL fenced writes (claim, then update), on the test
 * MariaDB through MySQL Connector/J with its default found-row counts (the MariaDB storm runs with changed
 * rows). Size: 300 attempts, or {@code -Dfenceguard.storm.attempts=N}.
 */
class MySqlZombieStormTest {

    private static final MariaTestSupport SERVER = new MariaTestSupport("my_storm", "mysql", "");

    @AfterAll
    static void dropDatabase() {
        SERVER.close();
    }

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        ZombieStorm.FencedCounter counter = PgStorms.counter(SERVER.ds, SERVER.db.name(), "counters", MySqlErrors::map);
        ZombieStorm.Result r = PgStorms.storm(SERVER.mySqlBackend("locks"), counter, ZombieStorm.attemptsProperty(300)).build().run();
        System.out.println("STORM mysql backend: " + r.summary());
        assertThat(r.stalls()).isPositive();
        assertThat(r.rejectedStale()).isPositive();
        r.requireSafe();
    }
}
