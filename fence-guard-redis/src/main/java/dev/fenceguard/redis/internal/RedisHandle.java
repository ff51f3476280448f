package dev.fenceguard.redis.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.internal.Timer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * The one connection of a fence-guard Redis module instance (standalone, Sentinel or Cluster), shared
 * by its lock backend and its fenced writes, and the one way scripts reach it: EVALSHA on Lettuce's
 * asynchronous commands, then EVAL on the same path when the node answers NOSCRIPT (after a restart,
 * SCRIPT FLUSH, or on a Cluster node that has not seen the script; EVAL caches it there). No thread
 * waits for Redis, and commands reach Lettuce one at a time ({@link OneWriter}), so that callers never
 * meet on the lock Lettuce takes for each write. Futures complete on Lettuce's event loop (or, for a
 * timeout of {@link #bounded}, the {@code fence-guard-timer} thread): what is chained onto them must not block.
 */
public final class RedisHandle {

    /** {@code WAIT replicas timeout}, sent asynchronously. */
    @FunctionalInterface
    private interface ReplicaWait {
        CompletionStage<Long> send(int replicas, long timeoutMillis);
    }


    private final RedisScriptingAsyncCommands<String, String> commands;
    private final AutoCloseable owned;
    private final String topology;
    private final ReplicaWait replicaWait;
    private final OneWriter writer = new OneWriter();

    private RedisHandle(RedisScriptingAsyncCommands<String, String> commands, AutoCloseable owned, String topology,
            ReplicaWait replicaWait) {
        this.commands = commands;
        this.owned = owned;
        this.topology = topology;
        this.replicaWait = replicaWait;
    }

    /** Connects (blocking, once) and owns the connection. */
    public static RedisHandle of(RedisClient client) {
        StatefulRedisConnection<String, String> c = client.connect();
        return standalone(c, c);
    }

    /** Connects to the Cluster (blocking, once) and owns the connection. */
    public static RedisHandle of(RedisClusterClient client) {
        StatefulRedisClusterConnection<String, String> c = client.connect();
        return new RedisHandle(c.async(), c, "cluster", null);
    }

    /** Uses the caller's connection, which it never closes. */
    public static RedisHandle of(StatefulRedisConnection<String, String> connection) {
        return standalone(connection, null);
    }

    /** Uses the caller's Cluster connection, which it never closes. WAIT cannot be routed on a Cluster. */
    public static RedisHandle of(StatefulRedisClusterConnection<String, String> connection) {
        return new RedisHandle(connection.async(), null, "cluster", null);
    }

    private static RedisHandle standalone(StatefulRedisConnection<String, String> c, AutoCloseable owned) {
        return new RedisHandle(c.async(), owned, "standalone", (n, ms) -> c.async().waitForReplication(n, ms));
    }

    /** {@code standalone} (Sentinel included) or {@code cluster}. */
    public String topology() {
        return topology;
    }

    /** Whether {@link #waitForReplicas} can be sent (not on a Cluster). */
    public boolean canWaitForReplicas() {
        return replicaWait != null;
    }

    /** {@code WAIT replicas timeout}; the number of replicas that acknowledged. Unbounded: see {@link #bounded}. */
    public CompletableFuture<Long> waitForReplicas(int replicas, long timeoutMillis) {
        return dispatch(() -> replicaWait.send(replicas, timeoutMillis)).toCompletableFuture();
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
        Sent<T> out = new Sent<>(script, type, subject, keys, args);
        dispatch(() -> commands.<T>evalsha(script.sha(), type, keys, args)).whenComplete(out);
        return out;
    }

    /**
     * One script call: the caller's future and the callback of its answer ({@link BiConsumer}) in one object,
     * where a future and a lambda were two allocations per call (issue #31). A script the server does not know
     * (NOSCRIPT: a restart, a failover, a {@code SCRIPT FLUSH}) is sent again in full with {@code EVAL}.
     */
    private final class Sent<T> extends CompletableFuture<T> implements BiConsumer<T, Throwable> {
        private final Script script;
        private final ScriptOutputType type;
        private final String subject;
        private final String[] keys;
        private final String[] args;

        Sent(Script script, ScriptOutputType type, String subject, String[] keys, String[] args) {
            this.script = script;
            this.type = type;
            this.subject = subject;
            this.keys = keys;
            this.args = args;
        }

        @Override
        public void accept(T value, Throwable error) {
            if (error == null) {
                complete(value);
            } else if (Stages.unwrap(error) instanceof RedisNoScriptException) {
                dispatch(() -> commands.<T>eval(script.source(), type, keys, args)).whenComplete((again, failure) -> {
                    if (failure == null) {
                        complete(again);
                    } else {
                        completeExceptionally(RedisErrors.map(failure, subject, script.name(), args));
                    }
                });
            } else {
                completeExceptionally(RedisErrors.map(error, subject, script.name(), args));
            }
        }
    }

    public CompletableFuture<Void> load(String subject, Script... scripts) {
        CompletableFuture<?>[] loads = new CompletableFuture<?>[scripts.length];
        for (int i = 0; i < scripts.length; i++) {
            Script script = scripts[i];
            loads[i] = dispatch(() -> commands.scriptLoad(script.source())).toCompletableFuture();
        }
        return CompletableFuture.allOf(loads).handle((ok, error) -> {
            if (error != null) {
                throw RedisErrors.map(error, subject, "SCRIPT LOAD");
            }
            return null;
        });
    }

    /** Every command goes to Lettuce this way: one at a time, see {@link OneWriter}. */
    private <T> CompletionStage<T> dispatch(Supplier<? extends CompletionStage<T>> send) {
        return writer.send(send);
    }

    /**
     * {@code call}, bounded for the fenced writes, which are their own client: the returned future fails
     * with {@code TIMEOUT} once {@code timeout} has passed, whatever Redis does, and no thread waits
     * meanwhile (a deadline on the process's one timer, {@link Timer#deadlines()}). The command itself
     * stays queued in Lettuce until Redis answers or Lettuce's own command timeout ends it; a late answer
     * is dropped (a fenced write judges its fence on the server, so a late one changes nothing it should
     * not). The lock, idempotency and flight backends are not bounded here: their callers bound them.
     */
    public static <T> CompletableFuture<T> bounded(CompletableFuture<T> call, Duration timeout, String subject, String operation) {
        return Timer.bounded(timeout, () -> new FenceGuardException(ErrorCode.TIMEOUT, subject,
                operation + " got no answer from Redis within " + timeout + "; gave up waiting"), () -> call, null);
    }

    /**
     * The blocking faces' wait ({@link Stages#awaitUninterruptibly}): the value of {@code call} (which is
     * bounded, so this ends), or its failure unwrapped, a checked one mapped as Lettuce's are. An interrupt
     * does not end the wait: the command was sent, and its answer (or the call timeout) tells what became of
     * it; the thread's interrupt status is set again on return.
     */
    public static <T> T await(CompletionStage<T> call, String subject, String operation) {
        return Stages.awaitUninterruptibly(call, cause -> RedisErrors.map(cause, subject, operation));
    }

    /** Closes the connection if fence-guard opened it. */
    public void close() {
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the Redis connection failed", e);
            }
        }
    }
}
