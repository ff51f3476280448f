package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.ZombieStorm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm on the PostgreSQL lock backend with the SQL fenced writes. Size: 300 attempts, or
 * {@code -Dfenceguard.storm.attempts=N} for a soak.
 */
class PostgresZombieStormTest {

    private static final PgTestSupport PG = new PgTestSupport("storm");

    @AfterAll
    static void dropSchema() {
        PG.close();
    }

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        ZombieStorm.FencedCounter counter = PgStorms.counter(PG.ds, PG.schema.name(), "counters");
        ZombieStorm.Result r = PgStorms.storm(PG.lockBackend("locks"), counter, ZombieStorm.attemptsProperty(300))
                .build().run();
        System.out.println("STORM postgres: " + r.summary());
        assertThat(r.stalls()).isPositive();
        assertThat(r.rejectedStale()).isPositive();
        r.requireSafe();
    }
}
