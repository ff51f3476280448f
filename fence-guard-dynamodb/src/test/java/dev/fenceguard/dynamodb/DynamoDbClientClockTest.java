package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.testkit.ManualTimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * Expiry by the client's clock: two backends on one lock table, each with a clock of its own that the
 * test sets by hand, show the skew allowance at work and fences rising whatever the clocks say.
 */
class DynamoDbClientClockTest {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    private static final String TABLE = Dynamo.withNewLockTable(CLIENT, "clock").build().lockBackend().table();
    private static final Duration TTL = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Instant T0 = Instant.parse("2026-06-01T00:00:00Z");

    private static DynamoDbLockBackend backend(ManualTimeSource clock, Duration skew, FenceStrategy strategy) {
        return FenceGuardDynamoDb.builder(CLIENT).withLockTable(TABLE).withClockSkewAllowance(skew).withFenceStrategy(strategy)
                .withTimeSource(clock).build().lockBackend();
    }

    private static LockKey key() {
        return LockKey.of("clock:" + UUID.randomUUID());
    }

    private static Optional<Grant> acquire(DynamoDbLockBackend b, LockKey key, LockId id) {
        return b.tryAcquire(key, id, TTL, WAIT).toCompletableFuture().join();
    }

    @Test
    void anExpiredLeaseIsTakenOverOnlyOnceItsExpiryIsTheSkewAllowanceBehindTheAcquirersClock() {
        ManualTimeSource holderClock = new ManualTimeSource(T0);
        ManualTimeSource acquirerClock = new ManualTimeSource(T0);
        DynamoDbLockBackend holder = backend(holderClock, Duration.ofSeconds(2), FenceStrategy.DENSE);
        DynamoDbLockBackend acquirer = backend(acquirerClock, Duration.ofSeconds(2), FenceStrategy.DENSE);
        LockKey key = key();
        Grant first = acquire(holder, key, LockId.random()).orElseThrow();
        assertThat(first.expiresAt()).isEqualTo(T0.plus(TTL));

        acquirerClock.advance(TTL.plusSeconds(1)); // expired by 1 s on the acquirer's clock, within the 2 s allowance
        assertThat(acquire(acquirer, key, LockId.random())).as("inside the skew allowance").isEmpty();
        acquirerClock.advance(Duration.ofSeconds(1)); // now exactly 2 s past the expiry
        Grant second = acquire(acquirer, key, LockId.random()).orElseThrow();
        assertThat(second.fence()).isGreaterThan(first.fence());
    }

    @Test
    void aHolderExtendsAndReleasesByItsOwnClockWithNoAllowance() {
        ManualTimeSource clock = new ManualTimeSource(T0);
        DynamoDbLockBackend b = backend(clock, Duration.ofSeconds(5), FenceStrategy.DENSE);
        LockKey key = key();
        LockId id = LockId.random();
        acquire(b, key, id).orElseThrow();
        clock.advance(TTL.minusMillis(1));
        assertThat(b.extend(key, id, TTL, WAIT).toCompletableFuture().join()).contains(T0.plus(TTL).minusMillis(1).plus(TTL));
        clock.advance(TTL);
        assertThat(b.extend(key, id, TTL, WAIT).toCompletableFuture().join()).as("expired by its own clock: not revived").isEmpty();
        assertThat(b.release(key, id, WAIT).toCompletableFuture().join()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(FenceStrategy.class)
    void fencesRiseWhenAClientWhoseClockIsAnHourBehindTakesOver(FenceStrategy strategy) {
        ManualTimeSource ahead = new ManualTimeSource(T0.plus(Duration.ofHours(1)));
        ManualTimeSource behind = new ManualTimeSource(T0);
        DynamoDbLockBackend fast = backend(ahead, Duration.ZERO, strategy);
        DynamoDbLockBackend slow = backend(behind, Duration.ZERO, strategy);
        LockKey key = key();
        LockId a = LockId.random();
        Grant first = acquire(fast, key, a).orElseThrow();
        assertThat(fast.release(key, a, WAIT).toCompletableFuture().join()).isTrue();
        // the slow client's floor is an hour below the fence issued: the counter, not the clock, decides
        Grant second = acquire(slow, key, LockId.random()).orElseThrow();
        assertThat(second.fence()).isGreaterThan(first.fence());
    }

    @Test
    void clockFlooredFencesStartAboveTheFloorOfTheClientsClock() {
        ManualTimeSource clock = new ManualTimeSource(T0);
        Grant grant = acquire(backend(clock, Duration.ZERO, FenceStrategy.CLOCK_FLOORED), key(), LockId.random()).orElseThrow();
        assertThat(grant.fence()).isEqualTo(dev.fenceguard.core.internal.ClockFloor.floorAt(T0.toEpochMilli()) + 1);
    }
}
