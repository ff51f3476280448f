package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.core.LossCause;
import dev.fenceguard.testkit.TestLocks;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Runs the samples of fence-guard-testkit/README.md that are code in a test, and checks what the README
 * says of them. (Its runnable example is a test of the testkit itself: {@code com.example.orders.OrderShippingTest}.)
 */
class TestkitReadmeSamplesTest {

    @Test
    void aLeaseWithAChosenKeyAndFenceIsRealAndStaysValid() {
        // fence-guard-testkit/README.md: lease (begin)
        Lease lease = TestLocks.create().lease("orders:42", 7);   // key orders:42, fence 7, TTL 30 s
        // fence-guard-testkit/README.md: lease (end)
        assertThat(lease.key().value()).isEqualTo("orders:42");
        assertThat(lease.fence().value()).isEqualTo(7);
        assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(lease.remaining()).as("the clock never moves unless the test moves it").isEqualTo(Duration.ofSeconds(30));
        assertThat(lease.isValid()).isTrue();
        lease.close();
        assertThat(lease.isValid()).as("close() behaves as in production").isFalse();
    }

    @Test
    void theManualClockClientTimeExpireAndDisconnectDoWhatTheirCommentsSay() {
        // fence-guard-testkit/README.md: manual clock (begin)
        List<String> lost = new CopyOnWriteArrayList<>();
        LockListener myListener = new LockListener() {
            @Override
            public void onLeaseLost(Lease lease, Throwable cause) {
                lost.add(lease.key() + " lost, cause " + cause);
            }
        };
        TestLocks locks = TestLocks.create(b -> b.onEvents(myListener));   // any LockClient.Builder settings
        LockClient client = locks.client();                                 // the production LockClient: hand it to your code
        Lease lease = locks.lease("orders:42", 7);                          // or one from acquire, or LockContext.current()
        locks.time().advance(Duration.ofSeconds(20));                       // renewals, backoff and deadlines run now
        locks.expire(lease);                                                // lost now, as when it expires at the server
        locks.disconnect();                                                 // every backend call fails: UNAVAILABLE
        // fence-guard-testkit/README.md: manual clock (end)
        assertThat(locks.time().now()).isEqualTo(TestLocks.START.plusSeconds(20));
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.isLost()).isTrue();
        assertThat(lease.whenLost().toCompletableFuture()).isCompletedWithValue(LossCause.TAKEN_OVER);
        assertThat(lost).as("the listener set through the builder hears the loss, with a null cause").containsExactly(
                "orders:42 lost, cause null");
        assertThatThrownBy(() -> client.tryAcquire("orders:42", Duration.ofSeconds(30)))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
        locks.reconnect();
        assertThat(client.tryAcquire("orders:42", Duration.ofSeconds(30)).orElseThrow().fence().value())
                .as("the backend let the expired lease go: the key is taken again with a greater fence").isEqualTo(8);
    }

    /** The code of the requireHeld sample: prints labels stamped with the fence of the lease it runs under. */
    static final class LabelPrinter {
        // fence-guard-testkit/README.md: require held (begin)
        final Map<String, FenceToken> labels = new ConcurrentHashMap<>();   // parcel -> fence of the lease that printed it

        void printLabel(String order, String parcel) {
            Lease lease = LockContext.requireHeld("orders:" + order);   // IllegalStateException outside withLock
            labels.put(parcel, lease.fence());
        }
        // fence-guard-testkit/README.md: require held (end)
    }

    @Test
    void requireHeldLetsTheCodeRunOnlyInsideAValidWithLockOnItsKey() throws Exception {
        TestLocks locks = TestLocks.create();
        LabelPrinter printer = new LabelPrinter();
        String thread = Thread.currentThread().getName();

        assertThatThrownBy(() -> printer.printLabel("42", "p1")).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("this code must run inside withLock on 'orders:42', but no withLock runs on thread '"
                        + thread + "'");
        long fence = locks.client().withLock("orders:42", Duration.ofSeconds(30), Duration.ZERO, lease -> {
            printer.printLabel("42", "p1");
            return lease.fence().value();
        }).orElseThrow();
        assertThat(printer.labels).containsOnly(Map.entry("p1", FenceToken.of(fence)));

        locks.client().withLock("orders:7", Duration.ofSeconds(30), Duration.ZERO, lease -> {
            assertThatThrownBy(() -> printer.printLabel("42", "p2")).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("this code must run inside withLock on 'orders:42', but only withLock on 'orders:7' runs");
            locks.expire(LockContext.current().orElseThrow());
            assertThatThrownBy(() -> printer.printLabel("7", "p2")).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("the lease on 'orders:7' is no longer valid (lost");
            return 0;
        });
        assertThat(printer.labels).as("nothing printed outside a valid lease").containsOnlyKeys("p1");
    }
}
