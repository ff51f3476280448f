package dev.fenceguard.jooq;

import static dev.fenceguard.jooq.HorizonFixture.MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The races of {@link PostgresPurgeRaceTest} on MariaDB, through MariaDB Connector/J and MySQL Connector/J:
 * each ordered by row locks the test holds in an open transaction and by InnoDB's own report that the other
 * side waits on them ({@code LOCK WAIT}): no sleeps, no timing. The clock margin is 0 so that a tombstone
 * becomes purgeable as soon as the server's clock passes it.
 */
class MariaDbPurgeRaceTest {

    private static final MariaTestSupport MARIA = new MariaTestSupport("purgerace");
    private static final MariaTestSupport CONNECTOR_J = new MariaTestSupport("purgerace_cj", "mysql", "");
    private static final ExecutorService WRITERS = Executors.newCachedThreadPool();

    @AfterAll
    static void tearDown() {
        WRITERS.shutdownNow();
        MARIA.close();
        CONNECTOR_J.close();
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MariaDbConnectorJ extends Races {
        MariaDbConnectorJ() {
            super(MARIA);
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MySqlConnectorJ extends Races {
        MySqlConnectorJ() {
            super(CONNECTOR_J);
        }
    }

    abstract static class Races {
        final MariaTestSupport db;
        MariaHorizonFixture f;

        Races(MariaTestSupport db) {
            this.db = db;
        }

        @BeforeEach
        void table() throws Exception {
            f = new MariaHorizonFixture(db, "race_items", Duration.ZERO);
        }

        private static <T> T result(Future<T> write) throws Exception {
            return write.get(1, TimeUnit.MINUTES); // a bound on a hang, not an ordering: the order is set by locks
        }

        /** Runs {@code write} on a connection of its own (auto-commit) and returns once it waits for a row lock. */
        private Future<WriteOutcome> blocked(Connection writer, Callable<WriteOutcome> write) throws Exception {
            long waiter = MariaHorizonFixture.connectionId(writer); // before the write: a connection runs one statement at a time
            Future<WriteOutcome> out = WRITERS.submit(write);
            f.awaitBlocked(waiter);
            return out;
        }

        /**
         * A zombie whose fence the tombstone refused, and a claim with the tombstone's own fence, reach the key while
         * a purge has deleted it and not committed: their statements wait on the purge's row lock, then find the row
         * gone, and the horizon refuses them.
         */
        @Test
        void aWriteThatWaitsOnAPurgeFindsTheTombstoneGoneAndIsBelowTheHorizon() throws Exception {
            long purged = f.tickAgo(HorizonFixture.H.multipliedBy(2));
            f.tombstone(1L, purged);
            f.tombstone(2L, purged);
            try (Connection purge = db.ds.getConnection(); Connection zombie = db.ds.getConnection();
                    Connection owner = db.ds.getConnection()) {
                purge.setAutoCommit(false);
                assertThat(f.items.on(purge).purge(Purge.ofDefaults()).removed()).isEqualTo(2); // deleted, not committed
                Future<WriteOutcome> older = blocked(zombie,
                        () -> f.items.on(zombie).upsert(1L, FenceToken.of(purged - 1), Assignments.of("body", "zombie")));
                Future<WriteOutcome> same = blocked(owner, () -> f.items.on(owner).claim(2L, FenceToken.of(purged)));
                purge.commit();
                for (WriteOutcome outcome : new WriteOutcome[] {result(older), result(same)}) {
                    assertThat(outcome).isInstanceOf(Stale.class);
                    assertThat(((Stale) outcome).reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
                    assertThat(((Stale) outcome).currentFence()).isGreaterThan(purged);
                }
            }
            assertThat(f.rows()).as("nothing below the purged fence was created").isEmpty();
        }

        /**
         * A write that holds a tombstone (its statement locked it, in a transaction still open) keeps a purge from
         * removing it: the purge skips locked rows, and the write's revival stands.
         */
        @Test
        void aPurgeSkipsATombstoneThatAWriteHolds() throws Exception {
            long old = f.tickAgo(HorizonFixture.H.multipliedBy(2));
            f.tombstone(1L, old);
            f.tombstone(2L, old);
            try (Connection writer = db.ds.getConnection()) {
                writer.setAutoCommit(false);
                assertThat(f.items.on(writer).upsert(1L, FenceToken.of(old), Assignments.of("body", "revived")))
                        .isInstanceOf(WriteOutcome.Applied.class);
                PurgeResult r = f.items.on(db.ds).purge(Purge.ofDefaults());
                assertThat(r.removed()).as("only the tombstone nobody holds").isEqualTo(1);
                writer.commit();
            }
            assertThat(f.rows()).containsExactly("1|" + old + "|false");
        }

        /**
         * The race PostgreSQL's re-check closes, on MariaDB: a write's gate reads the horizon when its INSERT
         * starts, then the INSERT waits on the key behind an open transaction; that transaction purges the key
         * before it commits; the INSERT then goes through with a fence below the purged one. The second reading
         * of the horizon, after the INSERT, rolls it back.
         */
        @Test
        void aWriteThatWaitedWhileAPurgeDeletedFirstIsRolledBackByTheReCheck() throws Exception {
            long h = f.horizon();
            long fence = h + 3 * MINUTE / 60; // 3 s above the horizon read now: the writer's gate opens
            f.tombstone(1L, 1);
            try (Connection open = db.ds.getConnection(); Connection zombie = db.ds.getConnection()) {
                open.setAutoCommit(false);
                // a paused writer: raised the tombstone's fence and has not committed
                assertThat(f.items.on(open).delete(1L, FenceToken.of(fence))).isInstanceOf(WriteOutcome.Applied.class);
                Future<WriteOutcome> write = blocked(zombie,
                        () -> f.items.on(zombie).upsert(1L, FenceToken.of(fence - 1), Assignments.of("body", "zombie")));
                f.awaitTickAbove(HorizonFixture.H, fence);          // now the tombstone is purgeable (margin 0)
                assertThat(f.items.on(open).purge(Purge.ofDefaults()).removed()).isEqualTo(1); // the same transaction deletes it
                open.commit();
                WriteOutcome outcome = result(write);
                assertThat(outcome).isInstanceOf(Stale.class);
                assertThat(((Stale) outcome).reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
                assertThat(((Stale) outcome).currentFence()).as("the horizon after the wait").isGreaterThan(fence);
            }
            assertThat(f.rows()).as("the insert below the purged fence was rolled back").isEmpty();
            // and the writer's own connection is clean: auto-commit back on, nothing pending
            assertThat(f.items.on(db.ds).upsert(1L, FenceToken.of(f.horizon() + MINUTE), Assignments.of("body", "new")))
                    .isInstanceOf(WriteOutcome.Applied.class);
        }

        /**
         * The same for a delete of an absent key: it reads no row, then, just before its tombstone INSERT, another
         * transaction creates the key's tombstone and stays open; the INSERT (its gate open) waits on the key; that
         * transaction purges the key and commits; the INSERT goes through below the purged fence, and the second
         * reading of the horizon rolls it back.
         */
        @Test
        void aTombstoneInsertThatWaitedWhileAPurgeDeletedFirstIsRolledBackByTheReCheck() throws Exception {
            long h = f.horizon();
            long fence = h + 3 * MINUTE / 60;
            try (Connection open = db.ds.getConnection(); Connection raw = db.ds.getConnection()) {
                open.setAutoCommit(false);
                long waiter = MariaHorizonFixture.connectionId(raw); // before the write: a connection runs one statement at a time
                CountDownLatch created = new CountDownLatch(1);
                Connection zombie = beforeFirstInsert(raw, () -> {
                    // a paused writer: created the key's tombstone and has not committed
                    assertThat(f.items.on(open).delete(1L, FenceToken.of(fence))).isInstanceOf(WriteOutcome.Applied.class);
                    created.countDown();
                });
                Future<WriteOutcome> write = WRITERS.submit(() -> f.items.on(zombie).delete(1L, FenceToken.of(fence - 1)));
                assertThat(created.await(1, TimeUnit.MINUTES)).isTrue();
                f.awaitBlocked(waiter);
                f.awaitTickAbove(HorizonFixture.H, fence);
                assertThat(f.items.on(open).purge(Purge.ofDefaults()).removed()).isEqualTo(1);
                open.commit();
                WriteOutcome outcome = result(write);
                assertThat(outcome).isInstanceOf(Stale.class);
                assertThat(((Stale) outcome).reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
                assertThat(((Stale) outcome).currentFence()).as("the horizon after the wait").isGreaterThan(fence);
            }
            assertThat(f.rows()).as("the tombstone below the purged fence was rolled back").isEmpty();
        }

        /** {@code c}, running {@code before} once just before the first {@code INSERT} prepared on it. */
        private static Connection beforeFirstInsert(Connection c, Runnable before) {
            AtomicBoolean ran = new AtomicBoolean();
            return (Connection) Proxy.newProxyInstance(MariaDbPurgeRaceTest.class.getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, m, args) -> {
                        if (m.getName().equals("prepareStatement") && ((String) args[0]).startsWith("insert") && !ran.getAndSet(true)) {
                            before.run();
                        }
                        try {
                            return m.invoke(c, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        /**
         * A write that raises a tombstone's fence while a purge runs: the purge skips the row it holds, and after
         * the commit the raised fence is above the purge's horizon, so the row stays.
         */
        @Test
        void aPurgeLeavesATombstoneThatAConcurrentWriteRaised() throws Exception {
            long old = f.tickAgo(HorizonFixture.H.multipliedBy(2));
            long young = f.horizon() + MINUTE;
            f.tombstone(1L, old);
            f.tombstone(2L, old);
            try (Connection writer = db.ds.getConnection()) {
                writer.setAutoCommit(false);
                assertThat(f.items.on(writer).delete(1L, FenceToken.of(young))).isInstanceOf(WriteOutcome.Applied.class);
                assertThat(f.items.on(writer).claim(2L, FenceToken.of(young))).isInstanceOf(WriteOutcome.NotFound.class);
                assertThat(f.items.on(db.ds).purge(Purge.ofDefaults()).removed()).isZero();
                writer.commit();
            }
            assertThat(f.items.on(db.ds).purge(Purge.ofDefaults()).removed()).isZero();
            assertThat(f.rows()).containsExactly("1|" + young + "|true", "2|" + young + "|true");
            // and a zombie below the raised fence stays out
            assertThat(((Stale) f.items.on(db.ds).upsert(1L, FenceToken.of(old), Assignments.of("body", "zombie"))).reason())
                    .isEqualTo(Stale.Reason.NEWER_FENCE);
        }
    }
}
