package dev.fenceguard.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jpa.internal.JpaErrors;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.ZombieStorm;
import jakarta.persistence.EntityManager;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm on the PostgreSQL lock backend, with the counter written through JPA: claim and
 * increment by {@link FencedEntityWriter}, the read by {@code EntityManager.find}. Size: 300 attempts, or
 * {@code -Dfenceguard.storm.attempts=N} for a soak.
 */
class JpaZombieStormTest {

    private static final JpaTestSupport DB = new JpaTestSupport("jpastorm", List.of(Counter.DDL), Counter.class);

    @AfterAll
    static void close() {
        DB.close();
    }

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        DB.exec("INSERT INTO counters (id, n) VALUES ('c', 0)");
        FencedEntityWriter<Counter> counters = FencedEntity.builder(Counter.class).withMetrics(LockMetrics.none()).build().on(DB.emf);
        ZombieStorm.FencedCounter counter = new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return counters.claim("c", fence);
            }

            @Override
            public long read() {
                try (EntityManager em = DB.emf.createEntityManager()) {
                    return em.find(Counter.class, "c").n;
                } catch (RuntimeException e) {
                    throw JpaErrors.map(e, "Counter[id=c]", "read"); // a repository maps its own errors
                }
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return counters.update("c", fence, Map.of("n", value));
            }
        };
        FenceGuardMigrations.builder(DB.ds).withSchema(DB.schema.name()).withTable("locks").migrate();
        LockClient locks = LockClient.builder(FenceGuardJdbc.builder(DB.ds).withSchema(DB.schema.name()).withLockTable("locks").build().lockBackend())
                .withMetrics(LockMetrics.none()).withBackoff(Duration.ofMillis(1), Duration.ofMillis(50)).build();
        ZombieStorm.Result r = ZombieStorm.builder(locks, "counter:c", counter).withAttempts(ZombieStorm.attemptsProperty(300))
                .withTtl(Duration.ofMillis(100)).withCallTimeout(Duration.ofSeconds(15)).build().run();
        System.out.println("STORM jpa: " + r.summary());
        assertThat(r.stalls()).isPositive();
        assertThat(r.rejectedStale()).isPositive();
        r.requireSafe();
    }
}
