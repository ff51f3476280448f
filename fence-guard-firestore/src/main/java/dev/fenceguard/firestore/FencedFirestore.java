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
 * // inside your own transaction:
 * db.runTransaction(tx -> {
 *     if (fenced.check(tx, order, lease.fence()).isApplied()) { tx.update(order, "status", "paid"); }
 *     return null;
 * });
 * }</pre>
 *
 * <p>Deletes keep a tombstone: the document is replaced by {@code {_fence: f, _deleted: true}}, so a
 * zombie's {@link #set} cannot bring it back; your reads should skip documents with {@code _deleted}.
 * Thread-safe.
 */
public final class FencedFirestore {

    private final Firestore db;
    private final FencePolicy policy;
    private final FenceEncoding encoding;
    private final String fenceField;
    private final String deletedField;
    private final LockMetrics metrics;
    private final TransactionOptions options;

    private FencedFirestore(Builder b) {
        this.db = b.db;
        this.policy = b.policy;
        this.encoding = b.encoding;
        this.fenceField = b.fenceField;
        this.deletedField = b.deletedField;
        this.metrics = b.metrics != null ? b.metrics : LockMetrics.automatic();
        this.options = TransactionOptions.createReadWriteOptionsBuilder().setNumberOfAttempts(b.attempts).build();
    }

    public static Builder builder(Firestore db) {
        return new Builder(db);
    }

    /**
     * Updates fields of an existing, not deleted document if the policy admits {@code fence}.
     *
     * @return {@code Applied}; {@code Stale(stored)}; {@code NotFound} if the document does not exist or
     *     was deleted under an older or equal fence
     * @throws IllegalArgumentException if {@code fields} is empty or names the fence or deleted field
     */
    public WriteOutcome update(DocumentReference doc, FenceToken fence, Map<String, Object> fields) {
        Map<String, Object> data = checked(doc, fence, fields);
        return readJudgeWrite(doc, fence, "fenced update", true, tx -> tx.update(doc, data));
    }

    /**
     * Records {@code fence} on the document without changing its data. Do this right after acquiring a
     * lock and <em>before</em> reading the document for a read-modify-write: from then on a zombie's write
     * is refused, so it cannot slip in between your read and your write.
     *
     * @return {@code Applied}, {@code Stale(stored)}, or {@code NotFound} (no document, or a tombstone)
     */
    public WriteOutcome claim(DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(fence, "fence");
        return readJudgeWrite(doc, fence, "fenced claim", true, tx -> tx.update(doc, Map.of(fenceField, encode(fence))));
    }

    /**
     * Creates or replaces the whole document (including a tombstone) if the policy admits {@code fence}.
     *
     * @return {@code Applied} or {@code Stale(stored)}
     */
    public WriteOutcome set(DocumentReference doc, FenceToken fence, Map<String, Object> fields) {
        Map<String, Object> data = checked(doc, fence, fields);
        return readJudgeWrite(doc, fence, "fenced set", false, tx -> tx.set(doc, data));
    }

    /**
     * Replaces the document by a tombstone holding {@code fence}, if the policy admits it. Deleting a
     * tombstone again under a newer fence raises its fence.
     *
     * @return {@code Applied}, {@code Stale(stored)}, or {@code NotFound} if there is no document
     */
    public WriteOutcome delete(DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(fence, "fence");
        return run(doc, "fenced delete", tx -> {
            DocumentSnapshot s = tx.get(doc).get();
            if (!s.exists()) {
                return new WriteOutcome.NotFound(doc.getPath());
            }
            WriteOutcome outcome = judge(s, fence, doc, false);
            if (outcome.isApplied()) {
                tx.set(doc, Map.of(fenceField, encode(fence), deletedField, true));
            }
            return outcome;
        });
    }

    /**
     * The fence check for your own transaction: reads {@code doc} through {@code tx} and, if the policy
     * admits {@code fence}, stages the new fence in the same transaction. Call it before your writes
     * (Firestore transactions read first) and write only if the outcome is applied.
     *
     * @return {@code Applied} (fence staged), {@code Stale(stored)}, or {@code NotFound} if the document
     *     does not exist or is a tombstone
     * @throws dev.fenceguard.core.FenceGuardException if the read fails
     */
    public WriteOutcome check(Transaction tx, DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(tx, "tx");
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(fence, "fence");
        DocumentSnapshot s = FirestoreErrors.await(tx.get(doc), doc.getPath(), "fence check");
        WriteOutcome outcome = judge(s, fence, doc, true);
        if (outcome.isApplied()) {
            tx.update(doc, Map.of(fenceField, encode(fence)));
        }
        return outcome;
    }

    private interface TxWork {
        WriteOutcome apply(Transaction tx) throws InterruptedException, ExecutionException;
    }

    /** One transaction: read the document, judge the fence, and stage {@code write} only if applied. */
    private WriteOutcome readJudgeWrite(DocumentReference doc, FenceToken fence, String operation, boolean mustExist,
            java.util.function.Consumer<Transaction> write) {
        return run(doc, operation, tx -> {
            WriteOutcome outcome = judge(tx.get(doc).get(), fence, doc, mustExist);
            if (outcome.isApplied()) {
                write.accept(tx);
            }
            return outcome;
        });
    }

    private WriteOutcome run(DocumentReference doc, String operation, TxWork work) {
        return FirestoreErrors.await(db.runTransaction(work::apply, options), doc.getPath(), operation);
    }

    private WriteOutcome judge(DocumentSnapshot s, FenceToken fence, DocumentReference doc, boolean mustExist) {
        String resource = doc.getPath();
        if (!s.exists()) {
            return mustExist ? new WriteOutcome.NotFound(resource) : new WriteOutcome.Applied(resource, fence.value());
        }
        long stored = decode(s.get(fenceField));
        if (!policy.admits(fence, stored)) {
            metrics.staleWriteRejected("firestore");
            return new WriteOutcome.Stale(resource, fence.value(), stored, policy);
        }
        if (mustExist && Boolean.TRUE.equals(s.getBoolean(deletedField))) {
            return new WriteOutcome.NotFound(resource);
        }
        return new WriteOutcome.Applied(resource, fence.value());
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
            if (name.equals(fenceField) || name.equals(deletedField)) {
                throw new IllegalArgumentException("fields must not include '" + name + "'; fence-guard sets it");
            }
        }
        Map<String, Object> data = new HashMap<>(fields);
        data.put(fenceField, encode(fence));
        return data;
    }

    private Object encode(FenceToken fence) {
        return encoding == FenceEncoding.INTEGER ? (Object) fence.value() : fence.toString();
    }

    private static long decode(Object stored) {
        if (stored == null) {
            return 0;
        }
        if (stored instanceof Number n) {
            return n.longValue();
        }
        String text = stored.toString();
        return text.chars().allMatch(c -> c == '0') ? 0 : FenceToken.parse(text).value();
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
