package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The story fence-guard exists for, on real PostgreSQL with real lease expiry. */
class ZombieScenarioTest {

    private static final Duration SHORT_TTL = Duration.ofMillis(300);
    private static PgTestSupport pg;
    private static LockClient locks;
    private static FencedTable orders;

    @BeforeAll
    static void setUp() throws Exception {
        pg = new PgTestSupport("zombie");
        locks = LockClient.builder(pg.lockBackend("locks")).withMetrics(LockMetrics.none()).build();
        pg.exec("CREATE TABLE " + pg.q("orders") + " (id BIGINT PRIMARY KEY, status TEXT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
        pg.exec("INSERT INTO " + pg.q("orders") + " VALUES (42, 'new', 0)");
        orders = FencedTable.builder(pg.schema.name(), "orders", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build();
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Test
    void aZombieWriteAfterLeaseExpiryIsRejectedAndTheSuccessorsDataStays() throws Exception {
        Lease a = locks.tryAcquire("orders:42", SHORT_TTL).orElseThrow();
        Thread.sleep(SHORT_TTL.multipliedBy(2).toMillis()); // A pauses past its lease (a long GC)
        assertThat(a.isValid()).isFalse();

        Lease b = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
        assertThat(b.fence()).isGreaterThan(a.fence());
        assertThat(orders.on(pg.ds).update(42L, b.fence(), Assignments.of("status", "paid by B"))).isInstanceOf(WriteOutcome.Applied.class);

        WriteOutcome zombie = orders.on(pg.ds).update(42L, a.fence(), Assignments.of("status", "paid by A"));
        assertThat(zombie).isInstanceOfSatisfying(WriteOutcome.Stale.class, s -> {
            assertThat(s.presentedFence()).isEqualTo(a.fence().value());
            assertThat(s.currentFence()).isEqualTo(b.fence().value());
        });
        assertThat(pg.one("SELECT status, fence_token FROM " + pg.q("orders") + " WHERE id = 42"))
                .isEqualTo("paid by B|" + b.fence().value());
        assertThat(locks.release(a)).as("the zombie cannot release its successor's lock").isFalse();
        assertThat(locks.lookup("orders:42")).isPresent();
        assertThat(locks.release(b)).isTrue();
    }

    @Test
    void oneLeaseMayWriteManyTimesUnderSameOrNewer() throws Exception {
        Boolean applied = locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
            FencedWriter w = orders.on(pg.ds);
            return w.update(42L, lease.fence(), Assignments.of("status", "step 1")).isApplied()
                    && w.update(42L, lease.fence(), Assignments.of("status", "step 2")).isApplied();
        }).orElseThrow();
        assertThat(applied).isTrue();
        assertThat(pg.one("SELECT status FROM " + pg.q("orders") + " WHERE id = 42")).isEqualTo("step 2");
    }
}
