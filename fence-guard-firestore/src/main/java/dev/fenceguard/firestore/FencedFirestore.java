package dev.fenceguard.firestore;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Transaction;
import com.google.cloud.firestore.TransactionOptions;
import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.WriteRule;
import dev.fenceguard.firestore.internal.FirestoreErrors;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;

/**
 * Fenced writes to Firestore documents, each in one transaction that reads the document's stored
 * fence and writes the data and the new fence only if the {@link FencePolicy} admits the presented
 * one. The fence is a field of the document ({@code _fence}, an integer by default or the 15-character
 * text form); a missing fence counts as 0.
 *
 * <pre>{@code
 * FencedFirestore fenced = FencedFirestore.builder(db).build();
 * fenced.update(db.collection("orders").document("42"), lease.fence(), Map.of("status", "paid")).orThrow();
 * // inside your own transaction (after your other reads):
 * db.runTransaction(tx -> {
 *     if (fenced.check(tx, order, lease.fence()).isApplied()) { tx.update(order, "status", "paid"); }
 *     return null;
 * });
 * }</pre>
 *
 * <p><b>Tombstones.</b> A deleted document is replaced by a tombstone {@code {_fence: f, _deleted: true}}
 * that keeps the fence, so a zombie's {@link #set} cannot bring it back; your reads should skip
 * documents with {@code _deleted}. A fenced delete of a document that never existed writes a tombstone
 * too, and so does a {@link #claim} (or {@link #check}) of an absent document. Once a document has seen
 * fence {@code f}, no call here with an older fence changes it. Tombstones are ordinary documents:
 * each costs storage and counts in queries until purged. Remove one (a plain {@code delete()}) only
 * when no holder can still present a fence at or below its fence, e.g. when its fence is below a
 * horizon under which you know all live and paused leases lie: the lock's current fence minus a
 * margin, or tombstones older than the longest lease TTL plus the longest pause you allow for.
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
 * <p>Thread-safe.
 */
public final class FencedFirestore {

    private final Firestore db;
    private final WriteRule rule;
    private final String fenceField;
    private final String deletedField;
    private final TransactionOptions options;

    private FencedFirestore(Builder b) {
        this.db = b.db;
        this.rule = new WriteRule(b.policy, b.encoding, b.metrics != null ? b.metrics : LockMetrics.automatic(), "firestore");
        this.fenceField = b.fenceField;
        this.deletedField = b.deletedField;
        this.options = TransactionOptions.createReadWriteOptionsBuilder().setNumberOfAttempts(b.attempts).build();
    }

    public static Builder builder(Firestore db) {
        return new Builder(db);
    }

    /**
     * Updates fields of an existing, not deleted document if the policy admits {@code fence}. An
     * update never creates a document or a tombstone: on an absent or deleted document it changes
     * nothing.
     *
     * @return {@code Applied}; {@code Stale(stored)} if the policy refuses {@code fence} (a tombstone's
     *     fence counts); {@code NotFound} if the document does not exist or is a tombstone the policy
     *     admits {@code fence} against (nothing recorded)
     * @throws IllegalArgumentException if {@code fields} is empty or names the fence or deleted field
     *     (or a field path inside them)
     */
    public WriteOutcome update(DocumentReference doc, FenceToken fence, Map<String, Object> fields) {
        Map<String, Object> data = checked(doc, fence, fields);
        return run(doc, Op.UPDATE, tx -> stage(tx, doc, fence, Op.UPDATE, data, tx.get(doc).get()));
    }

    /**
     * {@link #update(DocumentReference, FenceToken, Map)} inside your transaction: reads {@code doc}
     * through {@code tx} and stages the update if applied.
     *
     * @throws IllegalArgumentException as the other overload
     * @throws dev.fenceguard.core.FenceGuardException if the read fails
     */
    public WriteOutcome update(Transaction tx, DocumentReference doc, FenceToken fence, Map<String, Object> fields) {
        Objects.requireNonNull(tx, "tx");
        Map<String, Object> data = checked(doc, fence, fields);
        return stage(tx, doc, fence, Op.UPDATE, data, read(tx, doc, Op.UPDATE));
    }

    /**
     * Records {@code fence} on the document without changing its data. Do this right after acquiring a
     * lock and <em>before</em> reading the document for a read-modify-write: from then on a zombie's write
     * is refused, so it cannot slip in between your read and your write.
     *
     * <p>On an absent or deleted document an admitted fence is recorded on its tombstone (one is
     * created if the document never existed) and the answer is {@code NotFound}: the document does not
     * exist, and its tombstone now refuses older fences.
     *
     * @return {@code Applied} (fence recorded on the document); {@code Stale(stored)};
     *     {@code NotFound} (absent or deleted; fence recorded on the tombstone)
     */
    public WriteOutcome claim(DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(fence, "fence");
        return run(doc, Op.CLAIM, tx -> stage(tx, doc, fence, Op.CLAIM, null, tx.get(doc).get()));
    }

    /**
     * Creates or replaces the whole document if the policy admits {@code fence}. A tombstone is
     * replaced (the document comes back) only by an admitted fence.
     *
     * @return {@code Applied}, or {@code Stale(stored)} (a tombstone's fence counts)
     * @throws IllegalArgumentException if {@code fields} is empty or names the fence or deleted field
     */
    public WriteOutcome set(DocumentReference doc, FenceToken fence, Map<String, Object> fields) {
        Map<String, Object> data = checked(doc, fence, fields);
        return run(doc, Op.SET, tx -> stage(tx, doc, fence, Op.SET, data, tx.get(doc).get()));
    }

    /**
     * {@link #set(DocumentReference, FenceToken, Map)} inside your transaction: reads {@code doc}
     * through {@code tx} and stages the write if applied. Use this, not a raw {@code tx.set}, to create
     * a document that {@link #check} found absent.
     *
     * @throws IllegalArgumentException as the other overload
     * @throws dev.fenceguard.core.FenceGuardException if the read fails
     */
    public WriteOutcome set(Transaction tx, DocumentReference doc, FenceToken fence, Map<String, Object> fields) {
        Objects.requireNonNull(tx, "tx");
        Map<String, Object> data = checked(doc, fence, fields);
        return stage(tx, doc, fence, Op.SET, data, read(tx, doc, Op.SET));
    }

    /**
     * Replaces the document by a tombstone holding {@code fence}, if the policy admits it: whether the
     * document exists, is already a tombstone (its fence is raised) or never existed (a tombstone is
     * created, so a zombie cannot create the document afterwards).
     *
     * @return {@code Applied} (the document reads as absent and its tombstone holds {@code fence}), or
     *     {@code Stale(stored)}
     */
    public WriteOutcome delete(DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(fence, "fence");
        return run(doc, Op.DELETE, tx -> stage(tx, doc, fence, Op.DELETE, null, tx.get(doc).get()));
    }

    /**
     * {@link #delete(DocumentReference, FenceToken)} inside your transaction: reads {@code doc} through
     * {@code tx} and stages the tombstone if applied.
     *
     * @throws dev.fenceguard.core.FenceGuardException if the read fails
     */
    public WriteOutcome delete(Transaction tx, DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(tx, "tx");
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(fence, "fence");
        return stage(tx, doc, fence, Op.DELETE, null, read(tx, doc, Op.DELETE));
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
     * @throws dev.fenceguard.core.FenceGuardException if the read fails
     */
    public WriteOutcome check(Transaction tx, DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(tx, "tx");
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(fence, "fence");
        return stage(tx, doc, fence, Op.CLAIM, null, read(tx, doc, Op.CLAIM));
    }

    private enum Op {
        UPDATE("fenced update"), SET("fenced set"), CLAIM("fenced claim"), DELETE("fenced delete");

        final String label;

        Op(String label) {
            this.label = label;
        }
    }

    private interface TxWork {
        WriteOutcome apply(Transaction tx) throws InterruptedException, ExecutionException;
    }

    /** Our own transactions read raw, so that the SDK sees (and retries) contention errors itself. */
    private WriteOutcome run(DocumentReference doc, Op op, TxWork work) {
        return FirestoreErrors.await(db.runTransaction(work::apply, options), doc.getPath(), op.label);
    }

    private static DocumentSnapshot read(Transaction tx, DocumentReference doc, Op op) {
        return FirestoreErrors.await(tx.get(doc), doc.getPath(), op.label);
    }

    /**
     * The write rule for one read document: judge {@code fence} against the stored one (a tombstone's
     * counts; absent is 0), then stage the operation's write in {@code tx} only if it changes something
     * the rule allows. A rejection stages nothing.
     */
    private WriteOutcome stage(Transaction tx, DocumentReference doc, FenceToken fence, Op op, Map<String, Object> data,
            DocumentSnapshot s) {
        String resource = doc.getPath();
        long stored = s.exists() ? WriteRule.decode(s.get(fenceField)) : 0;
        if (!rule.admits(fence, stored)) {
            return rule.stale(resource, fence, stored);
        }
        boolean live = s.exists() && !Boolean.TRUE.equals(s.getBoolean(deletedField));
        switch (op) {
            case UPDATE -> {
                if (!live) {
                    return new WriteOutcome.NotFound(resource); // an update records nothing on a tombstone
                }
                tx.update(doc, data);
            }
            case SET -> tx.set(doc, data);
            case CLAIM -> {
                if (!live) {
                    tx.set(doc, tombstone(fence));
                    return new WriteOutcome.NotFound(resource);
                }
                tx.update(doc, Map.of(fenceField, encode(fence)));
            }
            case DELETE -> tx.set(doc, tombstone(fence));
        }
        return new WriteOutcome.Applied(resource, fence.value());
    }

    private Map<String, Object> tombstone(FenceToken fence) {
        return Map.of(fenceField, encode(fence), deletedField, true);
    }

    private Map<String, Object> checked(DocumentReference doc, FenceToken fence, Map<String, Object> fields) {
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(fence, "fence");
        Objects.requireNonNull(fields, "fields");
        if (fields.isEmpty()) {
            throw new IllegalArgumentException("fields must not be empty");
        }
        for (String name : fields.keySet()) {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("field names must not be empty");
            }
            // update() reads names as dotted field paths: "_fence.x" would overwrite the fence with a map
            if (name.equals(fenceField) || name.equals(deletedField)
                    || name.startsWith(fenceField + ".") || name.startsWith(deletedField + ".")) {
                throw new IllegalArgumentException("fields must not include '" + name + "'; fence-guard sets it");
            }
        }
        Map<String, Object> data = new HashMap<>(fields);
        data.put(fenceField, encode(fence));
        return data;
    }

    private Object encode(FenceToken fence) {
        return rule.encode(fence);
    }


    /** Options for {@link FencedFirestore}. Not thread-safe. */
    public static final class Builder {
        private final Firestore db;
        private FencePolicy policy = FencePolicy.SAME_OR_NEWER;
        private FenceEncoding encoding = FenceEncoding.INTEGER;
        private String fenceField = "_fence";
        private String deletedField = "_deleted";
        private LockMetrics metrics;
        private int attempts = 25;

        private Builder(Firestore db) {
            this.db = Objects.requireNonNull(db, "db");
        }

        public Builder withPolicy(FencePolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** Integer field (default) or the 15-character text form. */
        public Builder withEncoding(FenceEncoding encoding) {
            this.encoding = Objects.requireNonNull(encoding, "encoding");
            return this;
        }

        /**
         * The fence field; default {@code _fence}.
         *
         * @throws IllegalArgumentException if empty or equal to the deleted field
         */
        public Builder withFenceField(String field) {
            this.fenceField = field(field, deletedField);
            return this;
        }

        /**
         * The tombstone marker field; default {@code _deleted}.
         *
         * @throws IllegalArgumentException if empty or equal to the fence field
         */
        public Builder withDeletedField(String field) {
            this.deletedField = field(field, fenceField);
            return this;
        }

        public Builder withMetrics(LockMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /** How often the SDK may run a contended transaction; default 25. */
        public Builder withTransactionAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("transaction attempts must be at least 1, was " + attempts);
            }
            this.attempts = attempts;
            return this;
        }

        public FencedFirestore build() {
            return new FencedFirestore(this);
        }

        private static String field(String name, String other) {
            Objects.requireNonNull(name, "field");
            if (name.isEmpty() || name.equals(other)) {
                throw new IllegalArgumentException("field must be non-empty and differ from '" + other + "', was '" + name + "'");
            }
            return name;
        }
    }
}
