package dev.fenceguard.firestore;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Transaction;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.firestore.internal.DocumentRule;
import dev.fenceguard.firestore.internal.DocumentRule.Op;
import dev.fenceguard.firestore.internal.DocumentRule.Plan;
import dev.fenceguard.firestore.internal.FirestoreErrors;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * Fenced writes to Firestore documents: each reads the document's stored fence and writes the data and
 * the new fence only if the {@link FencePolicy} admits the presented one, atomically. The fence is a
 * field of the document ({@code _fence}, an integer by default or the 15-character text form); a
 * missing fence counts as 0. Get one from {@link FenceGuardFirestore#fencedWrites()}.
 *
 * <pre>{@code
 * FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(db).build();
 * FencedFirestore fenced = fenceGuard.fencedWrites();
 * DocumentReference order = db.collection("orders").document("42");
 * fenced.update(order, lease.fence(), Map.of("status", "paid")).orThrow();
 * // inside your own transaction (after your other reads):
 * db.runTransaction(tx -> {
 *     if (fenced.check(tx, order, lease.fence()).isApplied()) { tx.update(order, "status", "shipped"); }
 *     return null;
 * }).get();
 * }</pre>
 *
 * <p><b>Two faces.</b> {@link #update}, {@link #set}, {@link #claim} and {@link #delete} without a
 * transaction are a wait on {@link #async()}, which does the work without holding a thread: a read, then
 * one write that applies only if the document is unchanged since (see {@link AsyncFencedFirestore}).
 * Each is bounded by the call timeout ({@link FenceGuardFirestore.Builder#withCallTimeout}). The
 * calls that take your {@link Transaction} run inside it and wait for its read, as Firestore's
 * transaction functions do.
 *
 * <p><b>Values.</b> Fields are a {@code Map<String, ?>} of Firestore values, copied when the call is
 * made: later changes to the map change nothing written or staged.
 *
 * <p><b>Tombstones.</b> A deleted document is replaced by a tombstone {@code {_fence: f, _deleted: true}}
 * that keeps the fence, so a zombie's {@link #set} cannot bring it back; your reads should skip
 * documents with {@code _deleted}. A fenced delete of a document that never existed writes a tombstone
 * too, and so does a {@link #claim} (or {@link #check}) of an absent document. Once a document has seen
 * fence {@code f}, no call here with an older fence changes it. Tombstones are ordinary documents:
 * each costs storage and counts in queries until purged. Build with a horizon
 * ({@link FenceGuardFirestore.Builder#withHorizon}) and {@link #purge} removes the tombstones no write can
 * need any more, with no bound on how long a writer may pause (docs/fence-lifecycle.md). With a horizon, a
 * call that would create a document's fence record ({@link #set}, {@link #claim}, {@link #check} or
 * {@link #delete} of a document that does not exist, tombstones included) is applied only if its fence is
 * above {@code tick(readTime - horizon)}, the clock floor of Firestore's clock at its read; otherwise it is
 * {@code Stale} with reason {@code BELOW_HORIZON} and the horizon as its current fence.
 *
 * <p><b>Your own transaction.</b> {@link #check}, {@link #update(Transaction, DocumentReference, FenceToken, Map)},
 * {@link #set(Transaction, DocumentReference, FenceToken, Map)} and {@link #delete(Transaction, DocumentReference, FenceToken)}
 * read the document through your transaction and stage their writes in it. Firestore wants every
 * read of a transaction before its first write, so do your other reads first and make one such call
 * per document. After {@code check}, write the document only with {@code tx.update}, which keeps the
 * staged fence: a raw {@code tx.set} would replace the fence (older fences would be admitted again)
 * and a raw {@code tx.delete} would drop the tombstone. Use the transactional {@code set} and
 * {@code delete} here instead of {@code check} for those.
 *
 * <p><b>Lock documents are not resources.</b> Every call here, with or without your transaction, refuses
 * a document whose top-level collection holds lock documents (the lock backend's collection,
 * {@link FenceGuardFirestore.Builder#withLockCollection}, and those named with
 * {@link FenceGuardFirestore.Builder#withOtherLockCollections}), and everything beneath such a document, with an
 * {@link IllegalArgumentException} before any I/O: a fenced write to a lock document could rewind its
 * fence counter, take over or release a held lock. A collection of the same name under another document
 * ({@code tenants/t1/fence_guard_locks/x}) is an ordinary resource: a lock backend takes only top-level
 * collections. A resource's tombstone is the resource's own document, so fenced writes to it are the
 * normal path.
 *
 * <p>Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class FencedFirestore {

    private final AsyncFencedFirestore async;
    private final DocumentRule rule;

    FencedFirestore(AsyncFencedFirestore async) {
        this.async = async;
        this.rule = async.rule();
    }

    /**
     * The non-blocking face of these writes: the same calls, each returning a {@code CompletionStage}
     * at once. The blocking calls here wait on it.
     *
     * @since 0.1
     */
    public AsyncFencedFirestore async() {
        return async;
    }

    /**
     * Gets these writes ready for their first call, at startup rather than in the first request: opens
     * the gRPC channel and loads the SDK's read and commit paths with the two RPCs every fenced write is
     * made of, writing nothing: a read of the document {@code warm-up} in the lock collection (which no
     * lock key maps to and fenced writes refuse) and the commit of an empty batch. Idempotent; bounded by
     * the call timeout.
     *
     * @throws dev.fenceguard.core.FenceGuardException {@code UNAVAILABLE} if Firestore cannot be reached,
     *     {@code TIMEOUT} if it does not answer within the call timeout
     * @since 0.1
     */
    public void warmUp() {
        FirestoreErrors.join(async.warmUp(), null, "warm-up");
    }

    /**
     * Updates fields of an existing, not deleted document if the policy admits {@code fence}. An
     * update never creates a document or a tombstone: on an absent or deleted document it changes
     * nothing. Waits for {@link AsyncFencedFirestore#update}, at most the call timeout.
     *
     * @return {@code Applied}; {@code Stale(stored)} if the policy refuses {@code fence} (a tombstone's
     *     fence counts); {@code NotFound} if the document does not exist or is a tombstone the policy
     *     admits {@code fence} against (nothing recorded)
     * @throws IllegalArgumentException if {@code fields} is empty or names the fence or deleted field
     *     (or a field path inside them), or if {@code doc} is in a lock collection (see the class comment), before any I/O
     * @throws dev.fenceguard.core.FenceGuardException if Firestore fails or does not answer within the
     *     call timeout ({@code TIMEOUT}; the write may still have been applied)
     */
    public WriteOutcome update(DocumentReference doc, FenceToken fence, Map<String, ?> fields) {
        return wait(async.update(doc, fence, fields), doc, Op.UPDATE);
    }

    /**
     * {@link #update(DocumentReference, FenceToken, Map)} inside your transaction: reads {@code doc}
     * through {@code tx} and stages the update if applied.
     *
     * @throws IllegalArgumentException as the other overload, before {@code tx} reads anything
     * @throws dev.fenceguard.core.FenceGuardException if the read fails
     */
    public WriteOutcome update(Transaction tx, DocumentReference doc, FenceToken fence, Map<String, ?> fields) {
        return stageWrite(tx, Op.UPDATE, doc, fence, fields);
    }

    /**
     * Records {@code fence} on the document without changing its data. Do this right after acquiring a
     * lock and <em>before</em> reading the document for a read-modify-write: from then on a zombie's write
     * is refused, so it cannot slip in between your read and your write.
     *
     * <p>On an absent or deleted document an admitted fence is recorded on its tombstone (one is
     * created if the document never existed) and the answer is {@code NotFound}: the document does not
     * exist, and its tombstone now refuses older fences. Waits for {@link AsyncFencedFirestore#claim}, at
     * most the call timeout.
     *
     * @return {@code Applied} (fence recorded on the document); {@code Stale(stored)};
     *     {@code NotFound} (absent or deleted; fence recorded on the tombstone)
     * @throws IllegalArgumentException if {@code doc} is in a lock collection (see the class comment), before any I/O
     * @throws dev.fenceguard.core.FenceGuardException if Firestore fails or does not answer within the
     *     call timeout ({@code TIMEOUT}; the fence may still have been recorded)
     */
    public WriteOutcome claim(DocumentReference doc, FenceToken fence) {
        return wait(async.claim(doc, fence), doc, Op.CLAIM);
    }

    /**
     * Creates or replaces the whole document if the policy admits {@code fence}. A tombstone is
     * replaced (the document comes back) only by an admitted fence. Waits for
     * {@link AsyncFencedFirestore#set}, at most the call timeout.
     *
     * @return {@code Applied}, or {@code Stale(stored)} (a tombstone's fence counts)
     * @throws IllegalArgumentException if {@code fields} is empty, names the fence or deleted field or holds
     *     {@code FieldValue.delete()} (leave the field out: a set replaces the document), or if {@code doc}
     *     is in a lock collection (see the class comment), before any I/O
     * @throws dev.fenceguard.core.FenceGuardException if Firestore fails or does not answer within the
     *     call timeout ({@code TIMEOUT}; the write may still have been applied)
     */
    public WriteOutcome set(DocumentReference doc, FenceToken fence, Map<String, ?> fields) {
        return wait(async.set(doc, fence, fields), doc, Op.SET);
    }

    /**
     * {@link #set(DocumentReference, FenceToken, Map)} inside your transaction: reads {@code doc}
     * through {@code tx} and stages the write if applied. Use this, not a raw {@code tx.set}, to create
     * a document that {@link #check} found absent.
     *
     * @throws IllegalArgumentException as the other overload, before {@code tx} reads anything
     * @throws dev.fenceguard.core.FenceGuardException if the read fails
     */
    public WriteOutcome set(Transaction tx, DocumentReference doc, FenceToken fence, Map<String, ?> fields) {
        return stageWrite(tx, Op.SET, doc, fence, fields);
    }

    /**
     * Replaces the document by a tombstone holding {@code fence}, if the policy admits it: whether the
     * document exists, is already a tombstone (its fence is raised) or never existed (a tombstone is
     * created, so a zombie cannot create the document afterwards). Waits for
     * {@link AsyncFencedFirestore#delete}, at most the call timeout.
     *
     * @return {@code Applied} (the document reads as absent and its tombstone holds {@code fence}), or
     *     {@code Stale(stored)}
     * @throws IllegalArgumentException if {@code doc} is in a lock collection (see the class comment), before any I/O
     * @throws dev.fenceguard.core.FenceGuardException if Firestore fails or does not answer within the
     *     call timeout ({@code TIMEOUT}; the tombstone may still have been written)
     */
    public WriteOutcome delete(DocumentReference doc, FenceToken fence) {
        return wait(async.delete(doc, fence), doc, Op.DELETE);
    }

    /**
     * {@link #delete(DocumentReference, FenceToken)} inside your transaction: reads {@code doc} through
     * {@code tx} and stages the tombstone if applied.
     *
     * @throws IllegalArgumentException if {@code doc} is in a lock collection (see the class comment), before {@code tx} reads anything
     * @throws dev.fenceguard.core.FenceGuardException if the read fails
     */
    public WriteOutcome delete(Transaction tx, DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(tx, "tx");
        rule.check(doc, fence);
        return stage(tx, doc, fence, Op.DELETE, Op.DELETE.observed, Map.of());
    }

    /**
     * The fence check for your own transaction ({@link #claim} inside it): reads {@code doc} through
     * {@code tx} and, if the policy admits {@code fence}, stages the new fence in the same transaction.
     * Call it after your other reads (Firestore transactions read first) and write only if the outcome
     * is applied, and then only with {@code tx.update} (see the class comment).
     *
     * <p>On an absent or deleted document an admitted fence is staged on its tombstone (created if the
     * document never existed), as {@link #claim} does, and the answer is {@code NotFound}. Do not then
     * create the document with a raw {@code tx.set} (it would carry no fence) or {@code tx.create}
     * (it fails, the tombstone exists): to create or recreate it, call
     * {@link #set(Transaction, DocumentReference, FenceToken, Map)} instead of this method.
     *
     * @return {@code Applied} (fence staged), {@code Stale(stored)} (nothing staged), or
     *     {@code NotFound} (absent or tombstone; fence staged on the tombstone)
     * @throws IllegalArgumentException if {@code doc} is in a lock collection (see the class comment), before {@code tx} reads anything
     * @throws dev.fenceguard.core.FenceGuardException if the read fails
     */
    public WriteOutcome check(Transaction tx, DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(tx, "tx");
        rule.check(doc, fence);
        return stage(tx, doc, fence, Op.CLAIM, "check", Map.of());
    }

    /**
     * Removes the tombstones of {@code collection} that no write can need any more: documents whose
     * deleted field is {@code true} and whose fence is below {@code tick(readTime - horizon - clockMargin)},
     * the clock floor of Firestore's clock that long before the read time of the read that removes them
     * ({@link FenceGuardFirestore.Builder#withHorizon}, {@code docs/fence-lifecycle.md}). Safe with no bound
     * on how long a writer pauses: with a horizon, a write that finds no document is refused at or below the
     * horizon of its own read, which is above every fence removed before that read. Live documents are never
     * touched; documents in subcollections of {@code collection} are not part of it.
     *
     * <p>Runs in batches in the order {@code (fence, document id)}: each batch reads Firestore's clock,
     * queries at most the batch size of candidates ({@code _deleted == true}, {@code _fence < horizon}), and
     * removes each one by reading it again and deleting it only if it is unchanged since that read (an
     * update-time precondition) and still a tombstone below the horizon of that read's time. So a tombstone
     * that a write revives or raises after the query stays; one that keeps changing under the purge is left
     * for a later one. Stops when a batch finds fewer than the batch size, or when the purge's time bound
     * has passed; then {@link PurgeResult#resumeAfter()} is the text {@code <fence>/<document id>} of the
     * last document examined, to pass to {@link Purge#withStartAfter}. Each RPC chain (the clock read, a
     * query, the removal of one document) is bounded by the call timeout. Removed documents are counted in
     * {@code fenceguard.purge.removed} ({@code store=firestore}, {@code kind=tombstone}) of the
     * {@link FenceGuardFirestore.Builder#withMetrics metrics}. Not observed as a write. In production the
     * query needs a composite index on the collection: {@code _deleted} ascending, {@code _fence}
     * ascending (docs/firestore.md). Waits for {@link AsyncFencedFirestore#purge}.
     *
     * @return what it removed, and where it stopped
     * @throws IllegalStateException if these writes have no horizon (before any I/O)
     * @throws IllegalArgumentException if {@code collection} is in a lock collection (see the class comment), or
     *     the purge's start key is not a {@link PurgeResult#resumeAfter()} of a Firestore tombstone purge
     *     (before any I/O)
     * @throws NullPointerException if an argument is null
     * @throws dev.fenceguard.core.FenceGuardException if Firestore fails or an RPC chain does not end within the
     *     call timeout ({@code TIMEOUT}); the documents removed until then stay removed
     * @since 0.1
     */
    public PurgeResult purge(CollectionReference collection, Purge purge) {
        return FirestoreErrors.join(async.purge(collection, purge), collection.getPath(), "purge of tombstones");
    }

    private static WriteOutcome wait(CompletionStage<WriteOutcome> stage, DocumentReference doc, Op op) {
        return FirestoreErrors.join(stage, doc.getPath(), op.label);
    }

    /** An update or set inside the caller's transaction: {@code fields} checked before {@code tx} reads anything. */
    private WriteOutcome stageWrite(Transaction tx, Op op, DocumentReference doc, FenceToken fence, Map<String, ?> fields) {
        Objects.requireNonNull(tx, "tx");
        Map<String, Object> data = rule.data(op, doc, fence, fields);
        return stage(tx, doc, fence, op, op.observed, data);
    }

    /**
     * Inside the caller's transaction: reads through it (the SDK runs the transaction function on its
     * own executor and expects it to block), decides, and stages the planned change. A rejection stages
     * nothing. Observed as {@code operation}; the outcome is what was staged, since the commit is the
     * caller's.
     */
    private WriteOutcome stage(Transaction tx, DocumentReference doc, FenceToken fence, Op op, String operation,
            Map<String, Object> data) {
        return rule.writeRule().observe(DocumentRule.kind(doc), operation, fence, () -> {
            DocumentSnapshot read = FirestoreErrors.await(tx.get(doc), doc.getPath(), op.label);
            Plan plan = rule.decide(op, doc, fence, data, read);
            switch (plan.change()) {
                case UPDATE -> tx.update(doc, plan.data());
                case REPLACE -> tx.set(doc, plan.data());
                case NONE -> { }
            }
            return plan.outcome();
        });
    }

    @Override
    public String toString() {
        return "FencedFirestore[" + rule + "]";
    }
}
