package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jdbc.internal.SqlCauses;
import dev.fenceguard.jdbc.testing.SqlTestSupport;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.ZombieStorm;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * The zombie storm with a purge running beside it (docs/fence-lifecycle.md, "How the build will be tested"),
 * on any SQL database the fenced writes support ({@link PostgresPurgeStormTest}, {@link MariaDbPurgeStormTest}):
 * a clock-floored lock; the counter in a table with a horizon of 1 s and no clock margin, so that tombstones
 * become purgeable while the storm runs; a loop purging that table until the storm ends. Beside the counter
 * each attempt leaves a tombstone: its claim deletes a side key chosen by its fence (one of
 * {@value #SIDE_KEYS}), and its write first re-creates that key with the same fence. A zombie (stalled for
 * twice the 1.5 s lease, so its fence is older than the horizon when it wakes) then meets a newer lease's
 * tombstone, its own, or nothing because the purge removed it: each must refuse it or admit it exactly as the
 * rule says, so no side write is ever applied below a fence its key recorded. Size: 300 attempts, or
 * {@code -Dfenceguard.storm.attempts=N} for a soak; about 12 stalls whatever the size (each blocks the lock
 * for one lease).
 *
 * <p>Nothing here is timed: the storm's counts (stale applied, lost updates) hold whatever the schedule;
 * the loop's first purge ends before the storm starts (a latch); after the storm the test waits for the
 * database's clock, not the JVM's, to pass the horizon of every fence written, then one purge must leave no
 * side tombstone and the counter as it was.
 */
final class PurgeStorm {

    static final int SIDE_KEYS = 256;
    private static final Duration TTL = Duration.ofMillis(1500);
    private static final Duration HORIZON = Duration.ofSeconds(1);
    private static final String TABLE = "counters";

    /** The database's {@code tick(now - ago)}, read from its own clock. */
    @FunctionalInterface
    interface TickClock {
        long tickAgo(Duration ago) throws Exception;
    }

    /**
     * What differs between databases.
     *
     * @param label names the database in the printed storm line
     * @param storeTag the {@code store} tag the purge meter gets on it
     * @param db a namespace of its own on the test server
     * @param namespace its schema (PostgreSQL) or database (MariaDB) name
     * @param tombstoneIndex the statements that add the purge's index to a table, run on one connection
     * @param errors maps the test's own read errors as fence-guard maps them on this database
     * @param clock the database's clock floor
     */
    record Database(String label, String storeTag, SqlTestSupport db, String namespace, Function<String, List<String>> tombstoneIndex,
            SqlCauses.Mapping errors, TickClock clock) {}

    private PurgeStorm() {}

    /** Runs the storm on {@code d} and checks it; prints its line. */
    static void run(Database d) throws Exception {
        String table = d.db().q(TABLE);
        d.db().exec("CREATE TABLE " + table + " (id VARCHAR(20) PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0, "
                + "fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        try (Connection c = d.db().ds.getConnection(); Statement s = c.createStatement()) {
            for (String sql : d.tombstoneIndex().apply(TABLE)) {
                s.execute(sql);
            }
        }
        d.db().exec("INSERT INTO " + table + " (id, n) VALUES ('c', 0)");
        HorizonFixture.Purges metered = new HorizonFixture.Purges();
        FencedTable counters = FencedTable.builder(d.namespace(), TABLE, "id", "fence_token").withTombstoneColumn("fence_deleted")
                .withHorizon(HORIZON).withClockMargin(Duration.ZERO).withMetrics(metered.metrics).build();
        FencedWriter w = counters.on(d.db().ds);
        SideKeys side = new SideKeys(w);

        FenceGuardMigrations.builder(d.db().ds).withSchema(d.namespace()).withTable("locks").migrate(); // for a clock-floored backend
        int attempts = ZombieStorm.attemptsProperty(300);
        try (FenceGuardJdbc jdbc = FenceGuardJdbc.builder(d.db().ds).withSchema(d.namespace()).withLockTable("locks")
                .withFenceStrategy(FenceStrategy.CLOCK_FLOORED).build()) {
            ZombieStorm storm = PgStorms.storm(jdbc.lockBackend(), side.counter(d.db().ds, table, d.errors()), attempts).withTtl(TTL)
                    .withStallProbability(Math.min(0.25, 12.0 / attempts)).build();

            AtomicBoolean stormOver = new AtomicBoolean();
            AtomicLong purges = new AtomicLong();
            CountDownLatch firstPurge = new CountDownLatch(1);
            ExecutorService purger = Executors.newSingleThreadExecutor();
            Future<Void> loop = purger.submit(() -> {
                Purge batch = Purge.ofDefaults().withBatchSize(16);
                Object cursor = null;
                do {
                    PurgeResult r = w.purge(cursor == null ? batch : batch.withStartAfter(cursor));
                    cursor = r.resumeAfter().orElse(null);
                    purges.incrementAndGet();
                    firstPurge.countDown();
                    // Paced by the storm, not by a clock: one purge per claim at most (the wait only lets the loop see the end).
                    if (side.claims.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        side.claims.drainPermits();
                    }
                } while (!stormOver.get());
                return null;
            });
            ZombieStorm.Result r;
            try {
                assertThat(firstPurge.await(1, TimeUnit.MINUTES)).as("the purge loop ran its first purge").isTrue();
                r = storm.run();
            } finally {
                stormOver.set(true);
                purger.shutdown();
            }
            loop.get(1, TimeUnit.MINUTES); // a failed purge fails the test
            System.out.println("STORM " + d.label() + ", purging beside it: " + r.summary() + " purges=" + purges.get() + " tombstones purged="
                    + metered.removed(d.storeTag(), "tombstone") + " side writes applied=" + side.applied.get() + " refused below the horizon="
                    + side.belowHorizon.get() + " refused by a newer fence=" + side.newer.get() + " side-stale-applied=" + side.staleApplied.get());
            r.requireSafe();
            assertThat(r.stalls()).isPositive();
            assertThat(side.staleApplied.get()).as("side writes applied below a fence their key had recorded").isZero();
            assertThat(purges.get()).isGreaterThanOrEqualTo(2);

            // Once the database's clock has passed every fence written by the horizon, one purge leaves no side tombstone.
            long highest = Long.parseLong(d.db().one("SELECT max(fence_token) FROM " + table));
            long give = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            while (d.clock().tickAgo(HORIZON) <= highest) {
                assertThat(System.nanoTime()).as("the database clock never passed fence %d", highest).isLessThan(give);
            }
            PurgeResult last = w.purge(Purge.ofDefaults());
            assertThat(last.complete()).isTrue();
            assertThat(d.db().one("SELECT count(*) FROM " + table + " WHERE fence_deleted")).isEqualTo("0");
            assertThat(Long.parseLong(d.db().one("SELECT n FROM " + table + " WHERE id = 'c'"))).isEqualTo(r.finalValue());
            assertThat(metered.removed(d.storeTag(), "tombstone")).as("tombstones the purges' meter counted, tagged store=%s", d.storeTag())
                    .isPositive();
        }
    }

    /**
     * The side keys: a claim deletes {@code s<fence mod 256>} with its fence, a write re-creates it first.
     * A side write is stale if its key had recorded a higher fence before the write started (so the
     * check has no false alarm: that fence was committed first).
     */
    static final class SideKeys {
        final FencedWriter w;
        final ConcurrentHashMap<String, AtomicLong> recorded = new ConcurrentHashMap<>();
        final AtomicLong applied = new AtomicLong();
        final AtomicLong belowHorizon = new AtomicLong();
        final AtomicLong newer = new AtomicLong();
        final AtomicLong staleApplied = new AtomicLong();
        final Semaphore claims = new Semaphore(0);

        SideKeys(FencedWriter w) {
            this.w = w;
        }

        private static String key(FenceToken fence) {
            return "s" + Math.floorMod(fence.value(), SIDE_KEYS);
        }

        private AtomicLong seen(String key) {
            return recorded.computeIfAbsent(key, k -> new AtomicLong());
        }

        void delete(FenceToken fence) {
            String k = key(fence);
            if (w.delete(k, fence) instanceof WriteOutcome.Applied) {
                seen(k).accumulateAndGet(fence.value(), Math::max);
            }
            claims.release();
        }

        void recreate(FenceToken fence) {
            String k = key(fence);
            long before = seen(k).get();
            WriteOutcome out = w.upsert(k, fence, Assignments.of("n", 1L));
            switch (out) {
                case WriteOutcome.Applied a -> {
                    applied.incrementAndGet();
                    if (fence.value() < before) {
                        staleApplied.incrementAndGet();
                    }
                    seen(k).accumulateAndGet(fence.value(), Math::max);
                }
                case WriteOutcome.Stale s -> (s.reason() == WriteOutcome.Stale.Reason.BELOW_HORIZON ? belowHorizon : newer).incrementAndGet();
                case WriteOutcome.NotFound n -> throw new AssertionError("an upsert answered NotFound: " + n);
            }
        }

        /** The storm's counter ({@link PgStorms#counter}'s shape), each claim and write with its side key first. */
        ZombieStorm.FencedCounter counter(DataSource ds, String table, SqlCauses.Mapping errors) {
            return new ZombieStorm.FencedCounter() {
                @Override
                public WriteOutcome claim(FenceToken fence) {
                    delete(fence);
                    return w.claim("c", fence);
                }

                @Override
                public long read() {
                    return PgStorms.read(ds, table, errors);
                }

                @Override
                public WriteOutcome write(long value, FenceToken fence) {
                    recreate(fence);
                    return w.update("c", fence, Assignments.of("n", value));
                }
            };
        }
    }
}
