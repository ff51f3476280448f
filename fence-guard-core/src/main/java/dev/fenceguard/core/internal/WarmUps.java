package dev.fenceguard.core.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/** What the warm-ups of the lock client and the Redis fenced writes share. */
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
}
