// fence-guard-testkit/README.md: runnable example (begin)
package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.testkit.TestLocks;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class OrderShippingTest {

    /** The code under test: prints an order's parcel labels under the order's lock. */
    static final class Shipping {
        final LockClient locks;
        final Map<String, Long> labels = new ConcurrentHashMap<>(); // parcel -> fence of the lease that printed it
        Consumer<String> beforeEachParcel = parcel -> {};

        Shipping(LockClient locks) {
            this.locks = locks;
        }

        /** Prints every label while the lease is valid; returns how many it printed. */
        int ship(String order, List<String> parcels) throws InterruptedException {
            return locks.withLock("orders:" + order, Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
                int printed = 0;
                for (String parcel : parcels) {
                    beforeEachParcel.accept(parcel);
                    if (!lease.isValid()) {
                        break; // lost: whoever holds the lock now finishes the job
                    }
                    printLabel(order, parcel);
                    printed++;
                }
                return printed;
            }).orElse(0);
        }

        /** Must run only under the order's lock: it stamps the label with the lease's fence. */
        void printLabel(String order, String parcel) {
            Lease lease = LockContext.requireHeld("orders:" + order);
            labels.put(parcel, lease.fence().value());
        }

        static String auditLine(Lease lease) {
            return lease.key() + " fence " + lease.fence().value();
        }
    }

    @Test
    void codeThatTakesALeaseGetsOneWithTheFenceItNeeds() {
        Lease lease = TestLocks.create().lease("orders:42", 7);
        assertThat(Shipping.auditLine(lease)).isEqualTo("orders:42 fence 7");
    }

    @Test
    void labelsArePrintedOnlyUnderTheOrdersLock() throws Exception {
        Shipping shipping = new Shipping(TestLocks.create().client());
        assertThatThrownBy(() -> shipping.printLabel("42", "p1")).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("this code must run inside withLock on 'orders:42'");
        assertThat(shipping.ship("42", List.of("p1", "p2"))).isEqualTo(2);
        assertThat(shipping.labels).containsEntry("p1", 1L).containsEntry("p2", 1L);
    }

    @Test
    void shippingStopsWhenTheLeaseIsLostAndTheListenerHears() throws Exception {
        List<String> lost = new CopyOnWriteArrayList<>();
        TestLocks locks = TestLocks.create(b -> b.onEvents(new LockListener() {
            @Override
            public void onLeaseLost(Lease lease, Throwable cause) {
                lost.add(lease.key().value());
            }
        }));
        Shipping shipping = new Shipping(locks.client());
        shipping.beforeEachParcel = parcel -> {
            if (parcel.equals("p2")) {
                locks.expire(LockContext.current().orElseThrow()); // as if the lock expired at the server
            }
        };
        assertThat(shipping.ship("42", List.of("p1", "p2", "p3"))).isEqualTo(1);
        assertThat(lost).containsExactly("orders:42");
    }

    @Test
    void theLeaseIsRenewedWhileTheWorkOutlastsItsTtl() throws Exception {
        TestLocks locks = TestLocks.create();
        Shipping shipping = new Shipping(locks.client());
        shipping.beforeEachParcel = parcel -> locks.time().advance(Duration.ofSeconds(20)); // a slow printer
        assertThat(shipping.ship("42", List.of("p1", "p2", "p3"))).as("60 s of work on a 30 s lease").isEqualTo(3);
    }
}
// fence-guard-testkit/README.md: runnable example (end)
