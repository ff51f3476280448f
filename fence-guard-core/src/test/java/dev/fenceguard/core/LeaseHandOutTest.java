package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lease is handed out only while it is valid, renewed by the time it has left, released once, and
 * {@code acquireAll} takes any number of keys. Every step is driven by the test on a manual clock, with a
 * backend whose answers the test holds back.
 */
@Timeout(60) // a guard against a hang, not a timing assertion
class LeaseHandOutTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration SHORT_TTL = Duration.ofSeconds(3);

    private final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryLockBackend memory = new InMemoryLockBackend(time);
    private final ScriptedBackend backend = new ScriptedBackend(memory);
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final LockClient client = LockClient.builder(backend).withTimeSource(time).withMetrics(LockMetrics.none())
            .onEvents(new LockListener() {
                @Override
                public void onLeaseLost(Lease lease, Throwable cause) {
                    events.add("lost " + lease.key());
                }
            }).build();

    // --- a grant that arrives after the lease's local deadline ---

    @Test
    void aGrantThatArrivesAfterItsTtlIsReleasedAndNotHandedOut() {
        backend.hangAcquire = true;
        CompletableFuture<Optional<Lease>> attempt = client.async().tryAcquire("k", SHORT_TTL).toCompletableFuture();
        time.advance(Duration.ofMillis(3_100)); // past the TTL, well within the call timeout (10 s)
        backend.hangAcquire = false;
        backend.answerHungCalls(); // the backend grants now, 3.1 s after the request was sent
        assertThat(attempt).as("a lease that is invalid on arrival is not handed out").isCompletedWithValue(Optional.empty());
        assertThat(backend.calls).containsExactly("acquire k", "release k");
        assertThat(client.lookup("k")).as("the grant was released, not left to its TTL").isEmpty();
    }

    @Test
    void acquireRetriesAfterALateGrantAndHandsOutOnlyAValidLease() {
        backend.hangAcquire = true;
        CompletableFuture<Optional<Lease>> acquiring = client.async().acquire("k", SHORT_TTL, Duration.ofMinutes(1)).toCompletableFuture();
        time.advance(Duration.ofMillis(3_100));
        backend.hangAcquire = false;
        backend.answerHungCalls();
        assertThat(acquiring).as("still trying within its wait").isNotDone();
        time.advance(Duration.ofSeconds(2)); // the first retry's backoff is at most 10 ms
        Lease lease = acquiring.join().orElseThrow();
        assertThat(lease.fence().value()).as("the late grant's fence 1 was given up").isEqualTo(2);
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void aGrantThatArrivesWithTimeLeftIsHandedOutWithWhatIsLeft() {
        backend.hangAcquire = true;
        CompletableFuture<Optional<Lease>> attempt = client.async().tryAcquire("k", SHORT_TTL).toCompletableFuture();
        time.advance(Duration.ofMillis(2_200));
        backend.hangAcquire = false;
        backend.answerHungCalls();
        Lease lease = attempt.join().orElseThrow();
        assertThat(lease.remaining()).as("counted from when the request was sent").isEqualTo(Duration.ofMillis(800));
    }

    // --- renewal by the time left ---

    @Test
    void theFirstRenewalComesAThirdOfTheTimeLeftAfterTheGrantNotAThirdOfTheTtl() {
        AtomicReference<Lease> held = new AtomicReference<>();
        CompletableFuture<String> work = new CompletableFuture<>();
        backend.hangAcquire = true;
        CompletableFuture<Optional<String>> run = client.async().withLock("k", SHORT_TTL, Duration.ZERO, lease -> {
            held.set(lease);
            return work;
        }).toCompletableFuture();
        time.advance(Duration.ofMillis(2_200)); // the acquire waited 2.2 s of its 3 s TTL
        backend.hangAcquire = false;
        backend.answerHungCalls();
        Lease lease = held.get();
        assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(800));

        time.advance(Duration.ofMillis(790));
        assertThat(backend.calls).as("a renewal was sent within the 0.8 s the lease had left").contains("extend k");
        assertThat(lease.isValid()).isTrue();
        time.advance(Duration.ofSeconds(30));
        assertThat(lease.isLost()).as("renewed all along").isFalse();
        assertThat(events).isEmpty();
        work.complete("done");
        assertThat(run.join()).contains("done");
    }

    @Test
    void aRenewalIsAttemptedBeforeALeaseWithLittleLeftIsDeclaredLost() {
        AtomicReference<Lease> held = new AtomicReference<>();
        backend.hangAcquire = true;
        client.async().withLock("k", SHORT_TTL, Duration.ZERO, lease -> {
            held.set(lease);
            return new CompletableFuture<String>();
        });
        time.advance(Duration.ofMillis(2_200));
        backend.hangAcquire = false;
        backend.hangExtend = true; // renewals get no answer
        backend.answerHungCalls();
        time.advance(Duration.ofMillis(900));
        assertThat(held.get().isLost()).as("no renewal answered before the deadline").isTrue();
        assertThat(backend.calls).as("but one was sent before the lease was declared lost").containsSubsequence("acquire k", "extend k");
        assertThat(events).containsExactly("lost k");
    }

    // --- release racing an extend ---

    @Test
    void theOwnersReleaseRacingAnExtendAnswersTrueAndReleasesOnce() {
        Lease lease = client.tryAcquire("k", TTL).orElseThrow();
        backend.hangExtend = true;
        CompletableFuture<Boolean> extending = client.async().extend(lease, TTL).toCompletableFuture();
        backend.hangExtend = false;
        backend.calls.clear();
        // The extend's answer (extended) arrives just as the owner's release reaches the backend.
        backend.beforeRelease = backend::answerHungCalls;
        assertThat(client.release(lease)).as("the owner's first release of a live lease").isTrue();
        assertThat(backend.calls).as("released exactly once").containsExactly("release k");
        assertThat(extending).as("the extension came back after the release").isCompletedWithValue(false);
        assertThat(client.lookup("k")).isEmpty();
        assertThat(client.release(lease)).as("a second release").isFalse();
        assertThat(backend.calls).containsExactly("release k");
    }

    // --- acquireAll ---

    @Test
    void acquireAllOfTwentyThousandKeysCompletesAndLeavesNothingBehind() throws Exception {
        LockClient plain = LockClient.builder(memory).withTimeSource(time).withMetrics(LockMetrics.none()).build();
        List<String> keys = IntStream.range(0, 20_000).mapToObj(i -> "all:" + i).toList();
        CompletableFuture<Optional<LeaseSet>> taking = plain.async().acquireAll(keys, TTL, Duration.ZERO).toCompletableFuture();
        assertThat(taking).as("every acquire on the in-memory backend completes at once, so must the whole").isDone();
        try (LeaseSet set = taking.join().orElseThrow()) {
            assertThat(set.leases()).hasSize(20_000);
            assertThat(set.isValid()).isTrue();
        }
        assertThat(keys).allSatisfy(k -> assertThat(memory.lookup(LockKey.of(k))).as(k).isEmpty());

        try (LeaseSet set = plain.acquireAll(keys, TTL, Duration.ZERO).orElseThrow()) {
            assertThat(set.leases()).as("the blocking face too").hasSize(20_000);
        }
        assertThat(keys).allSatisfy(k -> assertThat(memory.lookup(LockKey.of(k))).as(k).isEmpty());
    }

    @Test
    void acquireAllOfTwentyThousandKeysReleasesEveryKeyTakenWhenOneIsHeldOrFails() throws Exception {
        List<String> keys = IntStream.range(0, 20_000).mapToObj(i -> String.format("all:%05d", i)).toList();
        Lease blocker = client.tryAcquire("all:15000", TTL).orElseThrow();
        assertThat(client.acquireAll(keys, TTL, Duration.ZERO)).isEmpty();
        assertThat(keys).filteredOn(k -> !k.equals("all:15000")).allSatisfy(k -> assertThat(memory.lookup(LockKey.of(k))).as(k).isEmpty());
        blocker.close();

        backend.failAcquire = k -> k.value().equals("all:12000");
        assertThatThrownBy(() -> client.acquireAll(keys, TTL, Duration.ZERO)).isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
        assertThat(keys).allSatisfy(k -> assertThat(memory.lookup(LockKey.of(k))).as(k).isEmpty());
    }

    @Test
    void acquireAllGivesBackTheKeysItTookOneAtATime() {
        // Thousands of releases sent at once queued for a pool's connections past the release timeout (seen on
        // PostgreSQL under load) and left their keys locked for a TTL.
        Lease blocker = client.tryAcquire("k:9", TTL).orElseThrow();
        List<String> keys = IntStream.range(0, 10).mapToObj(i -> "k:" + i).toList();
        backend.hangRelease = true;
        assertThat(client.async().acquireAll(keys, TTL, Duration.ZERO).toCompletableFuture()).isCompletedWithValue(Optional.empty());
        for (int i = 8; i >= 0; i--) {
            assertThat(backend.hung).as("releases in flight while k:" + i + " is given back").hasSize(1);
            backend.answerHungCalls();
        }
        assertThat(backend.hung).isEmpty();
        assertThat(keys).filteredOn(k -> !k.equals("k:9")).allSatisfy(k -> assertThat(memory.lookup(LockKey.of(k))).as(k).isEmpty());
        assertThat(blocker.isValid()).isTrue();
    }

    @Test
    void acquireAllHandsOutNoSetWhoseFirstLeaseRanOutWhileTheLastWasTaken() {
        backend.hangAcquire = true;
        CompletableFuture<Optional<LeaseSet>> taking = client.async().acquireAll(List.of("a", "b"), SHORT_TTL, Duration.ofMinutes(1))
                .toCompletableFuture();
        time.advance(Duration.ofMillis(2_900));
        backend.answerHungCalls(); // "a" granted 2.9 s after it was asked for: 0.1 s left
        time.advance(Duration.ofMillis(200)); // "a" runs out while "b" is asked for
        backend.hangAcquire = false;
        backend.answerHungCalls(); // "b" granted, 0.2 s after it was asked for
        assertThat(taking).isCompletedWithValue(Optional.empty());
        assertThat(client.lookup("a")).isEmpty();
        assertThat(client.lookup("b")).isEmpty();
    }
}
