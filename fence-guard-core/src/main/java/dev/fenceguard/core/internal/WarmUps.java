package dev.fenceguard.core.internal;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.WriteRule;
import java.time.Duration;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The one owner of what fence-guard's warm-ups run and how often (docs/warm-up.md): the rounds, the
 * sequence of lock calls a lock store's warm-up makes, and the handling of the outcomes users touch. A
 * store supplies only what only it knows: its internal key and how it keeps a warm-up from leaving
 * anything behind (a rolled-back transaction, a read-only script).
 */
public final class WarmUps {

    /**
     * How many times a warm-up runs a call's real path, not once. Measured in fresh JVMs (docs/BENCHMARKS.md,
     * "Five warm-up rounds"): five rounds took the first acquisition after a warm-up from 2.5x to 1.6x a
     * warm one on PostgreSQL (from a statement's fifth run on a connection pgjdbc uses a server-side
     * prepared statement, as the warm calls do), from 2.9x to 2.3x on Redis, and the first fenced
     * {@code SET} from 2.3x to 1.7x, for about 40 ms (PostgreSQL) and 25 ms (Redis) more at startup.
     */
    public static final int ROUNDS = 5;

    private WarmUps() {}

    /** {@code round} run {@link #ROUNDS} times in a row once {@code first} completes; the first failure ends it. */
    public static CompletableFuture<Void> rounds(CompletionStage<?> first, Supplier<? extends CompletionStage<?>> round) {
        CompletableFuture<Object> chain = first.toCompletableFuture().thenApply(done -> null);
        for (int i = 0; i < ROUNDS; i++) {
            chain = chain.thenCompose(done -> round.get().thenApply(ran -> null));
        }
        return chain.thenApply(done -> null);
    }

    /**
     * A call of a lock store's warm-up, made through the very code of a real call (a lambda or string
     * concatenation is linked on the first run of its line, so only those lines take the cost away from
     * the first real call), on the store's internal key, which no {@code LockKey} can name.
     *
     * @param <E> what the store's calls throw (say {@code SQLException})
     */
    @FunctionalInterface
    public interface LeaseCall<E extends Exception> {
        /** The call for {@code holder}'s lease ({@code ttl} is ignored where the call takes none); true if it found or made one. */
        boolean run(LockId holder, Duration ttl) throws E;
    }

    /**
     * Every path of a lock store once, in the order that makes each of them do its whole work: an
     * acquisition, a refused one, an extension, a lookup and a release. For stores that can undo it all
     * (a transaction rolled back afterwards).
     *
     * @return whether every call answered as on a store where the key was free: false says the store
     *     answered otherwise (another process's warm-up on the same key, say), not that a path did not run
     */
    public static <E extends Exception> boolean everyLockPath(LeaseCall<E> acquire, LeaseCall<E> extend, LeaseCall<E> lookup,
            LeaseCall<E> release) throws E {
        LockId holder = LockId.random();
        Duration ttl = Duration.ofSeconds(1);
        // Not short-circuited: every path runs whatever the one before answered.
        return acquire.run(holder, ttl)
                & !acquire.run(LockId.random(), ttl)
                & extend.run(holder, ttl)
                & lookup.run(holder, ttl)
                & release.run(holder, ttl);
    }

    /**
     * What handling a {@link WriteOutcome} costs the first time in a process, run once per call for
     * every fenced-write warm-up: each outcome through an observed write's path (on a rule that
     * observes and counts nothing), {@code isApplied} and {@code orThrow} of each (the exceptions
     * included), and a pattern {@code switch} over the three. In a JDK 23 or later, a pattern switch's
     * first run in a process loads and runs the JDK's class-file API to generate a class for the switch
     * (several ms, about 20 classes); a user's own switch over an outcome still generates its own class
     * at its first run, but on machinery this has loaded and run.
     */
    public static void outcomes() {
        WriteOutcome[] all = {new WriteOutcome.Applied(WARM_UP, 1), new WriteOutcome.Stale(WARM_UP, 1, 2, FencePolicy.SAME_OR_NEWER),
            new WriteOutcome.NotFound(WARM_UP)};
        // A rule that observes and counts nothing, through the path a blocking fenced write takes (its
        // observation's classes are loaded once here rather than in the first real write).
        WriteRule quiet = new WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.INTEGER, LockMetrics.none(), WARM_UP);
        int seen = 0;
        for (WriteOutcome outcome : all) {
            seen += kind(quiet.observe(WARM_UP, WARM_UP, FenceToken.of(1), () -> outcome));
            if (outcome.isApplied()) {
                seen += outcome.orThrow() == outcome ? 1 : 0;
                continue;
            }
            try {
                outcome.orThrow();
            } catch (StaleFenceException | NoSuchElementException refused) {
                seen += refused.getMessage().isEmpty() ? 0 : 1; // the message is built as a user's log would build it
            }
        }
        if (seen != 6) {
            throw new IllegalStateException("the outcome warm-up saw " + seen + " of 6 answers");
        }
    }

    private static final String WARM_UP = "warm-up";

    /**
     * The pattern switch of {@link #outcomes()}; 1 for each of the three kinds. The one pattern switch
     * over outcomes in fence-guard's main code, on purpose: it is run only here, at warm-up, to bootstrap
     * the JDK's machinery that users' own switches need.
     */
    private static int kind(WriteOutcome outcome) {
        return switch (outcome) {
            case WriteOutcome.Applied a -> 1;
            case WriteOutcome.Stale s -> 1;
            case WriteOutcome.NotFound n -> 1;
        };
    }
}
