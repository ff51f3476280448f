package dev.fenceguard.examples.docs;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LeaseSet;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.reactor.ReactiveLockClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/** The samples of the lock client's asynchronous and Reactor faces (README.md, docs/async-and-bounds.md). */
final class LockFacesSamples {

    private static final Logger log = LoggerFactory.getLogger(LockFacesSamples.class);

    /** An order as the samples' services return it. */
    record Order(long id, String status, FenceToken fence) {}

    /** A stand-in for the application's own non-blocking service: it records what it was asked. */
    static final class OrderService {
        final ConcurrentMap<Long, Order> orders = new ConcurrentHashMap<>();

        CompletionStage<Order> markPaidAsync(long id, FenceToken fence) {
            Order paid = new Order(id, "paid", fence);
            orders.put(id, paid);
            return CompletableFuture.completedFuture(paid);
        }
    }

    /** A stand-in for a reactive repository. */
    static final class OrderRepository {
        final ConcurrentMap<Long, Order> orders = new ConcurrentHashMap<>();

        Mono<Order> markPaid(long id, FenceToken fence) {
            return Mono.fromSupplier(() -> {
                Order paid = new Order(id, "paid", fence);
                orders.put(id, paid);
                return paid;
            });
        }
    }

    private final LockClient locks;
    final OrderService orderService = new OrderService();
    final OrderRepository orderRepository = new OrderRepository();

    LockFacesSamples(LockClient locks) {
        this.locks = locks;
    }

    CompletionStage<Void> readmeAsync() {
        // README.md: async face (begin)
        AsyncLockClient async = locks.async();
        CompletionStage<Void> done = async.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                        lease -> orderService.markPaidAsync(42L, lease.fence()))   // your CompletionStage; the lease is
                .thenAccept(paid -> log.info("order 42: {}", paid));              // renewed until it completes; paid is
                                                                                  // empty if the lock was not had in 5 s
        // README.md: async face (end)
        return done;
    }

    Mono<Order> readmeReactor() {
        // README.md: reactor face (begin)
        ReactiveLockClient reactive = ReactiveLockClient.of(locks);
        Mono<Order> paid = reactive.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> orderRepository.markPaid(42L, lease.fence()));   // your Mono; renewed until it completes;
                                                                          // empty if the lock could not be had in 5 s
        // README.md: reactor face (end)
        return paid;
    }

    /** What the Reactor sample of docs/async-and-bounds.md builds; nothing runs until subscribed. */
    record ReactorMonos(Mono<Lease> daily, Mono<Lease> waited, Mono<Boolean> released, Mono<LeaseSet> both,
            Mono<Boolean> bothReleased, Mono<Order> paid) {}

    ReactorMonos asyncAndBoundsReactor() {
        // docs/async-and-bounds.md: reactor (begin)
        ReactiveLockClient reactive = ReactiveLockClient.of(locks);

        Mono<Lease> daily = reactive.tryAcquire("reports:daily", Duration.ofMinutes(5));        // empty if held
        Mono<Lease> waited = reactive.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5));
        Mono<Boolean> released = daily.flatMap(reactive::release);
        Mono<LeaseSet> both = reactive.acquireAll(List.of("a", "b"), Duration.ofSeconds(30), Duration.ofSeconds(5));
        Mono<Boolean> bothReleased = both.flatMap(reactive::release);                          // never LeaseSet.close() here

        Mono<Order> paid = reactive.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> orderRepository.markPaid(42L, lease.fence()));
        // docs/async-and-bounds.md: reactor (end)
        return new ReactorMonos(daily, waited, released, both, bothReleased, paid);
    }

    /** Whether the lock client holds no lock on {@code key} now (each sample gives back what it took). */
    boolean free(String key) {
        return locks.lookup(key).isEmpty();
    }
}
