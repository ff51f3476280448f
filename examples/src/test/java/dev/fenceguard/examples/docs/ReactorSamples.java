package dev.fenceguard.examples.docs;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.idempotency.ResultCodec;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.leader.LeaderInfo;
import dev.fenceguard.core.leader.LeadershipListener;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.reactor.ReactiveIdempotencyStore;
import dev.fenceguard.reactor.ReactiveLeaderElection;
import dev.fenceguard.reactor.ReactiveLockClient;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/** The samples of the Javadoc of {@code dev.fenceguard.reactor}, with stand-ins for the application's reactive services. */
final class ReactorSamples {

    private ReactorSamples() {}

    /** An order as the samples' repository saves it. */
    record Order(long id, String status, FenceToken fence) {
        Order withFence(FenceToken fence) {
            return new Order(id, status, fence);
        }
    }

    /** A stand-in for a reactive repository: keeps what it saved. */
    static final class OrderRepository {
        final Map<Long, Order> saved = new ConcurrentHashMap<>();

        Mono<Order> save(Order order) {
            return Mono.fromSupplier(() -> {
                saved.put(order.id(), order);
                return order;
            });
        }
    }

    /** An invoice as the samples' service marks it paid. */
    record Invoice(long id, FenceToken fence) {}

    /** A stand-in for a reactive invoice service. */
    static final class Invoices {
        Mono<Invoice> markPaid(long id, FenceToken fence) {
            return Mono.fromSupplier(() -> new Invoice(id, fence));
        }
    }

    /** A stand-in for a reactive payment gateway: one charge per idempotency key, and a count of its calls. */
    static final class Gateway {
        final AtomicInteger calls = new AtomicInteger();

        Mono<String> charge(String key, String amount) {
            return Mono.fromSupplier(() -> "ch_" + calls.incrementAndGet() + " (" + amount + ")");
        }
    }

    /** What the lock client's class sample builds. */
    record LockClientMonos(Mono<Order> saved, Mono<Lease> lease) {}

    static LockClientMonos lockClient(LockBackend backend, OrderRepository orders, Order order) {
        // dev/fenceguard/reactor/ReactiveLockClient.java: class (begin)
        ReactiveLockClient locks = ReactiveLockClient.of(LockClient.builder(backend).build());

        Mono<Order> saved = locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> orders.save(order.withFence(lease.fence())));   // a Mono<Order>; renewed while it runs

        Mono<Lease> lease = locks.tryAcquire("reports:daily", Duration.ofMinutes(5));   // empty if held
        // dev/fenceguard/reactor/ReactiveLockClient.java: class (end)
        return new LockClientMonos(saved, lease);
    }

    static Mono<Invoice> withLock(ReactiveLockClient locks, Invoices invoices) {
        // dev/fenceguard/reactor/ReactiveLockClient.java: withLock (begin)
        Mono<Invoice> paid = locks.withLock("invoices:7", Duration.ofSeconds(30), Duration.ofSeconds(5),
                        lease -> invoices.markPaid(7, lease.fence()))        // your Mono<Invoice>
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("invoice 7 is busy")));
        // dev/fenceguard/reactor/ReactiveLockClient.java: withLock (end)
        return paid;
    }

    static Mono<IdempotencyResult<String>> idempotency(IdempotencyBackend idempotencyBackend, Lease lease, Gateway gateway,
            String key, String orderId, String amount) {
        // dev/fenceguard/reactor/ReactiveIdempotencyStore.java: call (begin)
        ReactiveIdempotencyStore charges = ReactiveIdempotencyStore.of(IdempotencyStore.builder(idempotencyBackend).build());
        Mono<IdempotencyResult<String>> charge = charges.call(key, Fingerprint.ofParts(orderId, amount), lease,
                ResultCodec.utf8(), () -> gateway.charge(key, amount));           // a Mono<String>, run at most once
        // dev/fenceguard/reactor/ReactiveIdempotencyStore.java: call (end)
        return charge;
    }

    /** What the leader election sample builds. */
    record ElectionMonos(ReactiveLeaderElection election, Mono<LeaderInfo> leader, Mono<Void> stopped) {}

    static ElectionMonos leaderElection(LockClient lockClient, LeadershipListener billing) {
        // dev/fenceguard/reactor/ReactiveLeaderElection.java: election (begin)
        ReactiveLeaderElection election = ReactiveLeaderElection.of(LeaderElection.builder(lockClient, "billing")
                .onEvents(billing)                         // your LeadershipListener: elected, revoked, with the term
                .build());
        election.start();
        Mono<LeaderInfo> leader = election.currentLeader();   // who leads now, and its term
        Mono<Void> stopped = election.stop();      // completes once the lock, if held, is released
        // dev/fenceguard/reactor/ReactiveLeaderElection.java: election (end)
        return new ElectionMonos(election, leader, stopped);
    }
}
