package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Thousands of callers waiting on one contended key through the asynchronous client, on the real
 * Redis: no thread is held per waiting caller. Each gets the lock in turn, or gives up at its deadline;
 * nothing is left locked.
 */
@Timeout(300) // a guard against a hang, not a timing assertion
class RedisAsyncWaitersTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final String prefix = "fg-test:waiters:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private final FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix)
            .withFenceKeyPrefix(prefix + "fence:").withMetrics(LockMetrics.none()).build();

    @AfterEach
    void cleanUp() {
        redis.close();
        RedisSupport.deleteKeys(prefix);
    }

    private static int platformThreads() {
        return Thread.getAllStackTraces().size(); // virtual threads are not listed
    }

    @Test
    void tenThousandWaitersGiveUpAtTheirDeadlineOnAFewPlatformThreads() throws Exception {
        LockClient locks = LockClient.builder(redis.lockBackend()).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)).build();
        AsyncLockClient async = locks.async();
        Lease blocker = locks.tryAcquire("hot", TTL).orElseThrow(); // also opens the connection and loads the scripts
        int before = platformThreads();
        List<CompletableFuture<Optional<Lease>>> waiters = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            waiters.add(async.acquire("hot", TTL, Duration.ofSeconds(3)).toCompletableFuture());
        }
        int whileWaiting = platformThreads();
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        assertThat(whileWaiting - before).as("platform threads added while 10,000 callers wait").isLessThanOrEqualTo(2);
        assertThat(waiters).as("the blocker held the lock throughout: every waiter gave up at its deadline")
                .allSatisfy(w -> assertThat(w.join()).isEmpty());
        assertThat(locks.lookup("hot")).map(info -> info.fence()).contains(blocker.fence());
        blocker.close();
        assertThat(locks.lookup("hot")).as("nothing left locked").isEmpty();
    }

    @Test
    void aThousandWaitersEachGetTheLockInTurn() throws Exception {
        LockClient locks = LockClient.builder(redis.lockBackend()).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(20)).build();
        AsyncLockClient async = locks.async();
        Lease blocker = locks.tryAcquire("hot", TTL).orElseThrow();
        int before = platformThreads();
        ConcurrentLinkedQueue<Long> fences = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Optional<Long>>> waiters = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            waiters.add(async.withLock("hot", TTL, Duration.ofMinutes(3), lease -> {
                fences.add(lease.fence().value());
                return CompletableFuture.completedFuture(lease.fence().value());
            }).toCompletableFuture());
        }
        int whileWaiting = platformThreads();
        assertThat(waiters).as("all wait for the blocker").noneMatch(CompletableFuture::isDone);
        blocker.close();
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(240, TimeUnit.SECONDS);
        assertThat(whileWaiting - before).as("platform threads added while 1,000 callers wait").isLessThanOrEqualTo(2);
        assertThat(waiters).allSatisfy(w -> assertThat(w.join()).isPresent());
        assertThat(new ArrayList<>(fences)).as("one holder at a time, fences in the order granted")
                .hasSize(1_000).isSorted().doesNotHaveDuplicates().allMatch(f -> f > blocker.fence().value());
        assertThat(locks.lookup("hot")).as("nothing left locked").isEmpty();
    }
}
