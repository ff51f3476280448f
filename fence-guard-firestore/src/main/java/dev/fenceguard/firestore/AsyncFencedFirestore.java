package dev.fenceguard.firestore;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.internal.Horizon;
import dev.fenceguard.core.internal.WarmUps;
import dev.fenceguard.core.spi.WriteRule;
import dev.fenceguard.firestore.internal.DocumentRule;
import dev.fenceguard.firestore.internal.DocumentRule.Op;
import dev.fenceguard.firestore.internal.DocumentRule.Plan;
import dev.fenceguard.firestore.internal.FirestoreHandle;
import dev.fenceguard.firestore.internal.FirestoreHandle.Step;
import dev.fenceguard.firestore.internal.LockCollections;
import dev.fenceguard.firestore.internal.Purger;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * The non-blocking face of {@link FencedFirestore}: the same fenced writes, each returning a
 * {@link CompletionStage} at once, with the same outcomes ({@code Applied}, {@code Stale(current)},
 * {@code NotFound}), the same atomicity and the same tombstones. Get it with
 * {@link FencedFirestore#async()}; the blocking methods there are a wait on these.
 *
 * <pre>{@code
 * AsyncFencedFirestore fenced = fenceGuard.fencedWrites().async();
 * CompletionStage<Optional<WriteOutcome>> paid = locks.async().withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
 *         lease -> fenced.update(order, lease.fence(), Map.of("status", "paid")));   // empty if the lock was not had
 * }</pre>
 *
 * <p><b>How a write runs.</b> It reads the document, decides by the write rule, and sends one write
 * that applies only if the document is still as read (an update-time precondition, or a create when
 * there was none): a compare-and-set on the one document, which is what a read-write transaction on
 * it gives, in two round trips. If another writer changed the document in between, the write is
 * refused by Firestore and the call reads again, up to {@link FenceGuardFirestore.Builder#withWriteAttempts}
 * times; a call that keeps losing fails with {@code UNAVAILABLE}. A rejection writes nothing. Each RPC
 * is sent from the SDK's callback of the one before: no thread waits.
 *
 * <p><b>Bounded.</b> Each call ends by the call timeout ({@link FenceGuardFirestore.Builder#withCallTimeout}):
 * its RPCs carry the time left as their gRPC deadline, and at the timeout the stage fails with
 * {@code TIMEOUT} and the RPC still out is cancelled. A write that timed out, or whose stage you
 * cancelled, may still have been applied if it reached Firestore first: read the document to know.
 *
 * <p><b>Errors.</b> Invalid arguments throw {@link IllegalArgumentException} or
 * {@link NullPointerException} at once, before any I/O, rather than failing the stage. Firestore
 * failures complete the stage with a {@link FenceGuardException}. The stages complete on the SDK's
 * callback threads or fence-guard's deadline timer thread: attach blocking work with the
 * {@code *Async} methods of {@link CompletionStage}. Kotlin coroutines can {@code await()} them.
 *
 * <p>Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class AsyncFencedFirestore {

    private final FirestoreHandle firestore;
    private final DocumentRule rule;
    private final Duration timeout;
    private final DocumentReference warmUpDocument;

    AsyncFencedFirestore(FirestoreHandle firestore, DocumentRule rule, Duration timeout, DocumentReference warmUpDocument) {
        this.firestore = firestore;
        this.rule = rule;
        this.timeout = timeout;
        this.warmUpDocument = warmUpDocument;
    }

    /**
     * {@link FencedFirestore#warmUp()} without waiting.
     *
     * @return a stage that completes when both RPCs have answered; it fails with a
     *     {@link FenceGuardException} ({@code UNAVAILABLE}, or {@code TIMEOUT} after the call timeout)
     * @since 0.1
     */
    public CompletionStage<Void> warmUp() {
        WarmUps.outcomes();
        return firestore.warmUp(warmUpDocument, timeout);
    }

    /**
     * {@link FencedFirestore#update(DocumentReference, FenceToken, Map)} without waiting.
     *
     * @return a stage of {@code Applied}, {@code Stale(stored)} or {@code NotFound} (absent or tombstone,
     *     nothing recorded)
     * @throws IllegalArgumentException if {@code fields} is empty or names the fence or deleted field (or a
     *     field path inside them), or if {@code doc} is in a lock collection, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> update(DocumentReference doc, FenceToken fence, Map<String, ?> fields) {
        return run(Op.UPDATE, doc, fence, rule.data(Op.UPDATE, doc, fence, fields));
    }

    /**
     * {@link FencedFirestore#set(DocumentReference, FenceToken, Map)} without waiting.
     *
     * @return a stage of {@code Applied} or {@code Stale(stored)}
     * @throws IllegalArgumentException if {@code fields} is empty, names the fence or deleted field or holds
     *     {@code FieldValue.delete()}, or if {@code doc} is in a lock collection, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> set(DocumentReference doc, FenceToken fence, Map<String, ?> fields) {
        return run(Op.SET, doc, fence, rule.data(Op.SET, doc, fence, fields));
    }

    /**
     * {@link FencedFirestore#claim(DocumentReference, FenceToken)} without waiting.
     *
     * @return a stage of {@code Applied} (fence recorded), {@code Stale(stored)}, or {@code NotFound}
     *     (absent or deleted; fence recorded on the tombstone)
     * @throws IllegalArgumentException if {@code doc} is in a lock collection, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> claim(DocumentReference doc, FenceToken fence) {
        rule.check(doc, fence);
        return run(Op.CLAIM, doc, fence, Map.of());
    }

    /**
     * {@link FencedFirestore#delete(DocumentReference, FenceToken)} without waiting.
     *
     * @return a stage of {@code Applied} (a tombstone holds {@code fence}) or {@code Stale(stored)}
     * @throws IllegalArgumentException if {@code doc} is in a lock collection, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> delete(DocumentReference doc, FenceToken fence) {
        rule.check(doc, fence);
        return run(Op.DELETE, doc, fence, Map.of());
    }

    /**
     * {@link FencedFirestore#purge(CollectionReference, Purge)} without waiting: the same checks, thrown
     * at once before any I/O, and the same work, each RPC sent from the callback of the one before.
     *
     * @return a stage of what the purge removed and where it stopped; it fails with a
     *     {@link FenceGuardException} if Firestore fails or an RPC chain does not end within the call timeout
     *     (the documents removed until then stay removed)
     * @throws IllegalStateException if these writes have no horizon ({@link FenceGuardFirestore.Builder#withHorizon})
     * @throws IllegalArgumentException if {@code collection} is in a lock collection, or the purge's start key
     *     is not a {@link PurgeResult#resumeAfter()} of a purge of Firestore tombstones
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<PurgeResult> purge(CollectionReference collection, Purge purge) {
        Objects.requireNonNull(collection, "collection");
        Objects.requireNonNull(purge, "purge");
        Horizon horizon = rule.horizon().orElseThrow(() -> new IllegalStateException("purge of " + collection.getPath()
                + " needs a horizon (FenceGuardFirestore.Builder.withHorizon): without one, a write that finds no document"
                + " would admit any fence, so no tombstone can be removed safely"));
        LockCollections.requireOutside(collection, rule.lockCollections());
        WriteRule writes = rule.writeRule();
        Purger purger = new Purger(firestore, rule.fenceField(), f -> writes.encode(FenceToken.of(Math.max(f, 1))),
                warmUpDocument, timeout, "tombstone", n -> writes.purged("tombstone", n));
        long age = horizon.purgeMicros();
        return purger.run(collection, purge, q -> q.whereEqualTo(rule.deletedField(), true),
                now -> ClockFloor.floorAtMicros(now - age),
                read -> rule.isTombstone(read)
                        && WriteRule.decode(read.get(rule.fenceField())) < DocumentRule.floorBefore(read.getReadTime(), age, read.getReference().getPath()));
    }

    DocumentRule rule() {
        return rule;
    }

    private CompletionStage<WriteOutcome> run(Op op, DocumentReference doc, FenceToken fence, Map<String, Object> data) {
        String resource = doc.getPath();
        return rule.writeRule().observeAsync(DocumentRule.kind(doc), op.observed, fence, () -> firestore.readThenWrite(resource,
                op.label, timeout, doc, read -> step(op, doc, fence, data, read), () -> {
                    throw new FenceGuardException(ErrorCode.UNAVAILABLE, resource, op.label + " lost " + firestore.attempts()
                            + " races in a row to other writers of the document");
                }));
    }

    private Step<WriteOutcome> step(Op op, DocumentReference doc, FenceToken fence, Map<String, Object> data, DocumentSnapshot read) {
        Plan plan = rule.decide(op, doc, fence, data, read);
        return switch (plan.change()) {
            case NONE -> Step.finish(plan.outcome());
            case UPDATE -> Step.write(() -> FirestoreHandle.updateIfUnchanged(doc, read, plan.data()), plan.outcome());
            case REPLACE -> Step.write(() -> firestore.replaceIfUnchanged(doc, read, plan.data()), plan.outcome());
        };
    }

    @Override
    public String toString() {
        return "AsyncFencedFirestore[" + rule + ", call timeout " + timeout + "]";
    }
}
