package dev.fenceguard.core.singleflight;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.singleflight.Processes.Process;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Singleflight between simulated processes on one manual clock: every step is driven by the test. Time
 * never moves unless a test says so, which is how "woken by the notification, not by the poll" is shown.
 */
@Timeout(60) // a guard against a hang, not a timing assertion
class SingleflightTest {

    private static final String KEY = "report:2026-11";
    private static final Duration TTL = Duration.ofSeconds(10);
    private static final ResultCodec<String> UTF8 = ResultCodec.utf8();

    /** Poll interval and max wait far beyond anything the tests advance the clock by. */
    private final Processes three = new Processes(3, b -> b.withPollInterval(Duration.ofDays(1)).withMaxWait(Duration.ofDays(2))
            .withRetention(Duration.ofSeconds(5)));

    @Test
    void concurrentCallersInOneProcessShareOneCall() {
        Process p = three.get(0);
        CompletableFuture<String> gate = new CompletableFuture<>();
        AtomicInteger works = new AtomicInteger();
        List<CompletableFuture<String>> callers = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            callers.add(p.flights.async().run(KEY, TTL, UTF8, lease -> {
                works.incrementAndGet();
                return gate;
            }).toCompletableFuture());
        }
        int storeCalls = three.store.total();
        int lockCalls = p.link.calls();
        gate.complete("the report");

        assertThat(callers).allSatisfy(c -> assertThat(c).isCompletedWithValue("the report"));
        assertThat(works).as("the work ran once for 50 callers").hasValue(1);
        assertThat(p.metrics.get("shared")).as("49 callers joined the first one's flight").isEqualTo(49);
        assertThat(storeCalls).as("store calls of 50 callers before the work ended: one read, one begin").isEqualTo(2);
        assertThat(three.store.calls("publish")).isEqualTo(1);
        assertThat(lockCalls).as("lock calls of 50 callers: one acquire").isEqualTo(1);
        assertThat(p.metrics.get("led PUBLISHED")).isEqualTo(1);
    }

    @Test
    void blockingCallersInOneProcessShareOneCall() throws Exception {
        Process p = three.get(0);
        int n = 8;
        CountDownLatch joined = new CountDownLatch(n - 1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger works = new AtomicInteger();
        Singleflight flights = Singleflight.builder(p.client, three.store).withTimeSource(three.time)
                .withMetrics(new Processes.CountingMetrics() {
                    @Override
                    public void shared(String store) {
                        joined.countDown();
                    }
                }).build();
        ExecutorService threads = Executors.newFixedThreadPool(n);
        try {
            List<Future<String>> callers = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                callers.add(threads.submit(() -> flights.run(KEY, TTL, UTF8, lease -> {
                    works.incrementAndGet();
                    release.await();
                    return "fence " + lease.fence().value();
                })));
            }
            joined.await(); // all but the first have joined its flight
            release.countDown();
            for (Future<String> c : callers) {
                assertThat(c.get()).isEqualTo("fence 1");
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(works).hasValue(1);
        assertThat(three.store.calls("read")).isEqualTo(1);
    }

    @Test
    void aWaiterInAnotherProcessIsWokenByTheNotificationNotByThePoll() {
        CompletableFuture<String> gate = new CompletableFuture<>();
        CompletableFuture<String> leader = three.get(0).flights.async().run(KEY, TTL, UTF8, lease -> gate).toCompletableFuture();
        AtomicInteger otherWorks = new AtomicInteger();
        CompletableFuture<String> waiter = three.get(1).flights.async().run(KEY, TTL, UTF8, lease -> {
            otherWorks.incrementAndGet();
            return CompletableFuture.completedFuture("not me");
        }).toCompletableFuture();
        assertThat(waiter).isNotDone();
        assertThat(three.memory.watchers(LockKey.of(KEY))).as("the waiter listens").isEqualTo(1);

        gate.complete("computed once"); // the clock has not moved: only the publish's notification can wake the waiter

        assertThat(leader).isCompletedWithValue("computed once");
        assertThat(waiter).isCompletedWithValue("computed once");
        assertThat(otherWorks).hasValue(0);
        assertThat(three.get(1).metrics.get("waited RESULT")).isEqualTo(1);
        assertThat(three.memory.watchers(LockKey.of(KEY))).as("a finished flight stops listening").isZero();
    }

    @Test
    void aZombiesLatePublishIsRefusedAndItsCallersGetTheNewerResult() {
        Process zombie = three.get(0);
        Process successor = three.get(1);
        CompletableFuture<String> zombieWork = new CompletableFuture<>();
        CompletableFuture<String> zombieCaller = zombie.flights.async().run(KEY, TTL, UTF8, lease -> zombieWork).toCompletableFuture();
        zombie.link.freeze(); // paused: its renewals reach nobody
        three.advance(TTL.plusSeconds(1));

        CompletableFuture<String> successorWork = new CompletableFuture<>();
        CompletableFuture<String> successorCaller = successor.flights.async().run(KEY, TTL, UTF8, lease -> successorWork)
                .toCompletableFuture();
        assertThat(three.store.calls("begin")).as("the successor started a newer flight").isEqualTo(2);

        zombie.link.thaw(); // the zombie wakes up and publishes with fence 1
        zombieWork.complete("stale data");
        assertThat(three.store.publishes).containsExactly("1 stale");
        assertThat(zombieCaller).as("the zombie's caller waits for the newer flight").isNotDone();

        successorWork.complete("fresh data");
        assertThat(three.store.publishes).containsExactly("1 stale", "2 applied");
        assertThat(successorCaller).isCompletedWithValue("fresh data");
        assertThat(zombieCaller).isCompletedWithValue("fresh data");
        assertThat(zombie.metrics.get("led SUPERSEDED")).isEqualTo(1);
    }

    @Test
    void waitersTakeOverOnceADeadLeadersLeaseHasExpired() {
        Process dead = three.get(0);
        dead.flights.async().run(KEY, TTL, UTF8, lease -> new CompletableFuture<>()); // never finishes
        dead.link.freeze(); // and never renews
        CompletableFuture<String> waiter = three.get(1).flights.async().run(KEY, TTL, UTF8,
                lease -> CompletableFuture.completedFuture("taken over with fence " + lease.fence().value())).toCompletableFuture();

        three.advance(TTL.minusSeconds(1));
        assertThat(waiter).as("the dead leader's lease still runs").isNotDone();
        three.advance(Duration.ofSeconds(1).plus(AsyncSingleflight.MIN_EXPIRY_WAIT));

        assertThat(waiter).as("woken at the lease's expiry, a day before its poll").isCompletedWithValue("taken over with fence 2");
        assertThat(three.get(1).metrics.get("waited TOOK_OVER")).isEqualTo(1);
        dead.link.thaw();
    }

    @Test
    void aFailedWorkFailsItsLocalCallersAndWakesOtherProcessesToTakeOver() {
        CompletableFuture<String> failing = new CompletableFuture<>();
        CompletableFuture<String> first = three.get(0).flights.async().run(KEY, TTL, UTF8, lease -> failing).toCompletableFuture();
        CompletableFuture<String> second = three.get(0).flights.async().run(KEY, TTL, UTF8, lease -> failing).toCompletableFuture();
        CompletableFuture<String> other = three.get(1).flights.async().run(KEY, TTL, UTF8,
                lease -> CompletableFuture.completedFuture("second try")).toCompletableFuture();

        failing.completeExceptionally(new IllegalStateException("upstream down"));

        assertThat(first).isCompletedExceptionally();
        assertThatThrownBy(second::join).hasCauseInstanceOf(IllegalStateException.class).hasMessageContaining("upstream down");
        assertThat(three.store.calls("wake")).isEqualTo(1);
        assertThat(other).as("woken by the failed flight's wake, without the clock moving").isCompletedWithValue("second try");
        assertThat(three.get(0).metrics.get("led FAILED")).isEqualTo(1);
    }

    @Test
    void aRetainedResultAnswersWithoutComputingUntilItsRetentionEnds() {
        AtomicInteger works = new AtomicInteger();
        Process p = three.get(2);
        assertThat(p.flights.async().run(KEY, TTL, UTF8, lease -> CompletableFuture.completedFuture("v" + works.incrementAndGet())))
                .isCompletedWithValue("v1");
        three.advance(Duration.ofSeconds(4));
        assertThat(three.get(0).flights.async().run(KEY, TTL, UTF8, lease -> CompletableFuture.completedFuture("v" + works.incrementAndGet())))
                .as("within the retention of 5 s").isCompletedWithValue("v1");
        assertThat(three.get(0).metrics.get("retained")).isEqualTo(1);
        three.advance(Duration.ofSeconds(1));
        assertThat(three.get(0).flights.async().run(KEY, TTL, UTF8, lease -> CompletableFuture.completedFuture("v" + works.incrementAndGet())))
                .as("retention over: a new flight").isCompletedWithValue("v2");
    }

    @Test
    void aWaitGivesUpWithTimeoutAtTheMaxWait() {
        Processes two = new Processes(2, b -> b.withPollInterval(Duration.ofDays(1)).withMaxWait(Duration.ofSeconds(3)));
        two.get(0).flights.async().run(KEY, TTL, UTF8, lease -> new CompletableFuture<>());
        CompletableFuture<String> waiter = two.get(1).flights.async().run(KEY, TTL, UTF8,
                lease -> CompletableFuture.completedFuture("x")).toCompletableFuture();
        two.advance(Duration.ofSeconds(3));
        assertThatThrownBy(waiter::join).cause().isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT)).hasMessageContaining("max wait of PT3S");
        assertThat(two.get(1).metrics.get("waited GAVE_UP")).isEqualTo(1);
    }

    @Test
    void anOversizeResultFailsAndIsNotPublished() {
        Processes one = new Processes(1, b -> b.withMaxResultBytes(4));
        CompletableFuture<String> caller = one.get(0).flights.async().run(KEY, TTL, UTF8,
                lease -> CompletableFuture.completedFuture("12345")).toCompletableFuture();
        assertThatThrownBy(caller::join).cause().isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT)).hasMessageContaining("5 bytes, more than maxResultBytes 4");
        assertThat(one.store.calls("publish")).isZero();
    }

    @Test
    void checkedExceptionsOfTheBlockingWorkArriveWrapped() {
        Process p = three.get(0);
        assertThatThrownBy(() -> p.flights.run(KEY, TTL, UTF8, lease -> {
            throw new java.io.IOException("disk gone");
        })).isInstanceOf(CompletionException.class).hasCauseInstanceOf(java.io.IOException.class);
    }

    @Test
    void badInputFailsBeforeAnyIo() {
        Singleflight f = three.get(0).flights;
        java.util.function.Function<dev.fenceguard.core.Lease, CompletableFuture<String>> work = l -> CompletableFuture.completedFuture("x");
        // each line: what was tried
        assertThatThrownBy(() -> f.async().run(null, TTL, UTF8, work)).isInstanceOf(NullPointerException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> f.async().run("", TTL, UTF8, work)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty");
        assertThatThrownBy(() -> f.async().run("k".repeat(505), TTL, UTF8, work)).as("512 bytes with the prefix 'singleflight:'")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock prefix 'singleflight:'");
        assertThatThrownBy(() -> f.async().run("a\0b", TTL, UTF8, work)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUL");
        assertThatThrownBy(() -> f.async().run(KEY, Duration.ZERO, UTF8, work)).hasMessageContaining("ttl must be at least 1 ms");
        assertThatThrownBy(() -> f.async().run(KEY, Duration.ofSeconds(-1), UTF8, work)).hasMessageContaining("ttl must be at least 1 ms");
        assertThatThrownBy(() -> f.async().run(KEY, Duration.ofNanos(1_500_000), UTF8, work)).hasMessageContaining("whole number of milliseconds");
        assertThatThrownBy(() -> f.async().run(KEY, null, UTF8, work)).isInstanceOf(NullPointerException.class).hasMessageContaining("ttl");
        assertThatThrownBy(() -> f.async().run(KEY, TTL, null, work)).isInstanceOf(NullPointerException.class).hasMessageContaining("codec");
        assertThatThrownBy(() -> f.async().run(KEY, TTL, UTF8, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("work");
        assertThatThrownBy(() -> f.run(KEY, TTL, UTF8, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("work");
        assertThat(three.store.total()).as("no store call").isZero();
        assertThat(three.get(0).link.calls()).as("no lock call").isZero();

        Singleflight.Builder b = Singleflight.builder(three.get(0).client, three.store);
        assertThatThrownBy(() -> b.withMaxWait(Duration.ofSeconds(-1))).hasMessageContaining("maxWait must not be negative");
        assertThatThrownBy(() -> b.withPollInterval(Duration.ZERO)).hasMessage("pollInterval must be between PT0.001S and PT24H, was PT0S");
        assertThatThrownBy(() -> b.withRetention(Duration.ofNanos(100))).hasMessage("retention must be between PT0.001S and PT720H, was PT0.0000001S");
        assertThatThrownBy(() -> b.withRetention(Duration.ofNanos(1_000_001))).hasMessageContaining("whole number of milliseconds");
        assertThatThrownBy(() -> b.withCallTimeout(Duration.ofHours(1))).hasMessageContaining("callTimeout must be between");
        assertThatThrownBy(() -> b.withMaxResultBytes(0)).hasMessage("maxResultBytes must be between 1 and 67108864, was 0");
        assertThatThrownBy(() -> b.withLockKeyPrefix("x".repeat(65))).hasMessageContaining("at most 64 characters");
        assertThatThrownBy(() -> Singleflight.builder(null, three.store)).isInstanceOf(NullPointerException.class).hasMessageContaining("locks");
    }
}
