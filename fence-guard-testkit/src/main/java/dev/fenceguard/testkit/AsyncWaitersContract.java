package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many callers waiting on one contended key through the asynchronous client, on a real backend, as a
 * JUnit 5 suite: no thread is held per waiting caller (the test counts the platform threads the process
 * adds while they wait). Each caller gets the lock in turn, or gives up at its deadline; nothing is left
 * locked. A backend's test extends it and supplies {@link #backend()}.
 *
 * @since 0.1
 */
@Timeout(300) // a guard against a hang, not a timing assertion
public abstract class AsyncWaitersContract {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final String hot = "waiters:" + UUID.randomUUID().toString().substring(0, 8) + ":hot";

    /** A backend on the store under test, opened (connection made, scripts loaded) before the test counts threads. */
    protected abstract LockBackend backend();

    /** How many callers wait until their deadline while the lock stays held; default 10,000. */
    protected int waitersThatGiveUp() {
        return 10_000;
    }

    /** How many callers wait and each get the lock in turn; default 1,000. */
    protected int waitersThatGetIt() {
        return 1_000;
    }

    /** Platform threads the process may add while the callers wait (driver event loops, a carrier per core); default 4. */
    protected int platformThreadAllowance() {
        return 4;
    }

    private static int platformThreads() {
        return Thread.getAllStackTraces().size(); // virtual threads are not listed
    }

    /** The platform threads by name, digits folded, for the failure message: who added them. */
    private static String threadNames() {
        return Thread.getAllStackTraces().keySet().stream().map(t -> t.getName().replaceAll("\\d+", "N"))
                .collect(java.util.stream.Collectors.groupingBy(n -> n, java.util.TreeMap::new, java.util.stream.Collectors.counting()))
                .toString();
    }

    @Test
    public void waitersGiveUpAtTheirDeadlineOnAFewPlatformThreads() throws Exception {
        LockClient locks = LockClient.builder(backend()).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)).build();
        AsyncLockClient async = locks.async();
        // Through the asynchronous face, as the waiters below: it opens the connection, loads the scripts and starts
        // whatever the backend's calls run on (a JDBC backend's virtual threads, and the JDK's scheduler and pollers
        // of virtual threads), before the count. The blocking face would run a JDBC call on this very thread.
        Lease blocker = async.tryAcquire(hot, TTL).toCompletableFuture().get(30, TimeUnit.SECONDS).orElseThrow();
        int before = platformThreads();
        List<CompletableFuture<Optional<Lease>>> waiters = new ArrayList<>();
        for (int i = 0; i < waitersThatGiveUp(); i++) {
            waiters.add(async.acquire(hot, TTL, Duration.ofSeconds(3)).toCompletableFuture());
        }
        int whileWaiting = platformThreads();
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        whileWaiting = Math.max(whileWaiting, platformThreads()); // threads started during the wait are still there
        System.out.printf("%s: platform threads %d before, %d while %d callers waited%n", getClass().getSimpleName(), before,
                whileWaiting, waitersThatGiveUp());
        assertThat(whileWaiting - before).as("platform threads added while %d callers wait: %s", waitersThatGiveUp(), threadNames()).isLessThanOrEqualTo(platformThreadAllowance());
        assertThat(waiters).as("the blocker held the lock throughout: every waiter gave up at its deadline")
                .allSatisfy(w -> assertThat(w.join()).isEmpty());
        assertThat(locks.lookup(hot)).map(info -> info.fence()).contains(blocker.fence());
        blocker.close();
        assertThat(locks.lookup(hot)).as("nothing left locked").isEmpty();
    }

    @Test
    public void waitersEachGetTheLockInTurn() throws Exception {
        LockClient locks = LockClient.builder(backend()).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(20)).build();
        AsyncLockClient async = locks.async();
        Lease blocker = async.tryAcquire(hot, TTL).toCompletableFuture().get(30, TimeUnit.SECONDS).orElseThrow(); // as above
        int before = platformThreads();
        ConcurrentLinkedQueue<Long> fences = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Optional<Long>>> waiters = new ArrayList<>();
        for (int i = 0; i < waitersThatGetIt(); i++) {
            waiters.add(async.withLock(hot, TTL, Duration.ofMinutes(3), lease -> {
                fences.add(lease.fence().value());
                return CompletableFuture.completedFuture(lease.fence().value());
            }).toCompletableFuture());
        }
        int whileWaiting = platformThreads();
        assertThat(waiters).as("all wait for the blocker").noneMatch(CompletableFuture::isDone);
        blocker.close();
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(240, TimeUnit.SECONDS);
        whileWaiting = Math.max(whileWaiting, platformThreads());
        System.out.printf("%s: platform threads %d before, %d while %d callers waited%n", getClass().getSimpleName(), before,
                whileWaiting, waitersThatGetIt());
        assertThat(whileWaiting - before).as("platform threads added while %d callers wait: %s", waitersThatGetIt(), threadNames()).isLessThanOrEqualTo(platformThreadAllowance());
        assertThat(waiters).allSatisfy(w -> assertThat(w.join()).isPresent());
        assertThat(new ArrayList<>(fences)).as("one holder at a time, fences in the order granted")
                .hasSize(waitersThatGetIt()).isSorted().doesNotHaveDuplicates().allMatch(f -> f > blocker.fence().value());
        assertThat(locks.lookup(hot)).as("nothing left locked").isEmpty();
    }
}
