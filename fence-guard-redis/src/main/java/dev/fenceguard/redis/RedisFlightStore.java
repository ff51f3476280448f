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
import io.lettuce.core.RedisException;
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
 * (standalone, Sentinel or Cluster), one Lua script per operation. Get it from
 * {@link FenceGuardRedis#flightStore()}: it shares that entry's connection and settings.
 *
 * <pre>{@code
 * try (FenceGuardRedis redis = FenceGuardRedis.builder(redisClient).build()) {
 *     Singleflight flights = Singleflight.builder(lockClient, redis.flightStore()).build();
 *     String rates = flights.run("rates:2026-11-23", Duration.ofSeconds(20), ResultCodec.utf8(),
 *             lease -> rateProvider.fetch());            // computed by one caller; the others get its result
 * }
 * }</pre>
 *
 * <p><b>Keys.</b> Flight {@code k} uses {@code <prefix>{<escaped k>}:flight} (the fence of the newest
 * flight begun; kept, so that a zombie is refused even after the result expired) and
 * {@code <prefix>{<escaped k>}:result} ({@code <fence>:<base64 of the result>}, with a {@code PX} of
 * the retention). Both share one hash tag, so every script touches one Cluster slot and declares both
 * in {@code KEYS}. Escaping is the lock backend's ({@code %}, braces), so distinct keys never meet.
 * The prefix is {@link FenceGuardRedis.Builder#withFlightKeyPrefix}, default {@code fg-sf:}; the fenced
 * writes of the same entry refuse keys under it.
 *
 * <p><b>Notification.</b> A publish that applies, and a wake, {@code PUBLISH} the flight key on
 * {@code <prefix>done} inside their script. Waiters listen on one pub/sub connection per entry, opened
 * from the entry's client on the first wait ({@code SUBSCRIBE}; on a Cluster, messages reach every node).
 * Lettuce resubscribes after a reconnect; a message lost meanwhile costs a waiter one poll interval. An
 * entry built from a connection has no client to open a pub/sub connection with (a Lettuce connection
 * does not expose the client it came from): there every watch fails with {@code UNAVAILABLE} and waiters
 * poll, which is correct but costs each waiter up to one poll interval of the
 * {@link dev.fenceguard.core.singleflight.Singleflight}. Build the entry from the client to be woken at once.
 *
 * <p>Calls hold no thread; the {@code Singleflight} ends a caller's wait at its call timeout. Closing the
 * {@link FenceGuardRedis} closes the pub/sub connection. Thread-safe.
 *
 * @since 0.1
 */
public final class RedisFlightStore implements FlightStore {

    private static final Script READ = Script.load("sf_read");
    private static final Script BEGIN = Script.load("sf_begin");
    private static final Script PUBLISH = Script.load("sf_publish");
    private static final Script WAKE = Script.load("sf_wake");

    private final RedisHandle redis;
    /** Null when the entry was built from a connection: no client to open a pub/sub connection with. */
    private final Supplier<StatefulRedisPubSubConnection<String, String>> connectPubSub;
    private final String prefix;
    private final String channel;
    private final FlightWatchers watchers = new FlightWatchers();
    private final Object guard = new Object();
    private CompletableFuture<StatefulRedisPubSubConnection<String, String>> subscribed;
    private boolean closed;

    RedisFlightStore(RedisHandle redis, Supplier<StatefulRedisPubSubConnection<String, String>> connectPubSub, String prefix) {
        this.redis = redis;
        this.connectPubSub = connectPubSub;
        this.prefix = prefix;
        this.channel = prefix + "done";
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
        return redis.multi(READ, key.value(), new String[] {resultKey(key)})
                .thenApply(reply -> reply.isEmpty() ? Optional.empty() : Optional.of(decode(key, (String) reply.get(0))));
    }

    @Override
    public CompletionStage<FlightStart> begin(LockKey key, long fence, Duration timeout) {
        return redis.multi(BEGIN, key.value(), keys(key), Long.toString(fence))
                .thenApply(reply -> switch ((String) reply.get(0)) {
                    case "retained" -> new FlightStart.Retained(decode(key, (String) reply.get(1)));
                    case "superseded" -> new FlightStart.Superseded(Long.parseLong((String) reply.get(1)));
                    case "started" -> new FlightStart.Started();
                    default -> throw new FenceGuardException(ErrorCode.INTERNAL, key.value(), "unexpected begin reply " + reply.get(0));
                });
    }

    @Override
    public CompletionStage<WriteOutcome> publish(LockKey key, long fence, byte[] result, Duration retention, Duration timeout) {
        String resource = "redis key " + resultKey(key);
        String value = fence + ":" + Base64.getEncoder().encodeToString(result);
        return redis.multi(PUBLISH, key.value(), keys(key), Long.toString(fence), value,
                Long.toString(retention.toMillis()), channel, key.value())
                .thenApply(reply -> ((Long) reply.get(0)) == 1L ? new WriteOutcome.Applied(resource, fence)
                        : new WriteOutcome.Stale(resource, fence, Long.parseLong((String) reply.get(1)), FencePolicy.SAME_OR_NEWER));
    }

    @Override
    public CompletionStage<Void> wake(LockKey key, Duration timeout) {
        return redis.multi(WAKE, key.value(), new String[0], channel, key.value()).thenApply(reply -> null);
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
                return CompletableFuture.failedFuture(FlightWatchers.storeClosed());
            }
            if (connectPubSub == null) {
                return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.UNAVAILABLE, null,
                        "FenceGuardRedis was built from a connection, so it cannot open a pub/sub connection; waiters poll"));
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

    /** Closes the pub/sub connection this store opened; later waits poll. The entry closes the script connection. */
    void close() {
        CompletableFuture<StatefulRedisPubSubConnection<String, String>> sub;
        synchronized (guard) {
            closed = true;
            sub = subscribed;
            subscribed = null;
        }
        if (sub != null) {
            sub.thenAccept(StatefulRedisPubSubConnection::closeAsync);
        }
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
}
