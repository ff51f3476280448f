package dev.fenceguard.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.Grant;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The no-blocking check can fail: BlockHound, as the reactor tests install it, catches a deliberate
 * blocking call on a Reactor thread, in a backend on the lock path, and on fence-guard's timer thread.
 */
class BlockHoundIsArmedTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    /** The in-memory backend, with a blocking call in the named operation. */
    private static final class SleepyBackend extends SpyBackendBase {
        private final String sleepsIn;

        SleepyBackend(String sleepsIn) {
            this.sleepsIn = sleepsIn;
        }

        @Override
        void maybeBlock(String operation) {
            if (operation.equals(sleepsIn)) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    @Test
    void aSleepOnAParallelThreadIsCaught() {
        List<String> before = NoBlocking.caught();
        Mono<Integer> sleeper = Mono.fromCallable(() -> {
            Thread.sleep(1);
            return 1;
        }).subscribeOn(Schedulers.parallel());
        StepVerifier.create(sleeper).expectError(BlockingOperationError.class).verify(TTL);
        assertThat(NoBlocking.caughtSince(before)).singleElement().asString().contains("sleep").contains("parallel");
    }

    @Test
    void aBlockingBackendOnTheLockPathIsCaught() {
        List<String> before = NoBlocking.caught();
        ReactiveLockClient locks = ReactiveLockClient.of(LockClient.builder(new SleepyBackend("tryAcquire"))
                .withMetrics(LockMetrics.none()).build());
        StepVerifier.create(locks.tryAcquire("sleepy", TTL).subscribeOn(Schedulers.parallel()))
                .expectError(BlockingOperationError.class)
                .verify(TTL);
        assertThat(NoBlocking.caughtSince(before)).singleElement().asString().contains("sleep").contains("SleepyBackend");
    }

    @Test
    void aBlockingRenewalOnFenceGuardsTimerThreadIsCaught() {
        List<String> before = NoBlocking.caught();
        SleepyBackend backend = new SleepyBackend("extend");
        ReactiveLockClient locks = ReactiveLockClient.of(LockClient.builder(backend).withMetrics(LockMetrics.none()).build());
        // The work ends once a renewal has reached the backend, which only the timer thread sends.
        // A TTL of seconds: the first renewal in a fresh JVM waits for BlockHound to instrument classes.
        Mono<String> run = locks.withLock("renewed", Duration.ofSeconds(3), TTL,
                lease -> Mono.fromFuture(backend.extendCalled).thenReturn("renewal sent"));
        try {
            StepVerifier.create(run).expectNext("renewal sent").expectComplete().verify(TTL);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; caught: " + NoBlocking.caughtSince(before), e);
        }
        assertThat(NoBlocking.caughtSince(before)).first().asString().contains("sleep").contains("fence-guard-timer");
    }

    /** The in-memory backend with a hook before each operation. */
    private abstract static class SpyBackendBase implements dev.fenceguard.core.spi.LockBackend {
        private final InMemoryLockBackend inner = new InMemoryLockBackend();
        final CompletableFuture<Void> extendCalled = new CompletableFuture<>();

        abstract void maybeBlock(String operation);

        @Override
        public String name() {
            return "sleepy";
        }

        @Override
        public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            maybeBlock("tryAcquire");
            return inner.tryAcquire(key, lockId, ttl, timeout);
        }

        @Override
        public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
            maybeBlock("release");
            return inner.release(key, lockId, timeout);
        }

        @Override
        public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            try {
                maybeBlock("extend");
            } finally {
                extendCalled.complete(null); // after BlockHound has written the sleep down
            }
            return inner.extend(key, lockId, ttl, timeout);
        }

        @Override
        public CompletionStage<Optional<dev.fenceguard.core.LockInfo>> lookup(LockKey key, Duration timeout) {
            return inner.lookup(key, timeout);
        }
    }
}
