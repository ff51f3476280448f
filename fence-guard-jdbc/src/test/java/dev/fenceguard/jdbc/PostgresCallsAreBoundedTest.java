package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.BlockingBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Issue #17 item 1 on PostgreSQL: a lease whose renewal hangs is declared lost at its local deadline,
 * {@code withLock} returns within the release timeout, and no call is left blocked in the driver: a
 * row lock held by another connection is given up by the server (lock/statement timeout), a server that
 * stops answering has the hung call's connection aborted.
 */
class PostgresCallsAreBoundedTest {

    private static final Duration TTL = Duration.ofMillis(1500);
    private static final Duration RELEASE_TIMEOUT = Duration.ofMillis(500);
    /** The documented slack on loss reports and on the end of withLock. */
    private static final Duration SLACK = Duration.ofMillis(250);
    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("pgbounded");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Test
    void aLeaseWhoseRowAnotherConnectionHoldsIsLostByItsDeadlineAndTheServerGivesUpEveryCall() throws Exception {
        pg.lockTable("rowlock");
        TrackedExecutor calls = new TrackedExecutor();
        Connections connections = new Connections();
        PostgresLockBackend backend = new PostgresLockBackend(TableSettings.of(connections.recording(pg.ds)).withSchema(pg.schema.name())
                .withTable("rowlock").withExecutor(calls));
        Events events = new Events();
        LockClient client = client(backend, events);
        long[] deadline = new long[1];
        long[] workEnd = new long[1];
        try (Connection holder = pg.ds.getConnection()) {
            holder.setAutoCommit(false);
            try {
                Optional<String> result = client.withLock("orders:rowlock", TTL, Duration.ZERO, lease -> {
                    deadline[0] = System.nanoTime() + lease.remaining().toNanos();
                    lockRowForUpdate(holder, "rowlock", "orders:rowlock"); // never committed during the test
                    assertThat(events.lost.await(10, TimeUnit.SECONDS)).as("lease reported lost").isTrue();
                    assertThat(lease.isLost()).isTrue();
                    assertThat(lease.isValid()).isFalse();
                    workEnd[0] = System.nanoTime();
                    return "done";
                });
                long returned = System.nanoTime();

                assertThat(result).contains("done");
                assertThat(Duration.ofNanos(events.lostAt.get() - deadline[0])).as("loss reported after the local deadline by")
                        .isLessThanOrEqualTo(SLACK);
                assertThat(Duration.ofNanos(returned - workEnd[0])).as("withLock returned after the work by")
                        .isLessThanOrEqualTo(RELEASE_TIMEOUT.plus(SLACK));
                assertThat(events.lostCause).isInstanceOfSatisfying(FenceGuardException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
                // The row is still locked, yet every call has ended: the server gave up on its own
                // (lock_timeout), so no connection had to be aborted and no session waits for the row.
                assertThat(calls.awaitIdle(Duration.ofSeconds(3))).as("no call left running").isTrue();
                assertThat(connections.aborts).as("connections aborted").hasValue(0);
                assertThat(pg.one("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%"
                        + pg.schema.name() + "%'")).as("sessions waiting for the row").isEqualTo("0");
            } finally {
                holder.rollback();
            }
        }
    }

    @Test
    void aLeaseIsLostByItsDeadlineWhenTheServerStopsAnsweringAndTheHungCallIsAborted() throws Exception {
        pg.lockTable("silent");
        PGSimpleDataSource direct = (PGSimpleDataSource) pg.schema.dataSource();
        TrackedExecutor calls = new TrackedExecutor();
        Connections connections = new Connections();
        try (SilentProxy proxy = new SilentProxy(direct.getServerNames()[0], direct.getPortNumbers()[0])) {
            PGSimpleDataSource viaProxy = (PGSimpleDataSource) pg.schema.dataSource();
            viaProxy.setServerNames(new String[] {"127.0.0.1"});
            viaProxy.setPortNumbers(new int[] {proxy.port()});
            try (Connection physical = viaProxy.getConnection()) {
                // One connection, opened before the silence: a new one could not even log in.
                PostgresLockBackend backend = new PostgresLockBackend(TableSettings.of(connections.single(physical)).withSchema(pg.schema.name())
                        .withTable("silent").withExecutor(calls));
                Events events = new Events();
                LockClient client = client(backend, events);
                long[] deadline = new long[1];
                long[] workEnd = new long[1];

                Optional<String> result = client.withLock("orders:silent", TTL, Duration.ZERO, lease -> {
                    deadline[0] = System.nanoTime() + lease.remaining().toNanos();
                    proxy.goSilent();
                    assertThat(events.lost.await(10, TimeUnit.SECONDS)).as("lease reported lost").isTrue();
                    assertThat(lease.isLost()).isTrue();
                    workEnd[0] = System.nanoTime();
                    return "done";
                });
                long returned = System.nanoTime();

                assertThat(result).contains("done");
                assertThat(Duration.ofNanos(events.lostAt.get() - deadline[0])).as("loss reported after the local deadline by")
                        .isLessThanOrEqualTo(SLACK);
                assertThat(Duration.ofNanos(returned - workEnd[0])).as("withLock returned after the work by")
                        .isLessThanOrEqualTo(RELEASE_TIMEOUT.plus(SLACK));
                // Nothing can cancel a statement on a server that does not answer: the hung calls end
                // because their connection is aborted half a second after their deadline.
                assertThat(calls.awaitIdle(Duration.ofSeconds(5))).as("no call left blocked in a socket read").isTrue();
                assertThat(connections.aborts.get()).as("connections aborted").isPositive();
            }
        }
    }

    @Test
    void aCallBlockedOnARowLockFailsWithTimeoutAndTakesNothing() throws Exception {
        pg.lockTable("direct");
        TrackedExecutor calls = new TrackedExecutor();
        Connections connections = new Connections();
        PostgresLockBackend backend = new PostgresLockBackend(TableSettings.of(connections.recording(pg.ds)).withSchema(pg.schema.name())
                .withTable("direct").withExecutor(calls));
        LockKey key = LockKey.of("orders:direct");
        LockId first = LockId.random();
        BlockingBackend blocking = BlockingBackend.of(backend);
        blocking.tryAcquire(key, first, TTL).orElseThrow();
        blocking.release(key, first);
        Duration timeout = Duration.ofMillis(300);
        try (Connection holder = pg.ds.getConnection()) {
            holder.setAutoCommit(false);
            try {
                lockRowForUpdate(holder, "direct", key.value());
                long sent = System.nanoTime();
                CompletableFuture<?> call = backend.tryAcquire(key, LockId.random(), TTL, timeout).toCompletableFuture();
                long returnedAfter = System.nanoTime() - sent;
                Throwable failure = failureOf(call);
                long failedAfter = System.nanoTime() - sent;

                assertThat(Duration.ofNanos(returnedAfter)).as("the caller's thread never waits").isLessThan(timeout);
                assertThat(failure).isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
                    assertThat(e.key()).contains(key.value());
                });
                assertThat(Duration.ofNanos(failedAfter)).isLessThanOrEqualTo(timeout.plus(SLACK));
                assertThat(calls.awaitIdle(Duration.ofSeconds(3))).as("no call left running").isTrue();
                assertThat(connections.aborts).as("connections aborted").hasValue(0);
            } finally {
                holder.rollback();
            }
        }
        assertThat(pg.one("SELECT fence, lock_id FROM " + pg.q("direct"))).as("the timed-out acquire took nothing").isEqualTo("1|null");
    }

    @Test
    void aCallStillQueuedAtItsTimeoutTimesOutItsCallerAndIsNeverSent() throws Exception {
        pg.lockTable("queued");
        HeldExecutor held = new HeldExecutor();
        PostgresLockBackend backend = new PostgresLockBackend(TableSettings.of(pg.ds).withSchema(pg.schema.name()).withTable("queued")
                .withExecutor(held));
        Duration timeout = Duration.ofMillis(100);
        LockClient client = LockClient.builder(backend).withMetrics(LockMetrics.none()).withCallTimeout(timeout).build();

        // Sent first, so its deadline passes before the client's call below gives up.
        CompletableFuture<?> direct = backend.tryAcquire(LockKey.of("orders:queued"), LockId.random(), TTL, timeout)
                .toCompletableFuture();
        assertThatThrownBy(() -> client.tryAcquire("orders:queued", TTL)).as("the client gives up at its timeout")
                .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
        long gaveUp = System.nanoTime();
        assertThat(direct).as("the backend starts no timer of its own").isNotDone();
        // The backend's call took its deadline a few microseconds after the client armed its own, and the client's
        // timer can fire within those microseconds (this test once saw the call sent): wait out one more timeout
        // on the clock, after which both deadlines have passed for certain. No thread is ordered by this wait.
        while (System.nanoTime() - gaveUp < timeout.toNanos()) {
            LockSupport.parkNanos(timeout.toNanos());
        }

        held.runAll(); // the executor frees up only now, past both deadlines
        assertThat(failureOf(direct)).as("the backend's answer").isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
            assertThat(e.getMessage()).contains("could not be sent");
        });
        assertThat(pg.one("SELECT count(*) FROM " + pg.q("queued"))).as("rows written").isEqualTo("0");
    }

    @Test
    void aCallTheExecutorRejectsFailsAsUnavailable() {
        pg.lockTable("rejected");
        PostgresLockBackend backend = new PostgresLockBackend(TableSettings.of(pg.ds).withSchema(pg.schema.name()).withTable("rejected")
                .withExecutor(task -> {
                    throw new RejectedExecutionException("full");
                }));

        CompletableFuture<?> call = backend.tryAcquire(LockKey.of("orders:rejected"), LockId.random(), TTL, Duration.ofSeconds(5))
                .toCompletableFuture();

        assertThat(call).isCompletedExceptionally();
        assertThat(failureOf(call)).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(e.getMessage()).contains("executor");
        });
        assertThat(pg.one("SELECT count(*) FROM " + pg.q("rejected"))).isEqualTo("0");
    }

    @Test
    void byDefaultEachCallRunsOnAVirtualThreadOfItsOwn() throws Exception {
        pg.lockTable("default_executor");
        List<Thread> threads = new CopyOnWriteArrayList<>();
        DataSource watched = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    threads.add(Thread.currentThread());
                    return method.invoke(pg.ds, args);
                });
        BlockingBackend backend = BlockingBackend.of(new PostgresLockBackend(TableSettings.of(watched).withSchema(pg.schema.name())
                .withTable("default_executor")));

        backend.lookup(LockKey.of("k"));
        backend.lookup(LockKey.of("k"));

        assertThat(threads).hasSize(2).allSatisfy(t -> {
            assertThat(t.isVirtual()).isTrue();
            assertThat(t.getName()).startsWith("fence-guard-jdbc-");
            assertThat(t).isNotSameAs(Thread.currentThread());
        });
        assertThat(threads.get(0)).isNotSameAs(threads.get(1));
    }

    // Issue #31: a blocking face lends its platform thread to the call it waits for (CallerThread), so the
    // default executor's virtual thread per call is skipped there; these pin down where calls run and that
    // the lent thread is bounded as the executor's would be.

    @Test
    void theBlockingClientRunsEachCallOnTheCallersOwnPlatformThread() throws Exception {
        pg.lockTable("lent");
        List<Thread> threads = new CopyOnWriteArrayList<>();
        LockClient client = LockClient.builder(new PostgresLockBackend(TableSettings.of(watching(pg.ds, threads))
                .withSchema(pg.schema.name()).withTable("lent"))).withMetrics(LockMetrics.none()).build();
        Thread self = Thread.currentThread();

        Lease lease = client.tryAcquire("orders:lent", TTL).orElseThrow();
        assertThat(client.extend(lease, TTL)).isTrue();
        assertThat(client.lookup("orders:lent")).map(info -> info.fence()).contains(lease.fence());
        assertThat(client.release(lease)).isTrue();
        Optional<String> ran = client.withLock("orders:lent", TTL, Duration.ofSeconds(5), l -> "ran");
        try (Lease closed = client.acquire("orders:lent", TTL, Duration.ofSeconds(5)).orElseThrow()) {
            assertThat(closed.isValid()).isTrue();
        }

        assertThat(ran).contains("ran");
        // tryAcquire, extend, lookup, release; withLock's acquire and release; acquire and close.
        assertThat(threads).as("threads that took a connection").hasSize(8).allSatisfy(t -> assertThat(t).isSameAs(self));
        assertThat(self.isInterrupted()).isFalse();
        assertThat(client.lookup("orders:lent")).as("nothing left locked").isEmpty();
    }

    @Test
    void callersOnVirtualThreadsAndTheAsynchronousFaceStillGetAVirtualThreadPerCall() throws Exception {
        pg.lockTable("not_lent");
        List<Thread> threads = new CopyOnWriteArrayList<>();
        LockClient client = LockClient.builder(new PostgresLockBackend(TableSettings.of(watching(pg.ds, threads))
                .withSchema(pg.schema.name()).withTable("not_lent"))).withMetrics(LockMetrics.none()).build();

        // A virtual thread's blocking socket read ends at an interrupt: it is never lent.
        Thread caller = Thread.ofVirtual().start(() -> client.release(client.tryAcquire("orders:virtual", TTL).orElseThrow()));
        caller.join();
        Lease lease = client.async().tryAcquire("orders:async", TTL).toCompletableFuture().get(10, TimeUnit.SECONDS).orElseThrow();
        client.async().release(lease).toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(threads).as("threads that took a connection").hasSize(4).allSatisfy(t -> {
            assertThat(t.isVirtual()).isTrue();
            assertThat(t.getName()).startsWith("fence-guard-jdbc-");
            assertThat(t).isNotSameAs(caller).isNotSameAs(Thread.currentThread());
        });
        assertThat(threads).doesNotHaveDuplicates();
    }

    @Test
    void anInterruptedCallerIsNotLentAndKeepsItsInterrupt() throws Exception {
        pg.lockTable("interrupted");
        List<Thread> threads = new CopyOnWriteArrayList<>();
        LockClient client = LockClient.builder(new PostgresLockBackend(TableSettings.of(watching(pg.ds, threads))
                .withSchema(pg.schema.name()).withTable("interrupted"))).withMetrics(LockMetrics.none()).build();

        Thread.currentThread().interrupt();
        Optional<Lease> lease;
        boolean stillInterrupted;
        try {
            lease = client.tryAcquire("orders:interrupted", TTL);
        } finally {
            stillInterrupted = Thread.interrupted(); // and cleared, for the rest of the test
        }

        assertThat(lease).as("an interrupt does not end tryAcquire").isPresent();
        assertThat(stillInterrupted).as("the caller's interrupt status, kept").isTrue();
        assertThat(threads).singleElement().satisfies(t -> assertThat(t.isVirtual()).isTrue());
        assertThat(client.release(lease.get())).isTrue();
    }

    @Test
    void aLentCallWaitingForAFullPoolTimesOutAtItsDeadlineSendsNothingAndLeavesNoInterrupt() throws Exception {
        pg.lockTable("full_pool");
        HikariConfig config = new HikariConfig();
        config.setDataSource(pg.ds);
        config.setMaximumPoolSize(1);
        config.setConnectionTimeout(30_000); // the pool alone would keep the caller 30 s
        Duration timeout = Duration.ofMillis(300);
        List<Thread> threads = new CopyOnWriteArrayList<>();
        try (HikariDataSource pool = new HikariDataSource(config)) {
            LockClient client = LockClient.builder(new PostgresLockBackend(TableSettings.of(watching(pool, threads))
                    .withSchema(pg.schema.name()).withTable("full_pool"))).withMetrics(LockMetrics.none()).withCallTimeout(timeout).build();
            long started;
            long failedAfter;
            try (Connection taken = pool.getConnection()) { // the pool's one connection, held by someone else
                started = System.nanoTime();
                assertThatThrownBy(() -> client.tryAcquire("orders:full", TTL)).as("tryAcquire with the pool taken")
                        .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
                failedAfter = System.nanoTime() - started;
                assertThat(Thread.currentThread().isInterrupted()).as("the deadline's interrupt, cleared").isFalse();
                assertThat(threads).as("who waited for the pool").singleElement().isSameAs(Thread.currentThread());
            }
            assertThat(Duration.ofNanos(failedAfter)).as("ended by the call's timeout, not the pool's 30 s")
                    .isLessThan(Duration.ofSeconds(10));
            assertThat(pg.one("SELECT count(*) FROM " + pg.q("full_pool"))).as("rows written").isEqualTo("0");
            Lease lease = client.tryAcquire("orders:full", TTL).orElseThrow(); // the pool is free again: the key too
            assertThat(lease.fence().value()).isEqualTo(1);
            assertThat(client.release(lease)).isTrue();
        }
    }

    @Test
    void theCallersOwnInterruptDoesNotEndALentCallsWaitForAConnection() throws Exception {
        pg.lockTable("interrupt_in_pool");
        CountDownLatch waiting = new CountDownLatch(1);
        AtomicInteger asked = new AtomicInteger();
        DataSource pool = firstRequestWaitsUntilInterrupted(waiting, asked);
        LockClient client = LockClient.builder(new PostgresLockBackend(TableSettings.of(pool).withSchema(pg.schema.name())
                .withTable("interrupt_in_pool"))).withMetrics(LockMetrics.none()).build();
        CompletableFuture<Optional<Lease>> acquired = new CompletableFuture<>();
        CompletableFuture<Boolean> interruptedAfter = new CompletableFuture<>();
        Thread caller = Thread.ofPlatform().start(() -> {
            try {
                acquired.complete(client.tryAcquire("orders:interrupt", TTL));
            } catch (RuntimeException e) {
                acquired.completeExceptionally(e);
            } finally {
                interruptedAfter.complete(Thread.interrupted());
            }
        });
        assertThat(waiting.await(10, TimeUnit.SECONDS)).as("the caller waits for a connection").isTrue();
        caller.interrupt();
        caller.join();

        assertThat(acquired.get()).as("the call went on with the next connection").isPresent();
        assertThat(interruptedAfter.get()).as("the caller's interrupt, set again when the call is done").isTrue();
        assertThat(asked).hasValue(2);
        assertThat(client.release(acquired.get().orElseThrow())).isTrue();
    }

    @Test
    void aLentCallOnAServerThatStopsAnsweringIsAbortedAndFreesItsCaller() throws Exception {
        pg.lockTable("lent_silent");
        PGSimpleDataSource direct = (PGSimpleDataSource) pg.schema.dataSource();
        Connections connections = new Connections();
        Duration timeout = Duration.ofMillis(300);
        try (SilentProxy proxy = new SilentProxy(direct.getServerNames()[0], direct.getPortNumbers()[0])) {
            PGSimpleDataSource viaProxy = (PGSimpleDataSource) pg.schema.dataSource();
            viaProxy.setServerNames(new String[] {"127.0.0.1"});
            viaProxy.setPortNumbers(new int[] {proxy.port()});
            try (Connection physical = viaProxy.getConnection()) {
                LockClient client = LockClient.builder(new PostgresLockBackend(TableSettings.of(connections.single(physical))
                        .withSchema(pg.schema.name()).withTable("lent_silent"))).withMetrics(LockMetrics.none())
                        .withCallTimeout(timeout).build();
                assertThat(client.lookup("orders:silent")).as("answers before the silence").isEmpty();
                proxy.goSilent();
                long started = System.nanoTime();

                assertThatThrownBy(() -> client.tryAcquire("orders:silent", TTL)).as("tryAcquire on a silent server")
                        .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
                long failedAfter = System.nanoTime() - started;

                // Nothing can cancel a statement on a server that does not answer: the lent thread is freed by the
                // abort of its connection, ABORT_GRACE after the deadline, as an executor's thread would be.
                assertThat(connections.aborts.get()).as("connections aborted").isPositive();
                assertThat(Duration.ofNanos(failedAfter)).as("the caller's thread was held for")
                        .isGreaterThanOrEqualTo(timeout.plus(BoundedJdbc.ABORT_GRACE)).isLessThan(timeout.plus(BoundedJdbc.ABORT_GRACE).plusSeconds(5));
                assertThat(Thread.currentThread().isInterrupted()).isFalse();
            }
        }
    }

    @Test
    void acquireLendsItsThreadToTheFirstAttemptOnlyItsRetriesRunOnTheExecutor() throws Exception {
        pg.lockTable("lent_retry");
        List<Thread> threads = new CopyOnWriteArrayList<>();
        LockClient client = LockClient.builder(new PostgresLockBackend(TableSettings.of(watching(pg.ds, threads))
                .withSchema(pg.schema.name()).withTable("lent_retry"))).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(50)).build();
        // A blocker that the server lets expire: the acquire below is refused until then, and retries meanwhile.
        Lease blocker = client.async().tryAcquire("orders:retry", Duration.ofMillis(400)).toCompletableFuture()
                .get(10, TimeUnit.SECONDS).orElseThrow();
        threads.clear();

        Lease lease = client.acquire("orders:retry", TTL, Duration.ofSeconds(30)).orElseThrow();

        assertThat(lease.fence().value()).isGreaterThan(blocker.fence().value());
        assertThat(threads.size()).as("attempts: refused at least once, then granted").isGreaterThanOrEqualTo(2);
        assertThat(threads.getFirst()).as("the first attempt").isSameAs(Thread.currentThread());
        assertThat(threads.subList(1, threads.size())).as("the retries, sent from the timer").allSatisfy(t -> {
            assertThat(t.isVirtual()).isTrue();
            assertThat(t.getName()).startsWith("fence-guard-jdbc-");
        });
        assertThat(client.release(lease)).isTrue();
    }

    @Test
    void anInterruptDuringAcquiresLentFirstAttemptReleasesTheGrantAndIsThrown() throws Exception {
        pg.lockTable("interrupt_acquire");
        CountDownLatch waiting = new CountDownLatch(1);
        AtomicInteger asked = new AtomicInteger();
        // The lent call waits on after the interrupt, gets the next connection and takes the lock; then the
        // interrupt is honoured.
        DataSource pool = firstRequestWaitsUntilInterrupted(waiting, asked);
        LockClient client = LockClient.builder(new PostgresLockBackend(TableSettings.of(pool).withSchema(pg.schema.name())
                .withTable("interrupt_acquire"))).withMetrics(LockMetrics.none()).build();
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        Thread caller = Thread.ofPlatform().start(() -> {
            try {
                outcome.complete(client.acquire("orders:interrupt", TTL, Duration.ofSeconds(5)));
            } catch (InterruptedException e) {
                outcome.complete(e);
            } catch (RuntimeException e) {
                outcome.completeExceptionally(e);
            }
        });
        assertThat(waiting.await(10, TimeUnit.SECONDS)).as("the first attempt waits for a connection").isTrue();
        caller.interrupt();
        caller.join();

        assertThat(outcome.get()).as("acquire's answer").isInstanceOf(InterruptedException.class);
        assertThat(asked.get()).as("connections asked for: the attempt, then the release of its grant").isEqualTo(3);
        assertThat(pg.one("SELECT fence || '|' || coalesce(lock_id, 'free') FROM " + pg.q("interrupt_acquire")
                + " WHERE lock_key = 'orders:interrupt'")).as("granted once, and released before acquire threw").isEqualTo("1|free");
    }

    /**
     * The test database behind a pool whose first request for a connection waits until its thread is
     * interrupted, then throws as HikariCP does (the interrupt status set again, an SQLException); every later
     * request gets a connection. {@code waiting} is counted down when the first request waits.
     */
    private static DataSource firstRequestWaitsUntilInterrupted(CountDownLatch waiting, AtomicInteger asked) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection") && asked.getAndIncrement() == 0) {
                        waiting.countDown();
                        try {
                            new CountDownLatch(1).await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new SQLException("Interrupted during connection acquisition", "08001", e);
                        }
                    }
                    return method.invoke(pg.ds, args);
                });
    }

    /** {@code inner}, recording the thread of every {@code getConnection}. */
    private static DataSource watching(DataSource inner, List<Thread> threads) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        threads.add(Thread.currentThread());
                    }
                    try {
                        return method.invoke(inner, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    // --- helpers ---

    private static LockClient client(PostgresLockBackend backend, Events events) {
        return LockClient.builder(backend).withMetrics(LockMetrics.none()).onEvents(events).withReleaseTimeout(RELEASE_TIMEOUT).build();
    }

    private static void lockRowForUpdate(Connection holder, String table, String key) throws SQLException {
        try (PreparedStatement ps = holder.prepareStatement("SELECT fence FROM " + pg.q(table) + " WHERE lock_key = ? FOR UPDATE")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("the lock row exists").isTrue();
            }
        }
    }

    /** The exception {@code call} fails with; a generous guard, since the call bounds itself. */
    private static Throwable failureOf(CompletableFuture<?> call) {
        try {
            call.get(10, TimeUnit.SECONDS);
            throw new AssertionError("the call succeeded");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the call did not end within 10 s", e);
        }
    }

    /** Counts loss reports and when the first came. */
    private static final class Events implements LockListener {
        final CountDownLatch lost = new CountDownLatch(1);
        final AtomicLong lostAt = new AtomicLong();
        final List<Throwable> renewFailures = new CopyOnWriteArrayList<>();
        volatile Throwable lostCause;

        @Override
        public void onRenewFailed(Lease lease, Throwable error) {
            renewFailures.add(error);
        }

        @Override
        public void onLeaseLost(Lease lease, Throwable cause) {
            lostAt.compareAndSet(0, System.nanoTime());
            lostCause = cause;
            lost.countDown();
        }
    }

    /** A virtual thread per call, counting the calls still running. */
    static final class TrackedExecutor implements Executor {
        private int running;

        @Override
        public void execute(Runnable task) {
            synchronized (this) {
                running++;
            }
            Thread.ofVirtual().name("fg-pg-test-call").start(() -> {
                try {
                    task.run();
                } finally {
                    synchronized (this) {
                        running--;
                        notifyAll();
                    }
                }
            });
        }

        /** Waits until no call runs; false if some still runs after {@code guard}. */
        synchronized boolean awaitIdle(Duration guard) throws InterruptedException {
            long deadline = System.nanoTime() + guard.toNanos();
            while (running > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }
    }

    /** An executor that runs nothing until told: a saturated pool. */
    private static final class HeldExecutor implements Executor {
        private final Queue<Runnable> queue = new ArrayDeque<>();

        @Override
        public synchronized void execute(Runnable task) {
            queue.add(task);
        }

        void runAll() {
            while (true) {
                Runnable next;
                synchronized (this) {
                    next = queue.poll();
                }
                if (next == null) {
                    return;
                }
                next.run();
            }
        }
    }

    /** Data sources whose connections count {@link Connection#abort} calls. */
    private static final class Connections {
        final AtomicInteger aborts = new AtomicInteger();

        DataSource recording(DataSource inner) {
            return dataSource(() -> wrap(inner.getConnection(), false));
        }

        /** Hands out {@code physical} again and again; closing a handle leaves it open. */
        DataSource single(Connection physical) {
            return dataSource(() -> wrap(physical, true));
        }

        private interface Source {
            Connection get() throws SQLException;
        }

        private static DataSource dataSource(Source source) {
            return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("getConnection") && (args == null || args.length == 0)) {
                            return source.get();
                        }
                        throw new UnsupportedOperationException(method.getName());
                    });
        }

        private Connection wrap(Connection c, boolean keepOpen) {
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("abort")) {
                            aborts.incrementAndGet();
                        } else if (keepOpen && method.getName().equals("close")) {
                            return null;
                        }
                        try {
                            return method.invoke(c, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }
}
