package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.internal.ShortHash;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.micrometer.MicrometerLockObservations;
import dev.fenceguard.core.spi.WriteRule;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60) // a guard against a hang, not a timing assertion
class LockObservationsTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final String KEY = "orders:42";

    private final TestObservationRegistry registry = TestObservationRegistry.builder()
            .validateObservationsWithTheSameNameHavingTheSameSetOfLowCardinalityKeys(true)
            .validateScopesOpenedAndClosedOnTheSameThread(true)
            .validateScopesClosedInReverseOrderOfOpening(true)
            .build();
    private final LockObservations observations = MicrometerLockObservations.of(registry);
    private final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryLockBackend memory = new InMemoryLockBackend(time);
    private final ScriptedBackend backend = new ScriptedBackend(memory);
    private final LockClient client = LockClient.builder(backend).withTimeSource(time).withMetrics(LockMetrics.none())
            .withObservations(observations).build();
    private final WriteRule orders = new WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.INTEGER, LockMetrics.none(),
            "postgres", observations);

    @Test
    void blockingWithLockIsTheParentOfItsAcquireRenewalsWritesAndRelease() throws Exception {
        Optional<String> result = client.withLock(KEY, TTL, Duration.ZERO, lease -> {
            time.advance(Duration.ofSeconds(10)); // one background renewal
            orders.observe("orders", "update", lease.fence(), () -> new WriteOutcome.Applied("orders[42]", lease.fence().value()));
            return "done";
        });
        assertThat(result).contains("done");

        String keyHash = ShortHash.of(KEY.getBytes(StandardCharsets.UTF_8));
        TestObservationRegistryAssert.assertThat(registry)
                .hasNumberOfObservationsEqualTo(5)
                .hasObservationWithNameEqualTo("fenceguard.with.lock").that()
                .hasBeenStarted().hasBeenStopped()
                .doesNotHaveParentObservation()
                .hasLowCardinalityKeyValue("backend", "scripted")
                .hasLowCardinalityKeyValue("outcome", "completed")
                .hasHighCardinalityKeyValue("lock.key.hash", keyHash)
                .hasHighCardinalityKeyValue("fence", "1")
                .doesNotHaveEvent(WithLockRun.LEASE_LOST_EVENT)
                .backToTestObservationRegistry()
                .hasObservationWithNameEqualTo("fenceguard.acquire").that()
                .hasBeenStopped().hasParentObservationContextMatching(named("fenceguard.with.lock"))
                .hasLowCardinalityKeyValue("outcome", "acquired").hasHighCardinalityKeyValue("lock.key.hash", keyHash)
                .backToTestObservationRegistry()
                .hasObservationWithNameEqualTo("fenceguard.renew").that()
                .hasBeenStopped().hasParentObservationContextMatching(named("fenceguard.with.lock"))
                .hasLowCardinalityKeyValue("outcome", "renewed")
                .backToTestObservationRegistry()
                .hasObservationWithNameEqualTo("fenceguard.write").that()
                .hasBeenStopped().hasParentObservationContextMatching(named("fenceguard.with.lock"))
                .hasLowCardinalityKeyValue("backend", "postgres")
                .hasLowCardinalityKeyValue("resource.type", "orders")
                .hasLowCardinalityKeyValue("operation", "update")
                .hasLowCardinalityKeyValue("outcome", "applied")
                .hasHighCardinalityKeyValue("fence", "1")
                .backToTestObservationRegistry()
                .hasObservationWithNameEqualTo("fenceguard.release").that()
                .hasBeenStopped().hasParentObservationContextMatching(named("fenceguard.with.lock"))
                .hasLowCardinalityKeyValue("outcome", "released");
    }

    @Test
    void noObservationCarriesTheLockIdOrTheKeyInClear() throws Exception {
        List<String> secrets = new ArrayList<>();
        client.withLock(KEY, TTL, Duration.ZERO, lease -> {
            secrets.add(lease.lockId().value());
            time.advance(Duration.ofSeconds(10));
            return "done";
        });
        List<String> values = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry).hasHandledContextsThatSatisfy(contexts -> contexts.forEach(c -> {
            values.add(c.getName());
            values.add(String.valueOf(c.getContextualName()));
            c.getAllKeyValues().forEach(kv -> values.add(kv.getKey() + "=" + kv.getValue()));
        }));
        assertThat(values).as("some key values were recorded").anyMatch(v -> v.startsWith("lock.key.hash="));
        assertThat(values).noneMatch(v -> v.contains(secrets.getFirst())).noneMatch(v -> v.contains(KEY));
    }

    @Test
    void asyncWithLockNestsItsOwnStepsAndWritesMadeWhileTheWorkStarts() {
        CompletableFuture<String> work = new CompletableFuture<>();
        List<FenceToken> fences = new ArrayList<>();
        CompletableFuture<Optional<String>> result = client.async().withLock(KEY, TTL, Duration.ZERO, lease -> {
            fences.add(lease.fence());
            orders.observe("orders", "update", lease.fence(), () -> new WriteOutcome.Applied("orders[42]", lease.fence().value()));
            return work;
        }).toCompletableFuture();
        time.advance(Duration.ofSeconds(10));
        // Later, on a thread where the withLock observation is not current: a write of its own, no parent.
        orders.observe("orders", "delete", fences.getFirst(), () -> new WriteOutcome.NotFound("orders[42]"));
        work.complete("done");
        assertThat(result).isCompletedWithValue(Optional.of("done"));

        TestObservationRegistryAssert.assertThat(registry)
                .hasObservationWithNameEqualTo("fenceguard.with.lock").that()
                .hasBeenStopped().hasLowCardinalityKeyValue("outcome", "completed")
                .backToTestObservationRegistry()
                .forAllObservationsWithNameEqualTo("fenceguard.acquire", o -> o.hasParentObservationContextMatching(named("fenceguard.with.lock")))
                .forAllObservationsWithNameEqualTo("fenceguard.renew", o -> o.hasParentObservationContextMatching(named("fenceguard.with.lock")))
                .forAllObservationsWithNameEqualTo("fenceguard.release", o -> o.hasParentObservationContextMatching(named("fenceguard.with.lock")))
                .hasAnObservation(o -> o.hasNameEqualTo("fenceguard.write").hasLowCardinalityKeyValue("operation", "update")
                        .hasParentObservationContextMatching(named("fenceguard.with.lock")))
                .hasAnObservation(o -> o.hasNameEqualTo("fenceguard.write").hasLowCardinalityKeyValue("operation", "delete")
                        .hasLowCardinalityKeyValue("outcome", "not_found").doesNotHaveParentObservation());
    }

    @Test
    void aLeaseLostWhileTheWorkRunsShowsAsAnEventAndTheOutcome() {
        CompletableFuture<String> work = new CompletableFuture<>();
        client.async().withLock(KEY, TTL, Duration.ZERO, lease -> {
            memory.release(lease.key(), lease.lockId()); // taken over behind the holder's back
            return work;
        });
        time.advance(Duration.ofSeconds(10));
        TestObservationRegistryAssert.assertThat(registry)
                .hasObservationWithNameEqualTo("fenceguard.with.lock").that()
                .hasEvent(WithLockRun.LEASE_LOST_EVENT).isNotStopped()
                .backToTestObservationRegistry()
                .hasObservationWithNameEqualTo("fenceguard.renew").that().hasLowCardinalityKeyValue("outcome", "lost");
        work.complete("done anyway");
        TestObservationRegistryAssert.assertThat(registry)
                .hasObservationWithNameEqualTo("fenceguard.with.lock").that()
                .hasBeenStopped().hasLowCardinalityKeyValue("outcome", "lost")
                .backToTestObservationRegistry()
                .hasObservationWithNameEqualTo("fenceguard.release").that().hasLowCardinalityKeyValue("outcome", "not_held");
    }

    @Test
    void eachWayAnAcquireOrWithLockEndsHasItsOutcome() throws Exception {
        Lease holder = client.tryAcquire(KEY, TTL).orElseThrow();
        assertThat(client.tryAcquire(KEY, TTL)).isEmpty();
        CompletableFuture<Optional<Lease>> waiting = client.async().acquire(KEY, TTL, Duration.ofSeconds(1)).toCompletableFuture();
        time.advance(Duration.ofSeconds(1));
        assertThat(waiting.join()).isEmpty();
        assertThat(client.withLock(KEY, TTL, Duration.ZERO, lease -> "never")).isEmpty();
        holder.close();

        backend.failAcquire = k -> k.value().equals("down");
        assertThatThrownBy(() -> client.tryAcquire("down", TTL)).isInstanceOf(FenceGuardException.class);
        assertThatThrownBy(() -> client.withLock("down", TTL, Duration.ZERO, lease -> "never")).isInstanceOf(FenceGuardException.class);
        assertThatThrownBy(() -> client.withLock("fails", TTL, Duration.ZERO, lease -> {
            throw new IllegalStateException("the work failed");
        })).hasMessage("the work failed");
        CompletableFuture<Optional<String>> cancelled = client.async().withLock("slow", TTL, Duration.ZERO,
                lease -> new CompletableFuture<String>()).toCompletableFuture();
        cancelled.cancel(false);

        List<String> seen = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry).hasHandledContextsThatSatisfy(contexts -> contexts.forEach(c ->
                seen.add(c.getName() + " " + c.getLowCardinalityKeyValue("outcome").getValue()
                        + (c.getError() == null ? "" : " " + c.getError().getClass().getSimpleName()))));
        assertThat(seen).containsExactly(
                "fenceguard.acquire acquired",
                "fenceguard.acquire held",
                "fenceguard.acquire held",
                "fenceguard.with.lock not_acquired",
                "fenceguard.acquire held",
                "fenceguard.release released",
                "fenceguard.acquire error FenceGuardException",
                "fenceguard.with.lock acquire_error FenceGuardException",
                "fenceguard.acquire error FenceGuardException",
                "fenceguard.with.lock failed IllegalStateException",
                "fenceguard.acquire acquired",
                "fenceguard.release released",
                "fenceguard.with.lock cancelled",
                "fenceguard.acquire acquired",
                "fenceguard.release released");
    }

    @Test
    void operationsOutsideWithLockBelongToTheCallersCurrentObservation() {
        Observation request = Observation.start("http.request", registry);
        try (Observation.Scope scope = request.openScope()) {
            client.tryAcquire(KEY, TTL).orElseThrow().close();
        } finally {
            request.stop();
        }
        TestObservationRegistryAssert.assertThat(registry)
                .forAllObservationsWithNameEqualTo("fenceguard.acquire", o -> o.hasParentObservationEqualTo(request))
                .forAllObservationsWithNameEqualTo("fenceguard.release", o -> o.hasParentObservationEqualTo(request));
    }

    @Test
    void writesEndWithTheirOutcomeAndFailuresAreRecordedRedacted() {
        FenceToken fence = FenceToken.of(7);
        orders.observe("orders", "update", fence, () -> orders.stale("orders[1]", fence, 9));
        RuntimeException driverError = new RuntimeException("duplicate key (id)=(secret-value)");
        assertThatThrownBy(() -> orders.observe("orders", "upsert", fence, () -> {
            throw driverError;
        })).isSameAs(driverError);
        CompletableFuture<WriteOutcome> pending = new CompletableFuture<>();
        CompletableFuture<WriteOutcome> async = orders.observeAsync("orders", "set", fence, () -> pending).toCompletableFuture();
        TestObservationRegistryAssert.assertThat(registry).hasAnObservation(o -> o.hasLowCardinalityKeyValue("operation", "set")
                .hasLowCardinalityKeyValue("outcome", "unknown"));
        pending.complete(new WriteOutcome.Applied("orders[1]", 7));
        assertThat(async).isCompleted();

        TestObservationRegistryAssert.assertThat(registry)
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("operation", "update").hasLowCardinalityKeyValue("outcome", "stale"))
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("operation", "upsert").hasLowCardinalityKeyValue("outcome", "error")
                        .assertThatError().hasMessageNotContaining("secret-value").hasMessageContaining("RuntimeException"))
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("operation", "set").hasLowCardinalityKeyValue("outcome", "applied"))
                .forAllObservationsWithNameEqualTo("fenceguard.write", o -> o.hasHighCardinalityKeyValue("fence", "7"));
    }

    @Test
    void cancellingAnObservedWriteCancelsTheWriteAndEndsItsObservation() {
        CompletableFuture<WriteOutcome> write = new CompletableFuture<>();
        CompletableFuture<WriteOutcome> observed = orders.observeAsync("orders", "set", FenceToken.of(7), () -> write).toCompletableFuture();
        assertThat(observed).isNotSameAs(write);
        observed.cancel(false);
        assertThat(write).as("the write's own stage, which ends its RPC or timer").isCancelled();
        TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo("fenceguard.write").that()
                .hasBeenStopped().hasLowCardinalityKeyValue("outcome", "error");

        WriteRule unobserved = new WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.INTEGER, LockMetrics.none(), "postgres");
        CompletableFuture<WriteOutcome> plain = new CompletableFuture<>();
        assertThat(unobserved.observeAsync("orders", "set", FenceToken.of(7), () -> plain)).as("nothing added when unobserved").isSameAs(plain);
    }

    @Test
    void aNoopRegistryAndNoneCreateNothing() throws Exception {
        LockObservations.Observed none = LockObservations.none().start(LockObservations.Operation.ACQUIRE, "b", LockKey.of(KEY), null);
        assertThat(MicrometerLockObservations.of(ObservationRegistry.NOOP)
                .start(LockObservations.Operation.ACQUIRE, "b", LockKey.of(KEY), null)).isSameAs(none);
        assertThat(MicrometerLockObservations.of(ObservationRegistry.NOOP).startWrite("b", "t", "update")).isSameAs(none);
        LockClient plain = LockClient.builder(backend).withTimeSource(time).withMetrics(LockMetrics.none()).build();
        plain.withLock(KEY, TTL, Duration.ZERO, lease -> "done");
        TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyObservation();
    }

    @Test
    void aClientWithoutObservationsRunsWithoutMicrometerOnTheClassPath() throws Exception {
        // fence-guard-core and SLF4J only, as in an application that does not use Micrometer.
        URL[] path = {LockClient.class.getProtectionDomain().getCodeSource().getLocation(),
                org.slf4j.LoggerFactory.class.getProtectionDomain().getCodeSource().getLocation()};
        // Parent: the boot loader only. The platform loader would not do when the tests run on the module path:
        // it hands out classes of the boot layer's named modules (Micrometer's among them) from their loader.
        try (URLClassLoader loader = new URLClassLoader(path, null)) {
            assertThatThrownBy(() -> loader.loadClass("io.micrometer.observation.Observation")).isInstanceOf(ClassNotFoundException.class);
            Class<?> backendType = loader.loadClass(dev.fenceguard.core.spi.LockBackend.class.getName());
            Class<?> workType = loader.loadClass(LockedWork.class.getName());
            Object backend = loader.loadClass(InMemoryLockBackend.class.getName()).getConstructor().newInstance();
            Object client = loader.loadClass(LockClient.class.getName()).getMethod("of", backendType).invoke(null, backend);
            Object work = Proxy.newProxyInstance(loader, new Class<?>[] {workType}, (proxy, method, args) ->
                    method.getName().equals("run") ? "ran without Micrometer" : method.invoke(this, args));
            Object result = client.getClass().getMethod("withLock", String.class, Duration.class, Duration.class, workType)
                    .invoke(client, KEY, TTL, Duration.ZERO, work);
            assertThat(result).isEqualTo(Optional.of("ran without Micrometer"));
        }
    }

    @Test
    void observationNamesAreFenceguardDotTheOperation() {
        assertThat(List.of(LockObservations.Operation.values())).extracting(LockObservations.Operation::observationName)
                .containsExactly("fenceguard.acquire", "fenceguard.with.lock", "fenceguard.renew", "fenceguard.release");
    }

    private static Predicate<Observation.ContextView> named(String name) {
        return c -> c.getName().equals(name);
    }
}
