package dev.fenceguard.redis.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Redacted;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The asynchronous twin of {@link ScriptRunner}: EVALSHA, then EVAL when the node answers NOSCRIPT,
 * on Lettuce's asynchronous commands, so no thread waits for Redis. Futures complete on Lettuce's
 * event loop (or, for a timeout, the JDK's shared delay scheduler thread); what callers chain onto them
 * must not block.
 */
public final class AsyncScriptRunner {

    /** Timeouts beyond this (a day) are waited as this, rather than overflow the clock arithmetic. */
    private static final Duration LONGEST = Duration.ofDays(1);
    private static final Deadlines DEADLINES = new Deadlines();

    private final RedisScriptingAsyncCommands<String, String> commands;

    public AsyncScriptRunner(RedisScriptingAsyncCommands<String, String> commands) {
        this.commands = commands;
    }

    /** Sends {@code script}; its multi-bulk reply, or a mapped {@link FenceGuardException}. Unbounded: see {@link #bounded}. */
    public CompletableFuture<List<Object>> multi(Script script, String subject, String[] keys, String... args) {
        return send(script, ScriptOutputType.MULTI, subject, keys, args);
    }

    /** Sends {@code script}; its integer reply, or a mapped {@link FenceGuardException}. Unbounded: see {@link #bounded}. */
    public CompletableFuture<Long> integer(Script script, String subject, String[] keys, String... args) {
        return send(script, ScriptOutputType.INTEGER, subject, keys, args);
    }

    private <T> CompletableFuture<T> send(Script script, ScriptOutputType type, String subject, String[] keys, String... args) {
        CompletableFuture<T> out = new CompletableFuture<>();
        dispatch(() -> commands.<T>evalsha(script.sha(), type, keys, args)).whenComplete((value, error) -> {
            if (error == null) {
                out.complete(value);
            } else if (unwrap(error) instanceof RedisNoScriptException) {
                // A restart, SCRIPT FLUSH or a Cluster node that never saw it: EVAL runs it and caches it there.
                dispatch(() -> commands.<T>eval(script.source(), type, keys, args)).whenComplete((again, failure) -> {
                    if (failure == null) {
                        out.complete(again);
                    } else {
                        out.completeExceptionally(map(failure, subject, script.name(), args));
                    }
                });
            } else {
                out.completeExceptionally(map(error, subject, script.name(), args));
            }
        });
        return out;
    }

    /** Lettuce reports most failures through the future, but a closed connection can throw at once. */
    private static <T> CompletionStage<T> dispatch(Supplier<? extends CompletionStage<T>> send) {
        try {
            return send.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * {@code call}, bounded: the returned future fails with {@code TIMEOUT} once {@code timeout} has
     * passed, whatever Redis does, and no thread waits meanwhile (one shared sweep timer, see
     * {@code Deadlines}). The command itself stays queued in Lettuce until Redis answers or Lettuce's own
     * command timeout ends it; an answer that arrives after the timeout goes to {@code late} (if not
     * null), so that what it did can be undone: the caller was told TIMEOUT and must not be left
     * holding a lock it does not know of.
     */
    public static <T> CompletableFuture<T> bounded(CompletableFuture<T> call, Duration timeout, String subject,
            String operation, Consumer<? super T> late) {
        CompletableFuture<T> out = new CompletableFuture<>();
        long nanos = timeout.compareTo(LONGEST) > 0 ? LONGEST.toNanos() : timeout.toNanos();
        Deadlines.Entry deadline = DEADLINES.add(System.nanoTime() + nanos, () -> out.completeExceptionally(
                new FenceGuardException(ErrorCode.TIMEOUT, subject, operation + " got no answer from Redis within " + timeout
                        + "; gave up waiting")));
        call.whenComplete((value, error) -> {
            DEADLINES.remove(deadline);
            boolean taken = error == null ? out.complete(value) : out.completeExceptionally(unwrap(error));
            if (!taken && error == null && late != null) {
                late.accept(value);
            }
        });
        return out;
    }

    /** A {@link FenceGuardException} for whatever a Lettuce future failed with. */
    public static FenceGuardException map(Throwable error, String subject, String operation, String... args) {
        Throwable e = unwrap(error);
        if (e instanceof FenceGuardException f) {
            return f;
        }
        if (e instanceof RedisException r) {
            return ScriptRunner.map(r, subject, operation, args);
        }
        return new FenceGuardException(ErrorCode.INTERNAL, subject, operation + " failed: " + e.getClass().getName(),
                Redacted.of(e, null));
    }

    /** The exception inside a stage's completion wrapper. */
    public static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
