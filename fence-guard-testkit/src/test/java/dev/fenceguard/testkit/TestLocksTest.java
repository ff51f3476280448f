package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.core.LossCause;
import dev.fenceguard.core.TimeSource;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60) // a guard against a hang, not a timing assertion
class TestLocksTest {

    private final List<String> events = new CopyOnWriteArrayList<>();
    private final TestLocks locks = TestLocks.create(b -> b.onEvents(new LockListener() {
        @Override
        public void onLeaseLost(Lease lease, Throwable cause) {
            events.add("lost " + lease.key() + " fence " + lease.fence().value() + (cause == null ? "" : " after " + code(cause)));
        }

        @Override
        public void onRenewFailed(Lease lease, Throwable error) {
            events.add("renew failed " + lease.key() + " " + code(error));
        }
    }));

    private static String code(Throwable e) {
        return e instanceof FenceGuardException f ? f.code().name() : e.getClass().getSimpleName();
    }

    @Test
    void aLeaseHasTheChosenKeyAndFenceAndLivesUntilTheClockPassesItsTtl() {
        Lease lease = locks.lease("orders:42", 7);
        assertThat(lease.key().value()).isEqualTo("orders:42");
        assertThat(lease.fence().value()).isEqualTo(7);
        assertThat(lease.expiresAt()).isEqualTo(TestLocks.START.plus(TestLocks.DEFAULT_TTL));
        locks.time().advance(Duration.ofSeconds(29));
        assertThat(lease.isValid()).isTrue();
        locks.time().advance(Duration.ofSeconds(1));
        assertThat(lease.isValid()).isFalse();
        assertThat(locks.lease("orders:42", 8, Duration.ofMinutes(5)).fence().value()).as("the key is free again").isEqualTo(8);
        assertThat(locks.client().tryAcquire("orders:1", Duration.ofSeconds(1)).orElseThrow().fence().value())
                .as("other keys count from 1").isEqualTo(1);
    }

    @Test
    void badLeaseRequestsFailBeforeAnythingChanges() {
        assertThatThrownBy(() -> locks.lease("orders:1", 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence");
        assertThatThrownBy(() -> locks.lease("", 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock key");
        assertThatThrownBy(() -> locks.lease("orders:1", 5, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl must be at least 1 ms");
        Lease held = locks.lease("orders:1", 5);
        assertThatThrownBy(() -> locks.lease("orders:1", 9)).isInstanceOf(IllegalStateException.class)
                .hasMessage("lock 'orders:1' is held by a live lease of this TestLocks; close it first");
        held.close();
        assertThatThrownBy(() -> locks.lease("orders:1", 5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("fence 5 is not above the last fence this TestLocks issued for 'orders:1' (fences never go backwards)");
        assertThat(locks.lease("orders:1", 6).fence().value()).as("nothing moved on the refusals").isEqualTo(6);
    }

    @Test
    void expireLosesALeaseInsideWithLockAsProductionDoes() throws Exception {
        Optional<String> result = locks.client().withLock("orders:42", Duration.ofSeconds(30), Duration.ZERO, lease -> {
            locks.expire(lease);
            assertThat(lease.isValid()).isFalse();
            assertThat(lease.isLost()).isTrue();
            assertThat(events).containsExactly("lost orders:42 fence 1");
            Lease successor = locks.client().tryAcquire("orders:42", Duration.ofSeconds(30)).orElseThrow();
            assertThat(successor.fence().value()).as("the key was free for the next holder").isEqualTo(2);
            return "the work ended on its own";
        });
        assertThat(result).contains("the work ended on its own");
        locks.time().advance(Duration.ofMinutes(1));
        assertThat(events).as("no renewal after the loss").containsExactly("lost orders:42 fence 1");
    }

    @Test
    void expireLosesAMadeLeaseAndDoesNothingToAReleasedOne() {
        Lease lease = locks.lease("orders:42", 41);
        locks.expire(lease);
        assertThat(lease.isLost()).isTrue();
        assertThat(lease.whenLost().toCompletableFuture()).isCompletedWithValue(LossCause.TAKEN_OVER);
        Lease released = locks.lease("orders:42", 50);
        released.close();
        locks.expire(released);
        assertThat(released.isLost()).isFalse();
        assertThat(events).containsExactly("lost orders:42 fence 41");
        assertThatThrownBy(() -> locks.expire(TestLocks.create().lease("orders:42", 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was issued by another LockClient");
    }

    @Test
    void whileDisconnectedRenewalsFailAndLeasesAreLostAtTheirDeadline() {
        CompletableFuture<String> work = new CompletableFuture<>();
        AtomicReference<Lease> held = new AtomicReference<>();
        CompletableFuture<Optional<String>> result = locks.client().async()
                .withLock("orders:42", Duration.ofSeconds(30), Duration.ZERO, lease -> {
                    held.set(lease);
                    return work;
                }).toCompletableFuture();
        locks.disconnect();
        locks.time().advance(Duration.ofSeconds(10));
        assertThat(events).containsExactly("renew failed orders:42 UNAVAILABLE");
        locks.time().advance(Duration.ofSeconds(20));
        assertThat(events).last().isEqualTo("lost orders:42 fence 1 after UNAVAILABLE");
        assertThat(held.get().whenLost().toCompletableFuture()).isCompletedWithValue(LossCause.UNREACHABLE);
        assertThatThrownBy(() -> locks.client().tryAcquire("orders:42", Duration.ofSeconds(30)))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
        assertThatThrownBy(() -> locks.lease("orders:1", 1)).isInstanceOf(IllegalStateException.class)
                .hasMessage("lease needs a reachable backend: call reconnect() first");
        assertThatThrownBy(() -> locks.expire(null)).isInstanceOf(NullPointerException.class).hasMessage("lease");
        locks.reconnect();
        work.complete("done");
        assertThat(result.join()).contains("done");
        assertThat(locks.client().tryAcquire("orders:42", Duration.ofSeconds(30)).orElseThrow().fence().value())
                .as("the lock expired at the backend too").isEqualTo(2);
    }

    @Test
    void expireWhileDisconnectedSaysWhatToDo() {
        Lease lease = locks.lease("orders:42", 3);
        locks.disconnect();
        assertThatThrownBy(() -> locks.expire(lease)).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("expire needs a reachable backend: call reconnect() first");
        assertThat(lease.isValid()).as("unchanged").isTrue();
    }

    @Test
    void theClientAlwaysRunsOnTheManualClock() {
        TestLocks onSystemTime = TestLocks.create(b -> b.withTimeSource(TimeSource.system()));
        Lease lease = onSystemTime.lease("orders:42", 1);
        onSystemTime.time().advance(Duration.ofSeconds(31));
        assertThat(lease.isValid()).isFalse();
    }
}
