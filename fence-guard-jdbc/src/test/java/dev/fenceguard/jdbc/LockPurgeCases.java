package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.CountingConnections;
import dev.fenceguard.jdbc.testing.HeldCommits;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * {@link FenceGuardJdbc#purgeLocks} on one database (docs/fence-lifecycle.md, "Lock records"): what it
 * removes, the fold of {@code DENSE} fences into the floor, and the races with acquisitions, ordered by
 * transactions held open at their commit (never by sleeping).
 */
abstract class LockPurgeCases {

    static final Duration TTL = Duration.ofSeconds(30);
    static final Duration LONG = Duration.ofSeconds(10);

    /** The pool to the test's own schema (database). */
    abstract DataSource ds();

    abstract String schema();

    abstract void exec(String sql) throws Exception;

    abstract List<String> rows(String sql);

    /** The lock table's key column as text, for the assertions. */
    abstract String keyText();

    /** The clock floor of the server's clock now, in the fences' ticks. */
    abstract long serverTick();

    /** SQL for "the server's clock plus {@code seconds}" in the lock table's expiry column. */
    abstract String clockPlusSeconds(int seconds);

    /** Whether some session of the server is waiting for a row lock now. */
    abstract boolean someoneWaitsForALock();

    abstract String storeName();

    /**
     * Whether every DENSE acquisition reads the floor with a locking read (MariaDB, MySQL), rather than only one
     * that finds no row (PostgreSQL).
     */
    abstract boolean denseAcquisitionsHoldTheFloor();

    /** The backend's class on this database. */
    abstract Class<?> backendType();

    private static final AtomicInteger TABLES = new AtomicInteger();

    /** A freshly migrated lock table. */
    String newTable(String prefix) {
        String table = prefix + "_" + TABLES.incrementAndGet();
        FenceGuardMigrations.builder(ds()).withSchema(schema()).withTable(table).migrate();
        return table;
    }

    final Recording metrics = new Recording();

    /** The lock backend and the purge of one table: an entry's, or for MySQL the MySQL backend's own. */
    interface Locks extends AutoCloseable {
        LockBackend lockBackend();

        PurgeResult purgeLocks(Purge purge);

        @Override
        default void close() {}
    }

    Locks entry(DataSource ds, String table, FenceStrategy strategy, Duration margin) {
        FenceGuardJdbc jdbc = FenceGuardJdbc.builder(ds).withSchema(schema()).withLockTable(table).withFenceStrategy(strategy)
                .withClockMargin(margin).withMetrics(metrics).build();
        assertThat(jdbc.lockBackend()).isInstanceOf(backendType());
        return new Locks() {
            @Override
            public LockBackend lockBackend() {
                return jdbc.lockBackend();
            }

            @Override
            public PurgeResult purgeLocks(Purge purge) {
                return jdbc.purgeLocks(purge);
            }

            @Override
            public void close() {
                jdbc.close();
            }
        };
    }

    String q(String table) {
        return schema() + "." + table;
    }

    List<String> keysAndFences(String table) {
        return rows("SELECT " + keyText() + ", fence FROM " + q(table) + " ORDER BY lock_key");
    }

    long floor(String table) {
        return Long.parseLong(rows("SELECT fence_floor FROM " + q(FloorTable.NAME) + " WHERE lock_table = '" + table + "'").getFirst());
    }

    static Grant acquire(LockBackend backend, String key) {
        return backend.tryAcquire(LockKey.of(key), LockId.random(), TTL, LONG).toCompletableFuture().join().orElseThrow();
    }

    static long acquireAndRelease(LockBackend backend, String key) {
        LockId id = LockId.random();
        Grant g = backend.tryAcquire(LockKey.of(key), id, TTL, LONG).toCompletableFuture().join().orElseThrow();
        assertThat(backend.release(LockKey.of(key), id, LONG).toCompletableFuture().join()).isTrue();
        return g.fence();
    }

    /** Waits, without a timer, until the server shows a session waiting for a row lock. */
    void untilSomeoneWaitsForALock(CompletableFuture<?> waiter) {
        while (!someoneWaitsForALock()) {
            assertThat(waiter).as("the call should wait for the lock, not finish").isNotDone();
            Thread.onSpinWait();
        }
    }

    // --- what is removed --------------------------------------------------------------------------------------

    @Test
    void clockFlooredPurgeRemovesFreeRowsBelowTheMarginAndNothingElse() throws Exception {
        String t = newTable("cf_rule");
        long margin = Duration.ofMinutes(1).toNanos() / 1_000 / 10; // in ticks
        long now = serverTick();
        long old = now - 2 * margin;
        long recent = now - margin / 2;
        exec("INSERT INTO " + q(t) + " (lock_key, fence, lock_id, expires_at) VALUES "
                + "('free-old', " + old + ", NULL, NULL), "
                + "('expired-old', " + old + ", 'aaaaaaaaaaaaaaaaaaaaaa', " + clockPlusSeconds(-1) + "), "
                + "('held-old', " + old + ", 'bbbbbbbbbbbbbbbbbbbbbb', " + clockPlusSeconds(3600) + "), "
                + "('free-recent', " + recent + ", NULL, NULL), "
                + "('expired-recent', " + recent + ", 'cccccccccccccccccccccc', " + clockPlusSeconds(-1) + ")");
        try (Locks jdbc = entry(ds(), t, FenceStrategy.CLOCK_FLOORED, Duration.ofMinutes(1))) {
            PurgeResult r = jdbc.purgeLocks(Purge.ofDefaults());

            assertThat(r).isEqualTo(new PurgeResult(2, 1, true, Optional.empty()));
            assertThat(keysAndFences(t)).containsExactly("expired-recent|" + recent, "free-recent|" + recent, "held-old|" + old);
            assertThat(metrics.seen).containsExactly(storeName() + "|lock|2");
            assertThat(floor(t)).as("raised to the highest fence removed").isEqualTo(old);
            // A removed key starts again at the floor of the clock: above every fence it issued.
            assertThat(acquire(jdbc.lockBackend(), "free-old").fence()).isGreaterThan(old);
        }
    }

    @Test
    void denseFoldRemovesEveryFreeRowAndNewRowsStartAboveTheHighestFenceRemoved() throws Exception {
        String t = newTable("dense_fold");
        try (Locks jdbc = entry(ds(), t, FenceStrategy.DENSE, Duration.ofMinutes(5))) {
            LockBackend locks = jdbc.lockBackend();
            for (int i = 0; i < 3; i++) {
                acquireAndRelease(locks, "a");
            }
            for (int i = 0; i < 5; i++) {
                acquireAndRelease(locks, "b");
            }
            long held = acquire(locks, "c").fence();
            assertThat(held).isEqualTo(1);
            exec("INSERT INTO " + q(t) + " (lock_key, fence, lock_id, expires_at) VALUES "
                    + "('expired', 4, 'aaaaaaaaaaaaaaaaaaaaaa', " + clockPlusSeconds(-1) + ")");

            assertThat(jdbc.purgeLocks(Purge.ofDefaults())).isEqualTo(new PurgeResult(3, 1, true, Optional.empty()));

            assertThat(keysAndFences(t)).containsExactly("c|1");
            assertThat(floor(t)).isEqualTo(5);
            assertThat(acquireAndRelease(locks, "a")).as("a purged key starts above the floor").isEqualTo(6);
            assertThat(acquireAndRelease(locks, "new")).as("so does a new one").isEqualTo(6);
            assertThat(acquireAndRelease(locks, "a")).isEqualTo(7);
            assertThat(locks.lookup(LockKey.of("c"), LONG).toCompletableFuture().join()).as("the held lock is untouched")
                    .hasValueSatisfying(info -> assertThat(info.fence().value()).isEqualTo(1));

            // The floor never goes down: a later batch removing lower fences keeps it.
            assertThat(jdbc.purgeLocks(Purge.ofDefaults()).removed()).as("a and new").isEqualTo(2);
            assertThat(floor(t)).isEqualTo(7);
        }
    }

    @Test
    void batchesGoInKeyOrderAndAPurgeStoppedAtItsTimeBoundResumesFromItsCursor() throws Exception {
        String t = newTable("batches");
        StringBuilder values = new StringBuilder();
        for (int i = 0; i < 25; i++) {
            values.append(i == 0 ? "" : ", ").append("('k").append(String.format("%02d", i)).append("', ").append(i + 1).append(", NULL, NULL)");
        }
        exec("INSERT INTO " + q(t) + " (lock_key, fence, lock_id, expires_at) VALUES " + values);
        try (Locks jdbc = entry(ds(), t, FenceStrategy.DENSE, Duration.ofMinutes(5))) {
            // A time bound already past when the first batch ends: one batch, then the cursor.
            PurgeResult first = jdbc.purgeLocks(Purge.ofDefaults().withBatchSize(10).withMaxDuration(Duration.ofNanos(1)));
            assertThat(first).isEqualTo(new PurgeResult(10, 1, false, Optional.of("k09")));
            assertThat(keysAndFences(t)).hasSize(15).first().isEqualTo("k10|11");
            assertThat(floor(t)).isEqualTo(10);

            PurgeResult rest = jdbc.purgeLocks(Purge.ofDefaults().withBatchSize(10).withStartAfter(first.resumeAfter().orElseThrow()));
            assertThat(rest).isEqualTo(new PurgeResult(15, 2, true, Optional.empty()));
            assertThat(keysAndFences(t)).isEmpty();
            assertThat(floor(t)).isEqualTo(25);
            assertThat(metrics.seen).containsExactly(storeName() + "|lock|10", storeName() + "|lock|10", storeName() + "|lock|5");
        }
    }

    @Test
    void aPurgeWithoutTheFloorRowRemovesNothingAndSaysWhichRowIsMissing() throws Exception {
        String t = newTable("no_floor");
        exec("INSERT INTO " + q(t) + " (lock_key, fence, lock_id, expires_at) VALUES ('k', 3, NULL, NULL)");
        exec("DELETE FROM " + q(FloorTable.NAME) + " WHERE lock_table = '" + t + "'");
        try (Locks jdbc = entry(ds(), t, FenceStrategy.DENSE, Duration.ofMinutes(5))) {
            assertThatThrownBy(() -> jdbc.purgeLocks(Purge.ofDefaults()))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                    .hasMessageContaining("'" + t + "'").hasMessageContaining("fence_guard_lock_floors")
                    .hasMessageContaining("nothing was removed");
            assertThat(keysAndFences(t)).containsExactly("k|3");
            // Without the row (and no purge ever ran), new keys start at 1 as before the migration.
            assertThat(acquireAndRelease(jdbc.lockBackend(), "fresh")).isEqualTo(1);
        }
    }

    @Test
    void badInputIsRefusedBeforeAnyConnectionIsAsked() throws Exception {
        String t = newTable("bad_input");
        AtomicInteger connections = new AtomicInteger();
        try (Locks jdbc = entry(CountingConnections.of(ds(), connections), t, FenceStrategy.DENSE, Duration.ofMinutes(5))) {
            int afterBuild = connections.get();
            // Tried: no purge, a start key that is not a lock key (a number, the empty string).
            assertThatThrownBy(() -> jdbc.purgeLocks(null)).isInstanceOf(NullPointerException.class).hasMessage("purge");
            assertThatThrownBy(() -> jdbc.purgeLocks(Purge.ofDefaults().withStartAfter(42L)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a non-empty String").hasMessageContaining("java.lang.Long");
            assertThatThrownBy(() -> jdbc.purgeLocks(Purge.ofDefaults().withStartAfter("")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a non-empty String");
            assertThat(connections.get()).isEqualTo(afterBuild);
        }
        // Tried: a clock margin that is negative, over a day, or null: the builder refuses it, with core Horizon's words.
        assertThatThrownBy(() -> FenceGuardJdbc.builder(ds()).withClockMargin(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("clockMargin must be between 0 and 1 day, was PT-1S");
        assertThatThrownBy(() -> FenceGuardJdbc.builder(ds()).withClockMargin(Duration.ofDays(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("clockMargin must be between 0 and 1 day, was PT48H");
        assertThatThrownBy(() -> FenceGuardJdbc.builder(ds()).withClockMargin(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> FenceGuardJdbc.builder(ds()).withMetrics(null)).isInstanceOf(NullPointerException.class);
    }

    // --- races ------------------------------------------------------------------------------------------------

    /** An acquisition holds the row (done, not committed) when the purge runs: the purge leaves it. */
    void acquisitionHoldingTheRowIsLeft(FenceStrategy strategy) throws Exception {
        String t = newTable("race_hold");
        try (Locks plain = entry(ds(), t, strategy, Duration.ZERO)) {
            long before = acquireAndRelease(plain.lockBackend(), "k");
            makePurgeable(t, "k", strategy);
            long purgeable = fenceOf(t, "k");
            HeldCommits held = new HeldCommits(ds(), true);
            try (Locks acquiring = entry(held.dataSource(), t, strategy, Duration.ZERO)) {
                CompletableFuture<Optional<Grant>> grant = acquiring.lockBackend()
                        .tryAcquire(LockKey.of("k"), LockId.random(), TTL, LONG).toCompletableFuture();
                assertThat(held.atCommit.await(10, TimeUnit.SECONDS)).isTrue();

                CompletableFuture<PurgeResult> purge = CompletableFuture.supplyAsync(() -> plain.purgeLocks(Purge.ofDefaults()));
                if (strategy == FenceStrategy.DENSE && denseAcquisitionsHoldTheFloor()) {
                    // The acquisition holds the floor FOR SHARE until it commits: the purge waits, then finds the row held.
                    untilSomeoneWaitsForALock(purge);
                } else {
                    assertThat(purge.join().removed()).as("the row being taken is skipped").isZero();
                }
                held.release();
                assertThat(purge.join().removed()).isZero();
                long fence = grant.join().orElseThrow().fence();
                assertThat(fence).isGreaterThan(purgeable).isGreaterThan(before);
                assertThat(keysAndFences(t)).containsExactly("k|" + fence);
            } finally {
                held.release();
            }
        }
    }

    /** A purge removed the row (not committed yet) when an acquisition of it comes: it waits, then starts above. */
    void acquisitionWaitingOnAPurgedRowStartsAboveIt(FenceStrategy strategy, String waitingKey) throws Exception {
        String t = newTable("race_wait");
        try (Locks plain = entry(ds(), t, strategy, Duration.ZERO)) {
            for (int i = 0; i < 4; i++) {
                acquireAndRelease(plain.lockBackend(), "k");
            }
            makePurgeable(t, "k", strategy);
            long purged = fenceOf(t, "k");
            HeldCommits held = new HeldCommits(ds(), false);
            try (Locks purging = entry(held.dataSource(), t, strategy, Duration.ZERO)) {
                CompletableFuture<PurgeResult> purge = CompletableFuture.supplyAsync(() -> purging.purgeLocks(Purge.ofDefaults()));
                assertThat(held.atCommit.await(10, TimeUnit.SECONDS)).isTrue();
                CompletableFuture<Optional<Grant>> grant = plain.lockBackend()
                        .tryAcquire(LockKey.of(waitingKey), LockId.random(), TTL, LONG).toCompletableFuture();
                untilSomeoneWaitsForALock(grant);

                held.release();

                assertThat(purge.join().removed()).isEqualTo(1);
                long fence = grant.join().orElseThrow().fence();
                assertThat(fence).as("above the fence the purge removed").isGreaterThan(purged);
                if (strategy == FenceStrategy.DENSE) {
                    assertThat(fence).as("the floor's next value").isEqualTo(purged + 1);
                }
            } finally {
                held.release();
            }
        }
    }

    /** DENSE: an acquisition of a key with no row holds the floor (not committed): the purge waits for it. */
    @Test
    void aPurgeWaitsForAnAcquisitionThatReadTheFloor() throws Exception {
        String t = newTable("race_floor");
        try (Locks plain = entry(ds(), t, FenceStrategy.DENSE, Duration.ZERO)) {
            acquireAndRelease(plain.lockBackend(), "old");
            acquireAndRelease(plain.lockBackend(), "old");
            HeldCommits held = new HeldCommits(ds(), true);
            try (Locks acquiring = entry(held.dataSource(), t, FenceStrategy.DENSE, Duration.ZERO)) {
                CompletableFuture<Optional<Grant>> grant = acquiring.lockBackend()
                        .tryAcquire(LockKey.of("new"), LockId.random(), TTL, LONG).toCompletableFuture();
                assertThat(held.atCommit.await(10, TimeUnit.SECONDS)).isTrue();
                CompletableFuture<PurgeResult> purge = CompletableFuture.supplyAsync(() -> plain.purgeLocks(Purge.ofDefaults()));
                untilSomeoneWaitsForALock(purge);

                held.release();

                assertThat(grant.join().orElseThrow().fence()).as("the floor was 0 when it read it").isEqualTo(1);
                assertThat(purge.join().removed()).as("the old key only: the new one is held").isEqualTo(1);
                assertThat(floor(t)).isEqualTo(2);
                assertThat(keysAndFences(t)).containsExactly("new|1");
            } finally {
                held.release();
            }
        }
    }

    @Test
    void denseAcquisitionHoldingTheRowIsLeft() throws Exception {
        acquisitionHoldingTheRowIsLeft(FenceStrategy.DENSE);
    }

    @Test
    void clockFlooredAcquisitionHoldingTheRowIsLeft() throws Exception {
        acquisitionHoldingTheRowIsLeft(FenceStrategy.CLOCK_FLOORED);
    }

    @Test
    void denseAcquisitionWaitingOnThePurgedRowStartsAboveIt() throws Exception {
        acquisitionWaitingOnAPurgedRowStartsAboveIt(FenceStrategy.DENSE, "k");
    }

    @Test
    void denseAcquisitionOfANewKeyWaitsForTheFloorAndStartsAboveIt() throws Exception {
        acquisitionWaitingOnAPurgedRowStartsAboveIt(FenceStrategy.DENSE, "other");
    }

    @Test
    void clockFlooredAcquisitionWaitingOnThePurgedRowStartsAboveIt() throws Exception {
        acquisitionWaitingOnAPurgedRowStartsAboveIt(FenceStrategy.CLOCK_FLOORED, "k");
    }

    /** Under CLOCK_FLOORED with margin 0, a released row's fence must be below the tick of now: it is moved back. */
    private void makePurgeable(String table, String key, FenceStrategy strategy) throws Exception {
        if (strategy == FenceStrategy.CLOCK_FLOORED) {
            exec("UPDATE " + q(table) + " SET fence = fence - 100000 WHERE lock_key = '" + key + "'");
        }
    }

    private long fenceOf(String table, String key) {
        return Long.parseLong(rows("SELECT fence FROM " + q(table) + " WHERE lock_key = '" + key + "'").getFirst());
    }

    /** The floor table's name (fence-guard-migrations' V2). */
    static final class FloorTable {
        static final String NAME = "fence_guard_lock_floors";
    }

    static final class Recording implements LockMetrics {
        final ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();

        @Override
        public void acquireAttempt(String backend, AcquireOutcome outcome, Duration latency) {}

        @Override
        public void held(String backend, Duration holdTime) {}

        @Override
        public void renewFailed(String backend) {}

        @Override
        public void highFence(String backend) {}

        @Override
        public void staleWriteRejected(String resourceType) {}

        @Override
        public void purged(String store, String kind, long removed) {
            seen.add(store + "|" + kind + "|" + removed);
        }

        List<String> seen() {
            return new ArrayList<>(seen);
        }
    }
}
