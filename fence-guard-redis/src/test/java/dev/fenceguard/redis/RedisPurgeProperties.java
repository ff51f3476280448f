package dev.fenceguard.redis;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.testkit.FencePurgeProperties;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The testkit's purge template on Redis: {@link FencedRedis#set}, {@code delete} and {@code claim} of a
 * {@link FenceGuardRedis} built with a horizon of an hour and a clock margin of 5 minutes, the store's
 * clock Redis's {@code TIME}. Redis removes on its own ({@link #removesOnItsOwn()}): a tombstone carries a
 * {@code PXAT} expiry at horizon plus margin past its fence's tick, so there is no purge job and
 * {@link #purge} only waits the 3 ms of Redis's clock by which an expiry may trail the purge horizon. A planted tombstone gets the expiry a fenced delete would have given it,
 * which for one below the purge horizon has passed already: Redis drops it at once, as it would have
 * dropped the real one. Records are a string key (data) and its fence key; each run has a key prefix of
 * its own, deleted afterwards.
 */
class RedisPurgeProperties extends FencePurgeProperties {

    static final Duration HORIZON = Duration.ofHours(1);
    static final Duration MARGIN = Duration.ofMinutes(5);
    private static final String P = TestRedis.keyPrefix("purgeprops");

    private static FenceGuardRedis withHorizon;
    private static FenceGuardRedis withoutHorizon;
    private static StatefulRedisConnection<String, String> adminConnection;
    static RedisCommands<String, String> admin;

    @BeforeContainer
    static void open() {
        withHorizon = RedisSupport.under(P).withHorizon(HORIZON).withClockMargin(MARGIN).build();
        // For the broken variant of RedisPurgeTemplateTest only: the same writes with no rule 1 (and no expiry).
        withoutHorizon = RedisSupport.under(P + "nh-").build();
        adminConnection = RedisSupport.shared().connect();
        admin = adminConnection.sync();
    }

    @AfterContainer
    static void close() {
        RedisSupport.deleteKeys(P);
        adminConnection.close();
        withHorizon.close();
        withoutHorizon.close();
    }

    /** The writer under test. */
    FencedRedis writes() {
        return withHorizon.fencedWrites();
    }

    /** The writer of the broken variant: no horizon. */
    static FencedRedis writesWithoutHorizon() {
        return withoutHorizon.fencedWrites();
    }

    /** The data key of the template's {@code key}, under this run's prefix. */
    static String data(String key) {
        return P + "data:" + key;
    }

    @Override
    protected Duration horizon() {
        return HORIZON;
    }

    @Override
    protected Duration clockMargin() {
        return MARGIN;
    }

    @Override
    protected boolean removesOnItsOwn() {
        return true;
    }

    @Override
    protected Instant storeClock() {
        List<String> t = admin.time();
        return Instant.ofEpochSecond(Long.parseLong(t.get(0)), Long.parseLong(t.get(1)) * 1000);
    }

    @Override
    protected WriteOutcome write(String key, FenceToken fence, Pause pause) {
        return writes().set(data(key), fence, "v" + fence.value());
    }

    @Override
    protected WriteOutcome delete(String key, FenceToken fence, Pause pause) {
        return writes().delete(data(key), fence);
    }

    @Override
    protected WriteOutcome claim(String key, FenceToken fence, Pause pause) {
        return writes().claim(data(key), fence);
    }

    /**
     * Each tombstone's own expiry is the purge (docs/fence-lifecycle.md), so this removes nothing: it waits
     * until Redis's clock is 3 ms past where it was, no more. A tombstone below the purge horizon the template
     * read before calling this expires at most 2 ms later (its expiry is the first millisecond above its tick,
     * plus horizon and margin rounded up to a millisecond, and Redis drops a key once its clock is past the
     * expiry): a tombstone may outlive the rule by that much, never go before it. Without the wait, one just
     * below the purge horizon would still be there after the purge, as Redis keeps it.
     */
    @Override
    protected void purge(Pause pause) {
        long until = storeClock().toEpochMilli() + 3;
        long give = System.nanoTime() + writerGuard().toNanos();
        while (storeClock().toEpochMilli() < until) {
            if (System.nanoTime() > give) {
                throw new IllegalStateException("Redis's clock did not pass " + until + " ms within " + writerGuard());
            }
        }
    }

    /** The fence key holds the fence; the data key, when present, makes the record live. */
    @Override
    protected Optional<FenceRecord> record(String key) {
        String d = data(key);
        String fence = admin.get(writes().fenceKeyOf(d));
        boolean live = admin.exists(d) == 1;
        if (fence == null) {
            if (live) {
                throw new IllegalStateException(d + " holds data but its fence key " + writes().fenceKeyOf(d) + " is gone");
            }
            return Optional.empty();
        }
        return Optional.of(new FenceRecord(Long.parseLong(fence), live));
    }

    /** A live record without expiry; a tombstone with the expiry a fenced delete gives it (see horizon.lua). */
    @Override
    protected void plant(String key, FenceRecord record) {
        String d = data(key);
        String fenceKey = writes().fenceKeyOf(d);
        if (record.live()) {
            admin.set(d, "planted");
            admin.set(fenceKey, Long.toString(record.fence()));
        } else {
            admin.set(fenceKey, Long.toString(record.fence()), SetArgs.Builder.pxAt(expiryOf(record.fence())));
        }
    }

    /** When a tombstone holding {@code fence} expires: the first millisecond above its tick, plus horizon and margin. */
    static long expiryOf(long fence) {
        return ClockFloor.EPOCH_MILLIS + fence / ClockFloor.PER_MILLISECOND + 1 + HORIZON.toMillis() + MARGIN.toMillis();
    }
}
