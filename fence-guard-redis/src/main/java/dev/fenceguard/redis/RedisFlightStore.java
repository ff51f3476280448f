package dev.fenceguard.redis;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.FlightWatchers;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.redis.internal.RedisErrors;
import dev.fenceguard.redis.internal.RedisHandle;
import dev.fenceguard.redis.internal.RedisKeys;
import dev.fenceguard.redis.internal.Script;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The {@link FlightStore} of {@link dev.fenceguard.core.singleflight.Singleflight} on Redis
 * (standalone, Sentinel or Cluster), one Lua script per operation.
 *
 * <pre>{@code
 * try (RedisFlightStore store = RedisFlightStore.builder(redisClient).build()) {
 *     Singleflight flights = Singleflight.builder(lockClient, store).build();
 *     ...
 * }
 * }</pre>
 *
 * <p><b>Keys.</b> Flight {@code k} uses {@code <prefix>{<escaped k>}:flight} (the fence of the newest
 * flight begun; kept, so that a zombie is refused even after the result expired) and
 * {@code <prefix>{<escaped k>}:result} ({@code <fence>:<base64 of the result>}, with a {@code PX} of
 * the retention). Both share one hash tag, so every script touches one Cluster slot and declares both
 * in {@code KEYS}. Escaping is the lock backend's ({@code %}, braces), so distinct keys never meet.
 * Default prefix {@code fg-sf:}; it must differ from the lock backend's.
 *
 * <p><b>Notification.</b> A publish that applies, and a wake, {@code PUBLISH} the flight key on
 * {@code <prefix>done} inside their script. Waiters listen on one pub/sub connection per store instance,
 * opened on the first wait ({@code SUBSCRIBE}; on a Cluster, messages reach every node). Lettuce
 * resubscribes after a reconnect; a message lost meanwhile costs a waiter one poll interval.
 *
 * <p>Calls are bounded by their timeout without holding a thread. {@link #close()} closes the
 * connections this store opened. Thread-safe.
 *
 * @since 0.3
 */
public final class RedisFlightStore implements FlightStore, AutoCloseable {

    private static final Script READ = Script.load("sf_read");
    private static final Script BEGIN = Script.load("sf_begin");
    private static final Script PUBLISH = Script.load("sf_publish");
    private static final Script WAKE = Script.load("sf_wake");

    private final RedisHandle redis;
    private final Supplier<StatefulRedisPubSubConnection<String, String>> connectPubSub;
    private final String prefix;
    private final String channel;
    private final FlightWatchers watchers = new FlightWatchers();
    private final Object guard = new Object();
    private CompletableFuture<StatefulRedisPubSubConnection<String, String>> subscribed;
    private boolean closed;

    private RedisFlightStore(Builder b, RedisHandle redis) {
        this.redis = redis;
        this.connectPubSub = b.connectPubSub;
        this.prefix = b.prefix;
        this.channel = b.prefix + "done";
    }

    /**
     * On a standalone or Sentinel {@link RedisClient}: {@link Builder#build()} opens one connection for
     * the scripts; the first wait opens one pub/sub connection.
     *
     * @throws NullPointerException if {@code client} is null
     */
    public static Builder builder(RedisClient client) {
        Objects.requireNonNull(client, "client");
        return new Builder(() -> RedisHandle.of(client), client::connectPubSub);
    }

    /**
     * On a {@link RedisClusterClient}: as for a standalone client, with a Cluster connection and a
     * Cluster pub/sub connection.
     *
     * @throws NullPointerException if {@code client} is null
     */
    public static Builder builder(RedisClusterClient client) {
        Objects.requireNonNull(client, "client");
        return new Builder(() -> RedisHandle.of(client), client::connectPubSub);
    }

    @Override
    public String name() {
        return "redis";
    }

    /** The pub/sub channel of this store's notifications. */
    public String channel() {
        return channel;
    }

    @Override
    public CompletionStage<Optional<FlightResult>> read(LockKey key, Duration timeout) {
        CompletableFuture<Optional<FlightResult>> call = redis.multi(READ, key.value(), new String[] {resultKey(key)})
                .thenApply(reply -> reply.isEmpty() ? Optional.empty() : Optional.of(decode(key, (String) reply.get(0))));
        return RedisHandle.bounded(call, timeout, key.value(), "singleflight read", null);
    }

    @Override
    public CompletionStage<FlightStart> begin(LockKey key, long fence, Duration timeout) {
        CompletableFuture<FlightStart> call = redis.multi(BEGIN, key.value(), keys(key), Long.toString(fence))
                .thenApply(reply -> switch ((String) reply.get(0)) {
                    case "retained" -> new FlightStart.Retained(decode(key, (String) reply.get(1)));
                    case "superseded" -> new FlightStart.Superseded(Long.parseLong((String) reply.get(1)));
                    case "started" -> new FlightStart.Started();
                    default -> throw new FenceGuardException(ErrorCode.INTERNAL, key.value(), "unexpected begin reply " + reply.get(0));
                });
        return RedisHandle.bounded(call, timeout, key.value(), "singleflight begin", null);
    }

    @Override
    public CompletionStage<WriteOutcome> publish(LockKey key, long fence, byte[] result, Duration retention, Duration timeout) {
        String resource = "redis key " + resultKey(key);
        String value = fence + ":" + Base64.getEncoder().encodeToString(result);
        CompletableFuture<WriteOutcome> call = redis.multi(PUBLISH, key.value(), keys(key), Long.toString(fence), value,
                Long.toString(retention.toMillis()), channel, key.value())
                .thenApply(reply -> ((Long) reply.get(0)) == 1L ? new WriteOutcome.Applied(resource, fence)
                        : new WriteOutcome.Stale(resource, fence, Long.parseLong((String) reply.get(1)), FencePolicy.SAME_OR_NEWER));
        return RedisHandle.bounded(call, timeout, key.value(), "singleflight publish", null);
    }

    @Override
    public CompletionStage<Void> wake(LockKey key, Duration timeout) {
        CompletableFuture<Void> call = redis.multi(WAKE, key.value(), new String[0], channel, key.value()).thenApply(reply -> null);
        return RedisHandle.bounded(call, timeout, key.value(), "singleflight wake", null);
    }

    @Override
    public CompletionStage<FlightWatch> watch(LockKey key, Runnable onChange) {
        Objects.requireNonNull(onChange, "onChange");
        FlightWatch watch = watchers.add(key.value(), onChange);
        return subscription().handle((c, error) -> {
            if (error != null) {
                watch.close();
                throw RedisErrors.map(error, key.value(), "SUBSCRIBE " + channel);
            }
            return watch;
        });
    }

    private CompletableFuture<StatefulRedisPubSubConnection<String, String>> subscription() {
        CompletableFuture<StatefulRedisPubSubConnection<String, String>> start;
        synchronized (guard) {
            if (closed) {
                return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.UNAVAILABLE, null,
                        "the flight store is closed; waiters poll"));
            }
            if (subscribed != null && !subscribed.isCompletedExceptionally()) {
                return subscribed;
            }
            start = new CompletableFuture<>();
            subscribed = start;
        }
        // Connecting blocks (once per store): not on the caller's thread, which may be an event loop.
        Thread.ofVirtual().name("fence-guard-subscribe").start(() -> {
            try {
                StatefulRedisPubSubConnection<String, String> c = connectPubSub.get();
                c.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String ch, String message) {
                        if (channel.equals(ch)) {
                            watchers.tell(message);
                        }
                    }
                });
                c.async().subscribe(channel).whenComplete((v, error) -> {
                    if (error != null) {
                        c.closeAsync();
                        start.completeExceptionally(error);
                    } else if (!start.complete(c)) {
                        c.closeAsync();
                    }
                });
            } catch (RedisException e) {
                start.completeExceptionally(e);
            }
        });
        return start;
    }

    /** Closes the connections this store opened; later waits poll. */
    @Override
    public void close() {
        CompletableFuture<StatefulRedisPubSubConnection<String, String>> sub;
        synchronized (guard) {
            closed = true;
            sub = subscribed;
            subscribed = null;
        }
        if (sub != null) {
            sub.thenAccept(StatefulRedisPubSubConnection::closeAsync);
        }
        redis.close();
    }

    @Override
    public String toString() {
        return "RedisFlightStore[" + redis.topology() + ", prefix '" + prefix + "']";
    }

    private String[] keys(LockKey key) {
        String tag = RedisKeys.tag(prefix, key);
        return new String[] {tag + ":flight", tag + ":result"};
    }

    private String resultKey(LockKey key) {
        return RedisKeys.tag(prefix, key) + ":result";
    }

    private static FlightResult decode(LockKey key, String stored) {
        int colon = stored.indexOf(':');
        try {
            return new FlightResult(Long.parseLong(stored.substring(0, colon)), Base64.getDecoder().decode(stored.substring(colon + 1)));
        } catch (RuntimeException e) {
            throw new FenceGuardException(ErrorCode.INTERNAL, key.value(), "the stored result is not '<fence>:<base64>'");
        }
    }

    /** Settings of a {@link RedisFlightStore}. Not thread-safe; {@link #build()} copies them. */
    public static final class Builder {
        private final Supplier<RedisHandle> connect;
        private final Supplier<StatefulRedisPubSubConnection<String, String>> connectPubSub;
        private String prefix = "fg-sf:";

        private Builder(Supplier<RedisHandle> connect, Supplier<StatefulRedisPubSubConnection<String, String>> connectPubSub) {
            this.connect = connect;
            this.connectPubSub = connectPubSub;
        }

        /**
         * Prefix of every key and of the channel; default {@code fg-sf:}. Keep it apart from the lock
         * backend's prefix and from resource keys of fenced writes.
         *
         * @throws IllegalArgumentException if it is null, contains a brace, NUL or an unpaired surrogate, or is longer than 64 characters
         */
        public Builder withKeyPrefix(String prefix) {
            this.prefix = RedisKeys.requirePrefix(prefix);
            return this;
        }

        /**
         * Connects (the scripts' connection; pub/sub waits for the first wait).
         *
         * @throws FenceGuardException UNAVAILABLE or AUTH if the server cannot be reached or refuses the client
         */
        public RedisFlightStore build() {
            RedisHandle redis;
            try {
                redis = connect.get();
            } catch (RedisException e) {
                throw RedisErrors.map(e, null, "connect");
            }
            return new RedisFlightStore(this, redis);
        }
    }
}
