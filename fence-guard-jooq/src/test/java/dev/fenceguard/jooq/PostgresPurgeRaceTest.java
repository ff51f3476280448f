package dev.fenceguard.jooq;

import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import static dev.fenceguard.jooq.HorizonFixture.MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The races of docs/fence-lifecycle.md on PostgreSQL, each ordered by row locks the test holds in an open
 * transaction and by the database's own report that the other side waits on them (pg_blocking_pids):
 * no sleeps, no timing. The clock margin is 0 so that a tombstone becomes purgeable as soon as the
 * database's clock passes it.
 */
class PostgresPurgeRaceTest {

    private static PgTestSupport pg;
    private static ExecutorService writers;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("purgerace");
        writers = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void tearDown() {
        writers.shutdownNow();
        pg.close();
    }

    private HorizonFixture f;

    @BeforeEach
    void table() throws Exception {
        f = new HorizonFixture(pg, "race_items", Duration.ZERO);
    }

    private static <T> T result(Future<T> write) throws Exception {
        return write.get(1, TimeUnit.MINUTES); // a bound on a hang, not an ordering: the order is set by locks
    }

    /** Runs {@code write} on a connection of its own (auto-commit) and returns once it waits on {@code holder}. */
    private Future<WriteOutcome> blockedOn(Connection holder, Connection writer, Callable<WriteOutcome> write) throws Exception {
        int waiter = HorizonFixture.pid(writer); // before the write: a connection runs one statement at a time
        int holding = HorizonFixture.pid(holder);
        Future<WriteOutcome> out = writers.submit(write);
        f.awaitBlocked(waiter, holding);
        return out;
    }

    /**
     * A zombie whose fence the tombstone refused sees the tombstone in its snapshot while a purge deletes it:
     * its insert arm's key-share lock waits for the purge, then finds the row gone, and the horizon refuses it.
     * Without the lock the write would see the tombstone in its snapshot and insert a fence below the purged one.
     */
    @Test
    void aWriteThatWaitsOnAPurgeFindsTheTombstoneGoneAndIsBelowTheHorizon() throws Exception {
        long purged = f.tickAgo(HorizonFixture.H.multipliedBy(2));
        f.tombstone(1L, purged);
        f.tombstone(2L, purged);
        try (Connection purge = pg.ds.getConnection(); Connection zombie = pg.ds.getConnection();
                Connection owner = pg.ds.getConnection()) {
            purge.setAutoCommit(false);
            assertThat(f.items.on(purge).purge(Purge.ofDefaults()).removed()).isEqualTo(2); // deleted, not committed
            Future<WriteOutcome> older = blockedOn(purge, zombie,
                    () -> f.items.on(zombie).upsert(1L, FenceToken.of(purged - 1), Assignments.of("body", "zombie")));
            Future<WriteOutcome> same = blockedOn(purge, owner, () -> f.items.on(owner).claim(2L, FenceToken.of(purged)));
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
        try (Connection writer = pg.ds.getConnection()) {
            writer.setAutoCommit(false);
            assertThat(f.items.on(writer).upsert(1L, FenceToken.of(old), Assignments.of("body", "revived")))
                    .isInstanceOf(WriteOutcome.Applied.class);
            PurgeResult r = f.items.on(pg.ds).purge(Purge.ofDefaults());
            assertThat(r.removed()).as("only the tombstone nobody holds").isEqualTo(1);
            writer.commit();
        }
        assertThat(f.rows()).containsExactly("1|" + old + "|false");
    }

    /**
     * The race a reviewer reproduced: a write reads the horizon when its statement starts, then waits on
     * ON CONFLICT behind an open transaction; that transaction's key is purged before it commits; the write's
     * insert then goes through with a fence below the purged one. The re-check of the horizon in RETURNING,
     * read after the wait, rolls it back to its savepoint.
     */
    @Test
    void aWriteThatWaitedWhileAPurgeDeletedFirstIsRolledBackByTheReCheck() throws Exception {
        long h = f.horizon();
        long fence = h + 3 * MINUTE / 60; // 3 s above the horizon read now: the writer's statement starts below it
        f.tombstone(1L, 1);
        try (Connection open = pg.ds.getConnection(); Connection zombie = pg.ds.getConnection()) {
            open.setAutoCommit(false);
            // a paused writer: raised the tombstone's fence and has not committed
            assertThat(f.items.on(open).delete(1L, FenceToken.of(fence))).isInstanceOf(WriteOutcome.Applied.class);
            Future<WriteOutcome> write = blockedOn(open, zombie,
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
        assertThat(f.items.on(pg.ds).upsert(1L, FenceToken.of(f.horizon() + MINUTE), Assignments.of("body", "new")))
                .isInstanceOf(WriteOutcome.Applied.class);
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
        try (Connection writer = pg.ds.getConnection()) {
            writer.setAutoCommit(false);
            assertThat(f.items.on(writer).delete(1L, FenceToken.of(young))).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(f.items.on(writer).claim(2L, FenceToken.of(young))).isInstanceOf(WriteOutcome.NotFound.class);
            assertThat(f.items.on(pg.ds).purge(Purge.ofDefaults()).removed()).isZero();
            writer.commit();
        }
        assertThat(f.items.on(pg.ds).purge(Purge.ofDefaults()).removed()).isZero();
        assertThat(f.rows()).containsExactly("1|" + young + "|true", "2|" + young + "|true");
        // and a zombie below the raised fence stays out
        assertThat(((Stale) f.items.on(pg.ds).upsert(1L, FenceToken.of(old), Assignments.of("body", "zombie"))).reason())
                .isEqualTo(Stale.Reason.NEWER_FENCE);
    }
}
