package dev.fenceguard.core.memory;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyRules;
import dev.fenceguard.core.spi.IdempotencyState;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * An idempotency backend in this process's memory: for users' unit tests, and the reference model the
 * testkit compares real backends against. It applies {@link IdempotencyRules} under one monitor, with
 * time from the given {@link TimeSource} (a {@code ManualTimeSource} of fence-guard-testkit drives it by
 * hand). Its stages are complete when returned. Thread-safe; nothing survives the process.
 *
 * @since 0.1
 */
public final class InMemoryIdempotencyBackend implements IdempotencyBackend {

    private final TimeSource time;
    private final Map<LockKey, IdempotencyEntry> entries = new HashMap<>();

    /** A backend on the system clock. */
    public InMemoryIdempotencyBackend() {
        this(TimeSource.system());
    }

    /** A backend whose expiry and retention are judged by {@code time}. */
    public InMemoryIdempotencyBackend(TimeSource time) {
        this.time = Objects.requireNonNull(time, "time");
    }

    @Override
    public String name() {
        return "in-memory";
    }

    @Override
    public synchronized CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl,
            Duration retention, Duration timeout) {
        IdempotencyEntry next = IdempotencyRules.claim(Optional.ofNullable(entries.get(key)), fingerprint, fence, ttl, retention,
                time.now());
        entries.put(key, next);
        return CompletableFuture.completedFuture(next);
    }

    @Override
    public synchronized CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result,
            Duration retention, Duration timeout) {
        Instant now = time.now();
        Optional<IdempotencyEntry> current = Optional.ofNullable(entries.get(key));
        Optional<IdempotencyEntry> next = IdempotencyRules.record(current, fence, state, result, retention, now);
        next.ifPresent(e -> entries.put(key, e));
        return CompletableFuture.completedFuture(next.isPresent() ? OptionalLong.empty() : OptionalLong.of(IdempotencyRules.currentFence(current, now)));
    }

    @Override
    public synchronized CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
        Instant now = time.now();
        return CompletableFuture.completedFuture(Optional.ofNullable(entries.get(key)).filter(e -> now.isBefore(e.retainUntil())));
    }

    @Override
    public synchronized CompletionStage<Integer> purge(int limit, Duration timeout) {
        Instant now = time.now();
        int purged = 0;
        for (Iterator<IdempotencyEntry> it = entries.values().iterator(); it.hasNext() && purged < limit; ) {
            if (!now.isBefore(it.next().retainUntil())) {
                it.remove();
                purged++;
            }
        }
        return CompletableFuture.completedFuture(purged);
    }

    @Override
    public String toString() {
        return "InMemoryIdempotencyBackend";
    }
}
