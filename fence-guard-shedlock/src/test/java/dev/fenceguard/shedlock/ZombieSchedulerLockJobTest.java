package dev.fenceguard.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.testkit.ManualTimeSource;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@code @SchedulerLock} job in a Spring application with {@code @EnableSchedulerLock} that stalls past
 * {@code lockAtMostFor} (a GC pause, a hung call) while the next run takes the lock: ShedLock alone lets both
 * write; with the fenced provider the resource applies the newer run's write and refuses the zombie's.
 * Ordered by latches; the lease runs out on a manual clock, so nothing sleeps.
 */
class ZombieSchedulerLockJobTest {

    static final String JOB = "nightly-report";
    private static final String PREFIX = TestRedis.keyPrefix("shedlock-zombie");
    private static RedisClient client;
    private static FenceGuardRedis redis;

    @BeforeAll
    static void setUp() {
        client = RedisClient.create(TestRedis.server().uri().toString());
        redis = TestRedisKeys.builder(client, PREFIX).build();
    }

    @AfterAll
    static void tearDown() {
        redis.close();
        TestRedisKeys.delete(client, PREFIX);
        client.shutdown();
    }

    /** The application: ShedLock's annotation support, the fenced provider, one job. */
    @Configuration
    @EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
    static class App {
        @Bean
        ManualTimeSource time() {
            return new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));
        }

        @Bean
        LockClient locks(ManualTimeSource time) {
            return LockClient.builder(new InMemoryLockBackend(time)).withTimeSource(time).build();
        }

        @Bean
        LockProvider lockProvider(LockClient locks) {
            return FencedLockProvider.builder(locks).build();
        }

        @Bean
        Runs runs() {
            return new Runs();
        }

        @Bean
        ReportJob reportJob(Runs runs) {
            return new ReportJob(redis.fencedWrites(), PREFIX + "report", runs);
        }
    }

    /** What the runs saw, and the latches that stall the first one. */
    static final class Runs {
        final CountDownLatch firstRunHasItsFence = new CountDownLatch(1);
        final CountDownLatch firstRunMayWrite = new CountDownLatch(1);
        final AtomicBoolean firstRun = new AtomicBoolean(true);
        final List<FenceToken> fences = new CopyOnWriteArrayList<>();
        final Map<FenceToken, WriteOutcome> outcomes = new ConcurrentHashMap<>();
        final Map<FenceToken, Boolean> leaseValidWhenWriting = new ConcurrentHashMap<>();
    }

    /** Writes the report under the fence of its run; the first run stalls between reading the fence and writing. */
    static class ReportJob {
        private final FencedRedis writes;
        private final String resource;
        private final Runs runs;

        ReportJob(FencedRedis writes, String resource, Runs runs) {
            this.writes = writes;
            this.resource = resource;
            this.runs = runs;
        }

        @SchedulerLock(name = JOB, lockAtMostFor = "PT30S")
        public void report() throws InterruptedException {
            FenceToken fence = LockContext.requireHeld(JOB).fence();
            runs.fences.add(fence);
            if (runs.firstRun.compareAndSet(true, false)) {
                runs.firstRunHasItsFence.countDown();
                runs.firstRunMayWrite.await(); // the stall
            }
            runs.leaseValidWhenWriting.put(fence, LockContext.current(JOB).orElseThrow().isValid());
            runs.outcomes.put(fence, writes.set(resource, fence, "report of the run with fence " + fence.value()));
        }
    }

    @Test
    void theStalledRunsWriteIsStaleAndTheNextRunsWriteApplied() throws Exception {
        try (AnnotationConfigApplicationContext app = new AnnotationConfigApplicationContext(App.class)) {
            ReportJob job = app.getBean(ReportJob.class);
            Runs runs = app.getBean(Runs.class);
            ManualTimeSource time = app.getBean(ManualTimeSource.class);
            LockClient locks = app.getBean(LockClient.class);

            FutureTask<Void> zombie = new FutureTask<>(() -> {
                job.report();
                return null;
            });
            Thread.ofPlatform().name("zombie-run").start(zombie);
            assertThat(runs.firstRunHasItsFence.await(30, TimeUnit.SECONDS)).as("the first run took the lock").isTrue();

            time.advance(Duration.ofSeconds(31)); // past lockAtMostFor: the first run's lease is over
            job.report(); // the next run, on this thread: a new lease, a greater fence, a write that applies
            runs.firstRunMayWrite.countDown();
            zombie.get(30, TimeUnit.SECONDS); // the zombie wrote (or tried to) and ShedLock unlocked, without error

            FenceToken zombieFence = runs.fences.get(0);
            FenceToken nextFence = runs.fences.get(1);
            assertThat(nextFence).isGreaterThan(zombieFence);
            assertThat(runs.outcomes.get(nextFence)).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(runs.outcomes.get(zombieFence)).isInstanceOfSatisfying(WriteOutcome.Stale.class, stale -> {
                assertThat(stale.presentedFence()).isEqualTo(zombieFence.value());
                assertThat(stale.currentFence()).isEqualTo(nextFence.value());
            });
            assertThat(runs.leaseValidWhenWriting).as("a job that asks is told its lease is over")
                    .containsEntry(zombieFence, false).containsEntry(nextFence, true);
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                assertThat(c.sync().get(PREFIX + "report")).isEqualTo("report of the run with fence " + nextFence.value());
            }
            assertThat(locks.lookup(JOB)).as("both runs unlocked").isEmpty();
            assertThat(LockContext.current(JOB)).as("nothing left in this thread's context").isEmpty();
        }
    }
}
