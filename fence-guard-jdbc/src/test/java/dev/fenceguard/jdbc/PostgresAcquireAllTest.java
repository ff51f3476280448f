package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LeaseSet;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code acquireAll} of a few thousand keys on a real PostgreSQL: all of them, or none left behind. */
@Timeout(300) // a guard against a hang, not a timing assertion
class PostgresAcquireAllTest {

    private static final Duration TTL = Duration.ofMinutes(10); // far longer than taking 3,000 keys one by one
    private static final int KEYS = 3_000;
    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("pgall");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    private static List<String> keys() {
        return IntStream.range(0, KEYS).mapToObj(i -> String.format("all:%05d", i)).toList();
    }

    @Test
    void threeThousandKeysAreTakenTogetherAndReleasedTogether() throws Exception {
        LockClient client = LockClient.builder(new PostgresLockBackend(pg.lockTable("all_ok"))).withMetrics(LockMetrics.none()).build();
        try (LeaseSet set = client.acquireAll(keys(), TTL, Duration.ZERO).orElseThrow()) {
            assertThat(set.leases()).hasSize(KEYS);
            assertThat(set.isValid()).isTrue();
            assertThat(live("all_ok")).isEqualTo(KEYS);
        }
        assertThat(live("all_ok")).as("closing the set released every key").isZero();
    }

    @Test
    void aHeldKeyInTheMiddleLeavesNoneOfTheOthersLocked() throws Exception {
        LockClient client = LockClient.builder(new PostgresLockBackend(pg.lockTable("all_held"))).withMetrics(LockMetrics.none()).build();
        Lease blocker = client.tryAcquire("all:01500", TTL).orElseThrow();
        assertThat(client.acquireAll(keys(), TTL, Duration.ZERO)).isEmpty();
        // The 1,500 keys taken before the held one are released without waiting for the answers: poll the table.
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (live("all_held") > 1 && System.nanoTime() < giveUp) {
            Thread.sleep(20);
        }
        assertThat(pg.rows("SELECT lock_key FROM " + pg.q("all_held") + " WHERE lock_id IS NOT NULL AND expires_at > clock_timestamp()"))
                .as("only the blocker is held").containsExactly("all:01500");
        blocker.close();
    }

    private static int live(String table) {
        return Integer.parseInt(pg.one("SELECT count(*) FROM " + pg.q(table) + " WHERE lock_id IS NOT NULL AND expires_at > clock_timestamp()"));
    }
}
