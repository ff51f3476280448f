package dev.fenceguard.testkit;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.memory.InMemoryIdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The idempotency contract as a jqwik property: random sequences of claim, record and lookup over two
 * keys, two fingerprints and a handful of fences run against the backend under test <em>and</em>
 * against the {@link InMemoryIdempotencyBackend} reference model; every answer must agree (state,
 * fingerprint, fence, result; instants come from different clocks and are not compared). On top, per
 * key, the fence of an entry never decreases while it lives and a final outcome never changes. A
 * failure shows the shrunk sequence and what each side answered.
 *
 * <p>Claims here live 30 s, so nothing runs out during a sequence: expiry and retention are the
 * contract suite's ({@link IdempotencyBackendContract}). Each sequence uses fresh keys, so the backend
 * can be shared and keep state.
 *
 * <pre>{@code
 * class PostgresIdempotencyProperties extends IdempotencyBackendProperties {
 *     protected IdempotencyBackend backend() { return postgresIdempotency; }
 * }
 * }</pre>
 *
 * @since 0.1
 */
public abstract class IdempotencyBackendProperties {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final List<String> FINGERPRINTS = List.of("aa01", "bb02");

    /** The backend under test; called once per sequence. */
    protected abstract IdempotencyBackend backend();

    /** One step: a claim, a record or a lookup on key {@code key} (0 or 1). */
    public record Step(String kind, int key, int fingerprint, long fence, IdempotencyState state, int result) {
        @Override
        public String toString() {
            return switch (kind) {
                case "claim" -> "claim(k" + key + ", fp" + fingerprint + ", fence " + fence + ")";
                case "record" -> "record(k" + key + ", fence " + fence + ", " + state + ", result " + result + ")";
                default -> "lookup(k" + key + ")";
            };
        }
    }

    @Property(tries = 25)
    void theBackendAgreesWithTheReferenceModel(@ForAll("sequences") List<Step> steps) {
        IdempotencyBackend real = backend();
        InMemoryIdempotencyBackend model = new InMemoryIdempotencyBackend(new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z")));
        String run = "idem-prop:" + UUID.randomUUID().toString().substring(0, 8) + ":";
        List<LockKey> keys = List.of(LockKey.of(run + "a"), LockKey.of(run + "b"));
        List<String> timeline = new ArrayList<>();
        long[] lastFence = new long[2];
        byte[][] finalResult = new byte[2][];
        for (Step step : steps) {
            LockKey key = keys.get(step.key);
            String answer;
            String expected;
            Optional<IdempotencyEntry> after;
            switch (step.kind) {
                case "claim" -> {
                    String fp = FINGERPRINTS.get(step.fingerprint);
                    IdempotencyEntry r = join(real.claim(key, fp, step.fence, LONG, LONG, LONG));
                    IdempotencyEntry m = join(model.claim(key, fp, step.fence, LONG, LONG, LONG));
                    answer = shape(Optional.of(r));
                    expected = shape(Optional.of(m));
                    after = Optional.of(r);
                }
                case "record" -> {
                    byte[] result = {(byte) step.result};
                    answer = String.valueOf(join(real.record(key, step.fence, step.state, result, LONG, LONG)));
                    expected = String.valueOf(join(model.record(key, step.fence, step.state, result, LONG, LONG)));
                    after = join(real.lookup(key, LONG));
                }
                default -> {
                    after = join(real.lookup(key, LONG));
                    answer = shape(after);
                    expected = shape(join(model.lookup(key, LONG)));
                }
            }
            timeline.add(step + " -> " + answer + (answer.equals(expected) ? "" : "   MODEL: " + expected));
            Timeline.require(answer.equals(expected), "the backend disagrees with the model", timeline);
            if (after.isPresent()) {
                IdempotencyEntry e = after.get();
                Timeline.require(e.fence() >= lastFence[step.key], "an entry's fence went down", timeline);
                lastFence[step.key] = e.fence();
                if (finalResult[step.key] != null) {
                    Timeline.require(java.util.Arrays.equals(finalResult[step.key], e.result()) && e.state().isFinal(),
                            "a final outcome changed", timeline);
                }
                if (e.state().isFinal()) {
                    finalResult[step.key] = e.result();
                }
            }
        }
    }

    private static <T> T join(java.util.concurrent.CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().join();
        } catch (java.util.concurrent.CompletionException e) {
            throw Stages.failure(e);
        }
    }

    private static String shape(Optional<IdempotencyEntry> e) {
        return e.map(x -> x.state() + "/" + x.fingerprint() + "/" + x.fence() + "/" + java.util.HexFormat.of().formatHex(x.result()))
                .orElse("none");
    }

    @Provide
    Arbitrary<List<Step>> sequences() {
        Arbitrary<Integer> key = Arbitraries.integers().between(0, 1);
        Arbitrary<Long> fence = Arbitraries.longs().between(1, 6);
        Arbitrary<Step> claim = Combinators.combine(key, Arbitraries.integers().between(0, 1), fence)
                .as((k, fp, f) -> new Step("claim", k, fp, f, IdempotencyState.IN_PROGRESS, 0));
        Arbitrary<Step> record = Combinators.combine(key, fence,
                Arbitraries.of(IdempotencyState.COMPLETED, IdempotencyState.FAILED_RETRYABLE, IdempotencyState.FAILED_FINAL),
                Arbitraries.integers().between(0, 9))
                .as((k, f, s, r) -> new Step("record", k, 0, f, s, r));
        Arbitrary<Step> lookup = key.map(k -> new Step("lookup", k, 0, 0, IdempotencyState.IN_PROGRESS, 0));
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(5, claim), net.jqwik.api.Tuple.of(4, record), net.jqwik.api.Tuple.of(1, lookup))
                .list().ofMinSize(1).ofMaxSize(30);
    }
}
