package dev.fenceguard.testkit;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;

/**
 * The backend contract as a jqwik stateful property: random chains of acquire, release, extend,
 * let-expire and lookup over two keys and three clients run against the backend under test
 * <em>and</em> against the {@link InMemoryLockBackend} reference model, with the same lock ids. Every
 * answer must agree with the model; on top, fences must strictly increase per key and extend must keep
 * the fence. A failure shows the shrunk chain and the timeline of what each side answered.
 *
 * <p>The chains run through a {@link LockClient} on the backend, half of them through its blocking
 * face and half through its asynchronous face (two properties, one per {@link Face}): a client's
 * acquire, release, extend and lookup go through the face, with the lease it got; a client that holds
 * no lease on the key acts as a stranger, calling the backend directly with a lock id of its own.
 *
 * <pre>{@code
 * class PostgresBackendProperties extends LockBackendProperties {
 *     protected LockBackend backend() { return postgresBackend; }
 * }
 * }</pre>
 *
 * <p>Leases live 30 s (no chain runs that long); "let expire" shortens the holder's lease to
 * {@link #shortTtl()} and waits it out plus {@link #expirySlack()} in real time, while the model's
 * clock jumps. Each chain uses fresh keys, so the backend can be shared and keep state.
 *
 * @since 0.1
 */
public abstract class LockBackendProperties {

    private static final Duration LONG = Duration.ofSeconds(30);

    /** The backend under test; called once per chain. */
    protected abstract LockBackend backend();

    /** The lease the let-expire action shortens a holder to; default 60 ms. */
    protected Duration shortTtl() {
        return Duration.ofMillis(60);
    }

    /** Extra real time waited after {@link #shortTtl()} (clock skew allowances, server lag); default 60 ms. */
    protected Duration expirySlack() {
        return Duration.ofMillis(60);
    }

    /** Actions per chain; default 25. */
    protected int maxActions() {
        return 25;
    }

    @Property(tries = 10)
    void theBlockingClientAgreesWithTheReferenceModel(@ForAll("blockingChains") ActionChain<World> chain) {
        chain.run();
    }

    @Property(tries = 10)
    void theAsyncClientAgreesWithTheReferenceModel(@ForAll("asyncChains") ActionChain<World> chain) {
        chain.run();
    }

    @Provide
    Arbitrary<ActionChain<World>> blockingChains() {
        return chains(Face.BLOCKING);
    }

    @Provide
    Arbitrary<ActionChain<World>> asyncChains() {
        return chains(Face.ASYNC);
    }

    private Arbitrary<ActionChain<World>> chains(Face face) {
        return ActionChain.<World>startWith(() -> new World(BlockingBackend.of(backend()), face))
                .withAction(3, new Acquire())
                .withAction(2, new Release())
                .withAction(2, new Extend())
                .withAction(1, new Expire())
                .withAction(2, new Lookup())
                .withMaxTransformations(maxActions());
    }

    /** Both backends, the client face, each client's last lease, and the timeline so far. */
    public final class World {
        final BlockingBackend real;
        final Face.Locks client;
        final ManualTimeSource modelTime = new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));
        final InMemoryLockBackend model = new InMemoryLockBackend(modelTime);
        final List<LockKey> keys;
        final Map<String, Lease> leases = new HashMap<>();
        final Map<LockKey, Long> lastFence = new HashMap<>();
        final Map<LockKey, Lease> holder = new HashMap<>();
        final List<String> timeline = new ArrayList<>();

        World(BlockingBackend real, Face face) {
            this.real = real;
            this.client = face.over(LockClient.builder(real.backend()).withMetrics(LockMetrics.none()).build());
            timeline.add("through the " + face + " face");
            String run = "prop:" + UUID.randomUUID().toString().substring(0, 8) + ":";
            this.keys = List.of(LockKey.of(run + "a"), LockKey.of(run + "b"));
        }

        void check(boolean ok, String what) {
            Timeline.require(ok, what, timeline);
        }

        /** The last lease client {@code c} got on key {@code k}, if it ever got one. */
        Optional<Lease> leaseOf(int[] ck) {
            return Optional.ofNullable(leases.get(ck[0] + "/" + ck[1]));
        }

        /**
         * One {@code operation} (release, extend) by client {@code c} on key {@code k}, real against model:
         * through the client on its last lease if it has one, else straight to the backend as a stranger
         * (a random lock id, which must be refused). Logs both answers and checks that they agree.
         *
         * @return the real answer
         */
        boolean byHolderOrStranger(int[] ck, String operation, Predicate<Lease> byHolder, BiPredicate<LockKey, LockId> byStranger,
                BiPredicate<LockKey, LockId> onModel) {
            LockKey key = keys.get(ck[1]);
            Optional<Lease> lease = leaseOf(ck);
            LockId id = lease.map(Lease::lockId).orElseGet(LockId::random);
            boolean r = lease.isPresent() ? byHolder.test(lease.get()) : byStranger.test(key, id);
            boolean m = onModel.test(key, id);
            timeline.add(name(ck) + ": " + operation + (lease.isEmpty() ? " (a stranger)" : "") + " -> real " + r + ", model " + m);
            check(r == m, operation + " disagrees with the model");
            return r;
        }

        @Override
        public String toString() {
            return "World" + timeline;
        }
    }

    private static Arbitrary<int[]> clientAndKey() {
        return Combinators.combine(Arbitraries.integers().between(0, 2), Arbitraries.integers().between(0, 1))
                .as((c, k) -> new int[] {c, k});
    }

    private static String name(int[] ck) {
        return "client " + (char) ('A' + ck[0]) + " on key " + (char) ('a' + ck[1]);
    }

    private final class Acquire implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return clientAndKey().map(ck -> Transformer.mutate(name(ck) + ": acquire", w -> {
                LockKey key = w.keys.get(ck[1]);
                Optional<Lease> r = w.client.tryAcquire(key.value(), LONG);
                Optional<Grant> m = w.model.tryAcquire(key, r.map(Lease::lockId).orElseGet(LockId::random), LONG);
                w.timeline.add(name(ck) + ": acquire -> real " + r.map(l -> "fence " + l.fence().value()).orElse("held")
                        + ", model " + m.map(g -> "granted").orElse("held"));
                w.check(r.isPresent() == m.isPresent(), "acquire disagrees with the model");
                if (r.isPresent()) {
                    long fence = r.get().fence().value();
                    long before = w.lastFence.getOrDefault(key, 0L);
                    w.check(fence > before, "fence " + fence + " is not above the last fence " + before);
                    w.lastFence.put(key, fence);
                    w.leases.put(ck[0] + "/" + ck[1], r.get());
                    w.holder.put(key, r.get());
                }
            }));
        }
    }

    private final class Release implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return clientAndKey().map(ck -> Transformer.mutate(name(ck) + ": release", w -> {
                boolean r = w.byHolderOrStranger(ck, "release", w.client::release, w.real::release, w.model::release);
                if (r) {
                    w.holder.remove(w.keys.get(ck[1]));
                }
            }));
        }
    }

    private final class Extend implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return clientAndKey().map(ck -> Transformer.mutate(name(ck) + ": extend", w -> {
                boolean r = w.byHolderOrStranger(ck, "extend", l -> w.client.extend(l, LONG),
                        (k, id) -> w.real.extend(k, id, LONG).isPresent(), (k, id) -> w.model.extend(k, id, LONG).isPresent());
                if (r) {
                    LockKey key = w.keys.get(ck[1]);
                    Optional<LockInfo> info = w.real.lookup(key);
                    w.check(info.isPresent() && info.get().fence().value() == w.lastFence.get(key),
                            "extend changed the fence: lookup says " + info);
                }
            }));
        }
    }

    private final class Expire implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return Arbitraries.integers().between(0, 1).map(k -> Transformer.mutate("let key " + (char) ('a' + k) + " expire", w -> {
                LockKey key = w.keys.get(k);
                Lease held = w.holder.get(key);
                boolean shortened = held != null && w.client.extend(held, shortTtl());
                if (shortened) {
                    w.check(w.model.extend(key, held.lockId(), shortTtl()).isPresent(), "model lost a lease the backend still had");
                    sleep(shortTtl().plus(expirySlack()));
                    w.modelTime.advance(shortTtl().plusMillis(1));
                    w.holder.remove(key);
                }
                w.timeline.add("let key " + (char) ('a' + k) + " expire" + (shortened ? "" : " (nothing held)"));
            }));
        }
    }

    private final class Lookup implements Action.Independent<World> {
        @Override
        public Arbitrary<Transformer<World>> transformer() {
            return Arbitraries.integers().between(0, 1).map(k -> Transformer.mutate("lookup key " + (char) ('a' + k), w -> {
                LockKey key = w.keys.get(k);
                boolean m = w.model.lookup(key).isPresent();
                Optional<LockInfo> r = w.client.lookup(key.value());
                w.timeline.add("lookup key " + (char) ('a' + k) + " -> real " + r.map(i -> "fence " + i.fence().value()).orElse("free")
                        + ", model " + (m ? "held" : "free"));
                w.check(r.isPresent() == m, "lookup disagrees with the model");
                r.ifPresent(i -> w.check(i.fence().value() == w.lastFence.get(key), "lookup shows fence " + i.fence().value()
                        + " but the holder got " + w.lastFence.get(key)));
            }));
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
