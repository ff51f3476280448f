package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.core.singleflight.SingleflightMetrics;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.FlightStore.FlightResult;
import dev.fenceguard.core.spi.FlightStore.FlightStart;
import dev.fenceguard.core.spi.LockBackend;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Singleflight on a real store, as a JUnit 5 suite: the store's fenced begin/publish, retention, key
 * isolation, and flights between simulated processes (each with its own store instance, lock client
 * and {@link PausableBackend} link): callers of one process share one call, a waiter in another
 * process is woken by the store's notification (its poll interval is a day), waiters take over from a
 * failed or dead leader, and a zombie's late publish is refused. Steps are ordered by latches and the
 * flights' own stages, never by sleeps; real time passes only for leases and retention to run out.
 *
 * <pre>{@code
 * class PostgresSingleflightTest extends SingleflightContract {
 *     protected LockBackend lockBackend() { return postgresBackend; }
 *     protected FlightStore newStore() { return FenceGuardJdbc.builder(dataSource).build().flightStore(); }   // one per process
 * }
 * }</pre>
 *
 * <p>Stores that are {@link AutoCloseable} are closed after each test.
 *
 * @since 0.1
 */
@Timeout(120) // a guard against a hang, not a timing assertion
public abstract class SingleflightContract {

    private static final Duration CALL = Duration.ofSeconds(10);
    private static final Duration LONG = Duration.ofDays(1);
    private static final ResultCodec<String> UTF8 = ResultCodec.utf8();

    private final String prefix = "sf-" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private final List<AutoCloseable> opened = new ArrayList<>();

    /** The lock backend the flights' leases live on (shared by the simulated processes, each through its own link). */
    protected abstract LockBackend lockBackend();

    /** A new store instance on the store under test, as one process would have (its own listener). */
    protected abstract FlightStore newStore();

    /** Called after every test, once the stores have been closed. */
    protected void cleanUp() {}

    /** A flight key unique to this test run, so the suite runs on shared servers. */
    protected final String key(String name) {
        return prefix + name;
    }

    @AfterEach
    void closeStores() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
        cleanUp();
    }

    private FlightStore store() {
        FlightStore s = newStore();
        if (s instanceof AutoCloseable c) {
            opened.add(c);
        }
        return s;
    }

    private static <T> T get(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    // --- the store itself ---

    @Test
    void onlyTheNewestFlightsPublishApplies() throws Exception {
        FlightStore store = store();
        LockKey k = LockKey.of(key("newest"));
        assertThat(get(store.read(k, CALL))).isEmpty();
        assertThat(get(store.begin(k, 5, CALL))).isEqualTo(new FlightStart.Started());
        assertThat(get(store.begin(k, 4, CALL))).as("an older flight cannot begin").isEqualTo(new FlightStart.Superseded(5));
        assertThat(get(store.publish(k, 4, utf8("old"), Duration.ofMinutes(1), CALL))).isInstanceOfSatisfying(
                WriteOutcome.Stale.class, s -> assertThat(s.currentFence()).isEqualTo(5));
        assertThat(get(store.read(k, CALL))).as("a refused publish changes nothing").isEmpty();
        assertThat(get(store.publish(k, 5, utf8("five"), Duration.ofMinutes(1), CALL)).isApplied()).isTrue();
        FlightResult r = get(store.read(k, CALL)).orElseThrow();
        assertThat(r.fence()).isEqualTo(5);
        assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("five");
        assertThat(get(store.begin(k, 6, CALL))).as("a retained result answers a begin").isInstanceOfSatisfying(
                FlightStart.Retained.class, s -> assertThat(s.result().fence()).isEqualTo(5));
    }

    @Test
    void aZombieCannotPublishOnceANewerFlightBegan() throws Exception {
        FlightStore store = store();
        LockKey k = LockKey.of(key("zombie-store"));
        assertThat(get(store.begin(k, 7, CALL))).isEqualTo(new FlightStart.Started());
        assertThat(get(store.begin(k, 8, CALL))).as("flight 7 has published nothing: 8 takes over").isEqualTo(new FlightStart.Started());
        assertThat(get(store.publish(k, 7, utf8("zombie"), Duration.ofMinutes(1), CALL))).isInstanceOfSatisfying(
                WriteOutcome.Stale.class, s -> assertThat(s.currentFence()).isEqualTo(8));
        assertThat(get(store.read(k, CALL))).isEmpty();
        assertThat(get(store.publish(k, 8, utf8("successor"), Duration.ofMinutes(1), CALL)).isApplied()).isTrue();
        assertThat(get(store.publish(k, 7, utf8("zombie again"), Duration.ofMinutes(1), CALL)).isApplied())
                .as("nor after the successor published").isFalse();
        assertThat(new String(get(store.read(k, CALL)).orElseThrow().value(), StandardCharsets.UTF_8)).isEqualTo("successor");
    }

    @Test
    void aResultIsRetainedForItsRetentionByTheStoresClock() throws Exception {
        FlightStore store = store();
        LockKey k = LockKey.of(key("retention"));
        get(store.begin(k, 1, CALL));
        // 2 s: the read right after the publish must come inside it even on a loaded machine (with 300 ms a
        // slow round trip could already miss it); the loop below then waits it out.
        assertThat(get(store.publish(k, 1, utf8("brief"), Duration.ofSeconds(2), CALL)).isApplied()).isTrue();
        assertThat(get(store.read(k, CALL))).isPresent();
        // Waiting for the server's clock to pass the retention: each read is a round trip, so this never spins.
        long guard = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (get(store.read(k, CALL)).isPresent()) {
            assertThat(System.nanoTime() - guard).as("the result expires within the guard time").isNegative();
        }
        assertThat(get(store.begin(k, 2, CALL))).as("an expired result does not answer a begin").isEqualTo(new FlightStart.Started());
    }

    @Test
    void keysDoNotCollide() throws Exception {
        FlightStore store = store();
        List<String> names = List.of("a{b}", "a%7Bb%7D", "x/y", "x%2Fy", "ä", "ö", "{", "}", "k".repeat(400) + "/{%}");
        for (int i = 0; i < names.size(); i++) {
            LockKey k = LockKey.of(key(names.get(i)));
            get(store.begin(k, 10 + i, CALL));
            assertThat(get(store.publish(k, 10 + i, utf8("value " + i), Duration.ofMinutes(1), CALL)).isApplied())
                    .as("publish under %s", names.get(i)).isTrue();
        }
        for (int i = 0; i < names.size(); i++) {
            FlightResult r = get(store.read(LockKey.of(key(names.get(i))), CALL)).orElseThrow();
            assertThat(r.fence()).as("key %s", names.get(i)).isEqualTo(10 + i);
            assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("value " + i);
        }
    }

    @Test
    void bytesRoundTripExactly() throws Exception {
        FlightStore store = store();
        LockKey k = LockKey.of(key("bytes"));
        byte[] all = new byte[256 * 4];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        get(store.begin(k, 3, CALL));
        get(store.publish(k, 3, all, Duration.ofMinutes(1), CALL));
        assertThat(get(store.read(k, CALL)).orElseThrow().value()).isEqualTo(all);
    }

    // --- flights between processes ---

    /** One simulated process: its own store instance, lock client and pausable link. */
    private final class Proc {
        final PausableBackend link = new PausableBackend(lockBackend());
        final AtomicInteger lookups = new AtomicInteger();
        final CountDownLatch waiting;
        final FlightStore store;
        final LockClient client;
        final Singleflight flights;

        Proc(CountDownLatch waiting, FlightStore store, UnaryOperator<Singleflight.Builder> settings) {
            this.waiting = waiting;
            this.store = store;
            LockBackend counted = new LookupSignal(link, this);
            this.client = LockClient.builder(counted).withMetrics(LockMetrics.none()).withCallTimeout(CALL)
                    .withReleaseTimeout(Duration.ofSeconds(2)).build();
            this.flights = settings.apply(Singleflight.builder(client, store).withMetrics(SingleflightMetrics.none())
                    .withPollInterval(LONG).withMaxWait(Duration.ofMinutes(1)).withCallTimeout(CALL)).build();
        }
    }

    private Proc proc(CountDownLatch waiting) {
        return new Proc(waiting, store(), b -> b);
    }

    /** Tells when a process looks up the lock: it does so only once it listens and has looked again, just before it sleeps. */
    private record LookupSignal(LockBackend inner, Proc proc) implements LockBackend {
        @Override
        public String name() {
            return inner.name();
        }

        @Override
        public CompletionStage<Optional<dev.fenceguard.core.spi.Grant>> tryAcquire(LockKey key, dev.fenceguard.core.LockId lockId,
                Duration ttl, Duration timeout) {
            return inner.tryAcquire(key, lockId, ttl, timeout);
        }

        @Override
        public CompletionStage<Boolean> release(LockKey key, dev.fenceguard.core.LockId lockId, Duration timeout) {
            return inner.release(key, lockId, timeout);
        }

        @Override
        public CompletionStage<Optional<java.time.Instant>> extend(LockKey key, dev.fenceguard.core.LockId lockId, Duration ttl,
                Duration timeout) {
            return inner.extend(key, lockId, ttl, timeout);
        }

        @Override
        public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
            proc.lookups.incrementAndGet();
            return inner.lookup(key, timeout).whenComplete((v, e) -> {
                if (proc.waiting != null) {
                    proc.waiting.countDown();
                }
            });
        }
    }

    @Test
    void callersInOneProcessShareOneCallAndOtherProcessesWaitForIt() throws Exception {
        CountDownLatch othersWaiting = new CountDownLatch(2);
        Proc leader = proc(null);
        Proc b = proc(othersWaiting);
        Proc c = proc(othersWaiting);
        String k = key("shared");
        CompletableFuture<String> gate = new CompletableFuture<>();
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger works = new AtomicInteger();
        List<CompletableFuture<String>> callers = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            callers.add(leader.flights.async().run(k, LONG, UTF8, lease -> {
                works.incrementAndGet();
                started.countDown();
                return gate;
            }).toCompletableFuture());
        }
        assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
        for (Proc p : List.of(b, c)) {
            for (int i = 0; i < 5; i++) {
                callers.add(p.flights.async().run(k, LONG, UTF8, lease -> {
                    works.incrementAndGet();
                    return CompletableFuture.completedFuture("not the leader's");
                }).toCompletableFuture());
            }
        }
        assertThat(othersWaiting.await(60, TimeUnit.SECONDS)).as("both other processes wait").isTrue();
        gate.complete("computed once");
        for (CompletableFuture<String> caller : callers) {
            assertThat(caller.get(60, TimeUnit.SECONDS)).isEqualTo("computed once");
        }
        assertThat(works).as("15 callers in 3 processes: one computation").hasValue(1);
        assertThat(b.lookups.get() + c.lookups.get()).as("one look each before sleeping; woken by the notification, not a timer")
                .isEqualTo(2);
    }

    /** A flight computing in one process (until {@code gate} completes) and one caller of another process asleep, waiting for it. */
    private record Waiting(Proc waiter, CompletableFuture<String> gate, CompletableFuture<String> leaderCaller,
            CompletableFuture<String> waiterCaller) {}

    private Waiting aLeaderAndAnAsleepWaiter(String name) throws Exception {
        CountDownLatch asleep = new CountDownLatch(1);
        Proc leader = proc(null);
        Proc waiter = proc(asleep);
        String k = key(name);
        CompletableFuture<String> gate = new CompletableFuture<>();
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<String> first = leader.flights.async().run(k, LONG, UTF8, lease -> {
            started.countDown();
            return gate;
        }).toCompletableFuture();
        assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<String> second = waiter.flights.async().run(k, LONG, UTF8,
                lease -> CompletableFuture.completedFuture("computed again, fence " + lease.fence().value())).toCompletableFuture();
        assertThat(asleep.await(60, TimeUnit.SECONDS)).as("the waiter listens and sleeps (poll: a day; lease: a day)").isTrue();
        return new Waiting(waiter, gate, first, second);
    }

    @Test
    void aWaiterIsWokenByTheStoresNotificationNotByItsPoll() throws Exception {
        Waiting w = aLeaderAndAnAsleepWaiter("notified");

        w.gate().complete("published");

        assertThat(w.waiterCaller().get(60, TimeUnit.SECONDS)).isEqualTo("published");
        assertThat(w.leaderCaller().get(60, TimeUnit.SECONDS)).isEqualTo("published");
        assertThat(w.waiter().lookups).as("it slept once and was woken by the notification").hasValue(1);
    }

    @Test
    void aFailedFlightWakesTheWaitersOfOtherProcessesToTakeOver() throws Exception {
        Waiting w = aLeaderAndAnAsleepWaiter("failed");

        w.gate().completeExceptionally(new IllegalStateException("upstream down"));

        assertThat(w.waiterCaller().get(60, TimeUnit.SECONDS)).startsWith("computed again");
        assertThat(w.leaderCaller()).isCompletedExceptionally();
        assertThat(w.waiter().lookups).as("woken by the failed flight's wake, not a timer").hasValue(1);
    }

    @Test
    void waitersTakeOverWhenTheLeadersLeaseExpires() throws Exception {
        Proc dead = proc(null);
        Proc waiter = new Proc(null, store(), b -> b);
        String k = key("dead");
        CountDownLatch started = new CountDownLatch(1);
        dead.flights.async().run(k, Duration.ofSeconds(1), UTF8, lease -> {
            dead.link.pause(); // the process stops: no renewal, no release, no publish
            started.countDown();
            return new CompletableFuture<>();
        });
        assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
        String got = waiter.flights.run(k, Duration.ofSeconds(5), UTF8, lease -> "took over with fence " + lease.fence().value());
        assertThat(got).startsWith("took over with fence ");
        assertThat(waiter.lookups.get()).as("woken near the lease's expiry, not by its poll interval of a day").isBetween(1, 100);
        dead.link.resume();
    }

    @Test
    void aZombiesLatePublishIsRefusedAndItsCallersGetTheNewerResult() throws Exception {
        Proc zombie = proc(null);
        Proc successor = proc(null);
        String k = key("zombie");
        CompletableFuture<String> zombieWork = new CompletableFuture<>();
        CompletableFuture<Lease> zombieLease = new CompletableFuture<>();
        CompletableFuture<String> zombieCaller = zombie.flights.async().run(k, Duration.ofSeconds(1), UTF8, lease -> {
            zombie.link.pause(); // paused mid-flight: its renewals stop
            zombieLease.complete(lease);
            return zombieWork;
        }).toCompletableFuture();
        Lease old = zombieLease.get(60, TimeUnit.SECONDS);
        old.whenLost().toCompletableFuture().get(60, TimeUnit.SECONDS); // its lease has run out

        CompletableFuture<String> successorWork = new CompletableFuture<>();
        CountDownLatch successorStarted = new CountDownLatch(1);
        CompletableFuture<String> successorCaller = successor.flights.async().run(k, LONG, UTF8, lease -> {
            successorStarted.countDown();
            return successorWork;
        }).toCompletableFuture();
        assertThat(successorStarted.await(60, TimeUnit.SECONDS)).as("a newer flight began").isTrue();

        zombie.link.resume();
        zombieWork.complete("stale result"); // published with the old fence: refused
        successorWork.complete("fresh result");

        assertThat(successorCaller.get(60, TimeUnit.SECONDS)).isEqualTo("fresh result");
        assertThat(zombieCaller.get(60, TimeUnit.SECONDS)).as("the zombie's caller gets the newer flight's result").isEqualTo("fresh result");
        FlightResult stored = get(successor.store.read(LockKey.of(k), CALL)).orElseThrow();
        assertThat(stored.fence()).isGreaterThan(old.fence().value());
    }
}
