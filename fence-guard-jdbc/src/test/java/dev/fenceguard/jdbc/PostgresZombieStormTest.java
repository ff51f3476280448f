package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.ZombieStorm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The zombie storm on the PostgreSQL lock backend with the SQL fenced writes. */
class PostgresZombieStormTest {

    private static final PgTestSupport PG = new PgTestSupport("storm");

    @AfterAll
    static void dropSchema() {
        PG.close();
    }

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        PG.exec("CREATE TABLE " + PG.q("counters") + " (id TEXT PRIMARY KEY, n BIGINT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
        PG.exec("INSERT INTO " + PG.q("counters") + " (id, n) VALUES ('c', 0)");
        FencedWriter counters = FencedTable.builder(PG.schema.name(), "counters", "id", "fence_token")
                .withMetrics(LockMetrics.none()).build().on(PG.ds);
        LockClient locks = LockClient.builder(PG.backend("locks").build()).withMetrics(LockMetrics.none()).build();
        ZombieStorm.Result r = ZombieStorm.builder(locks, "counter:c", new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return counters.claim("c", fence);
            }

            @Override
            public long read() throws Exception {
                return Long.parseLong(PG.one("SELECT n FROM " + PG.q("counters") + " WHERE id = 'c'"));
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return counters.update("c", fence, Assignments.of("n", value));
            }
        }).build().run();
        System.out.println("postgres " + r.summary());
        assertThat(r.stalls()).isPositive();
        assertThat(r.rejectedStale()).isPositive();
        assertThat(r.isSafe()).as(r.summary()).isTrue();
    }
}
