package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Acquisitions, releases, expiries and purges of lock rows, interleaved at random over three keys (and a
 * purge racing an acquisition, in no set order): every fence a key is granted is above every fence it was
 * granted before, whatever the purges removed. Under {@code CLOCK_FLOORED} with a clock margin of 0, the
 * most a purge may remove; under {@code DENSE}, every free row, folded into the floor.
 */
abstract class LockPurgeProperties {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration LONG = Duration.ofSeconds(10);
    private static final AtomicInteger TRIES = new AtomicInteger();

    abstract DataSource ds();

    abstract String schema();

    abstract void exec(String sql) throws Exception;

    /** SQL for "the server's clock a second ago" in the expiry column. */
    abstract String aSecondAgo();

    enum Kind { ACQUIRE, RELEASE, EXPIRE, PURGE, PURGE_BESIDE_ACQUIRE }

    record Op(Kind kind, int key) {}

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Kind> kinds = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, Arbitraries.just(Kind.ACQUIRE)), net.jqwik.api.Tuple.of(3, Arbitraries.just(Kind.RELEASE)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.EXPIRE)), net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.PURGE)),
                net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.PURGE_BESIDE_ACQUIRE)));
        return Combinators.combine(kinds, Arbitraries.integers().between(0, 2)).as(Op::new).list().ofMinSize(1).ofMaxSize(30);
    }

    @Property(tries = 15)
    void denseFencesOfAKeyOnlyRise(@ForAll("ops") List<Op> ops) throws Exception {
        run(FenceStrategy.DENSE, ops);
    }

    @Property(tries = 15)
    void clockFlooredFencesOfAKeyOnlyRise(@ForAll("ops") List<Op> ops) throws Exception {
        run(FenceStrategy.CLOCK_FLOORED, ops);
    }

    private final Map<FenceStrategy, String> tables = new HashMap<>();

    private String table(FenceStrategy strategy) {
        return tables.computeIfAbsent(strategy, s -> {
            String t = "props_" + s.name().toLowerCase(java.util.Locale.ROOT);
            FenceGuardMigrations.builder(ds()).withSchema(schema()).withTable(t).migrate();
            return t;
        });
    }

    private void run(FenceStrategy strategy, List<Op> ops) throws Exception {
        String table = table(strategy);
        int tryNo = TRIES.incrementAndGet();
        try (FenceGuardJdbc jdbc = FenceGuardJdbc.builder(ds()).withSchema(schema()).withLockTable(table).withFenceStrategy(strategy)
                .withClockMargin(Duration.ZERO).withMetrics(LockMetrics.none()).build()) {
            LockBackend locks = jdbc.lockBackend();
            long[] highest = new long[3];
            LockId[] holders = new LockId[3];
            StringBuilder seen = new StringBuilder();
            for (Op op : ops) {
                String name = "t" + tryNo + "-" + op.key();
                LockKey key = LockKey.of(name);
                switch (op.kind()) {
                    case ACQUIRE -> granted(op.key(), attempt(locks, key, holders, op.key()), highest, seen);
                    case RELEASE -> {
                        if (holders[op.key()] != null) {
                            assertThat(locks.release(key, holders[op.key()], LONG).toCompletableFuture().join()).isTrue();
                            holders[op.key()] = null;
                        }
                    }
                    case EXPIRE -> {
                        exec("UPDATE " + schema() + "." + table + " SET expires_at = " + aSecondAgo()
                                + " WHERE lock_key = '" + name + "' AND lock_id IS NOT NULL");
                        holders[op.key()] = null;
                    }
                    case PURGE -> jdbc.purgeLocks(Purge.ofDefaults());
                    case PURGE_BESIDE_ACQUIRE -> {
                        CompletableFuture<?> purge = CompletableFuture.runAsync(() -> jdbc.purgeLocks(Purge.ofDefaults()));
                        Optional<Grant> grant = attempt(locks, key, holders, op.key());
                        purge.join();
                        granted(op.key(), grant, highest, seen);
                    }
                }
                seen.append(op).append(' ');
            }
        }
    }

    private static Optional<Grant> attempt(LockBackend locks, LockKey key, LockId[] holders, int k) {
        if (holders[k] != null) {
            return Optional.empty();
        }
        LockId id = LockId.random();
        Optional<Grant> grant = locks.tryAcquire(key, id, TTL, LONG).toCompletableFuture().join();
        assertThat(grant).as("a key no one holds is granted").isPresent();
        holders[k] = id;
        return grant;
    }

    private static void granted(int k, Optional<Grant> grant, long[] highest, StringBuilder seen) {
        if (grant.isPresent()) {
            long fence = grant.get().fence();
            assertThat(fence).as("key %d after %s", k, seen).isGreaterThan(highest[k]);
            highest[k] = fence;
        }
    }
}
