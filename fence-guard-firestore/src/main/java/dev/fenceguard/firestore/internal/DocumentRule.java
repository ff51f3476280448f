package dev.fenceguard.firestore.internal;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.Timestamp;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.internal.Horizon;
import dev.fenceguard.core.spi.WriteRule;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The write rule on Firestore documents, in one place for the stand-alone fenced writes (a
 * conditional write, see {@link FirestoreHandle}) and the ones inside the caller's transaction: the
 * argument checks, done before any I/O, and the decision taken from a read document, which says the
 * outcome and what to write. Immutable and thread-safe.
 */
public final class DocumentRule {

    /** A fenced operation; its label names it in errors, its name (lower case) in observations. */
    public enum Op {
        UPDATE, SET, CLAIM, DELETE;

        /** The {@code operation} key value of its observation. */
        public final String observed = name().toLowerCase(Locale.ROOT);
        public final String label = "fenced " + observed;
    }

    /** How a plan changes the document. */
    public enum Change {
        /** Nothing to write. */
        NONE,
        /** Update the named fields (keys are dotted field paths, as in {@code update}). */
        UPDATE,
        /** Replace the whole document (keys are field names, as in {@code set}). */
        REPLACE
    }

    /** The decision for one read document: the outcome, and the change that makes it true (none for a rejection). */
    public record Plan(WriteOutcome outcome, Change change, Map<String, Object> data) {}

    private final WriteRule rule;
    private final String fenceField;
    private final String deletedField;
    private final List<String> lockCollections;
    private final Optional<Horizon> horizon;

    /**
     * The rule {@code rule} on documents with these fields, refusing documents in {@code lockCollections};
     * with a {@code horizon}, a write that would create a document's fence record is held to it (rule 1 of
     * docs/fence-lifecycle.md).
     */
    public DocumentRule(WriteRule rule, String fenceField, String deletedField, List<String> lockCollections,
            Optional<Horizon> horizon) {
        this.rule = Objects.requireNonNull(rule, "rule");
        this.fenceField = Objects.requireNonNull(fenceField, "fenceField");
        this.deletedField = Objects.requireNonNull(deletedField, "deletedField");
        this.lockCollections = List.copyOf(lockCollections);
        this.horizon = Objects.requireNonNull(horizon, "horizon");
    }

    /** The horizon writes are held to and purges use, if any. */
    public Optional<Horizon> horizon() {
        return horizon;
    }

    /** The field that holds a resource's fence. */
    public String fenceField() {
        return fenceField;
    }

    /** The field that marks a tombstone. */
    public String deletedField() {
        return deletedField;
    }

    /** The lock collections fenced writes and purges refuse. */
    public List<String> lockCollections() {
        return lockCollections;
    }

    /** Whether {@code read} is a tombstone: it exists and its deleted field is {@code true}. */
    public boolean isTombstone(DocumentSnapshot read) {
        return read.exists() && Boolean.TRUE.equals(read.getBoolean(deletedField));
    }

    /**
     * {@code tick(t - ageMicros)}: the clock floor of the server's clock {@code ageMicros} before the
     * read time {@code t}, in microseconds (Firestore's read times carry them).
     */
    public static long floorBefore(Timestamp t, long ageMicros, String subject) {
        if (t == null) { // never seen: every read response carries a read time
            throw new FenceGuardException(ErrorCode.INTERNAL, subject, "Firestore returned no read time; cannot judge the horizon");
        }
        long micros = Math.addExact(Math.multiplyExact(t.getSeconds(), 1_000_000L), t.getNanos() / 1_000);
        return ClockFloor.floorAtMicros(micros - ageMicros);
    }

    /** The write rule itself, which also observes each write. */
    public WriteRule writeRule() {
        return rule;
    }

    /**
     * The {@code resource.type} of writes to {@code doc}: its collection's id ({@code orders} for
     * {@code tenants/t1/orders/42}), bounded where a document path is not.
     */
    public static String kind(DocumentReference doc) {
        return doc.getParent().getId();
    }

    /**
     * Checks a call that carries no data (claim, delete, check).
     *
     * @throws NullPointerException if {@code doc} or {@code fence} is null
     * @throws IllegalArgumentException if {@code doc} is in a lock collection
     */
    public void check(DocumentReference doc, FenceToken fence) {
        Objects.requireNonNull(doc, "doc");
        LockCollections.requireOutside(doc, lockCollections);
        Objects.requireNonNull(fence, "fence");
    }

    /**
     * Checks a call that carries {@code fields} and returns the data to write: the fields plus the fence.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code doc} is in a lock collection, {@code fields} is empty,
     *     names the fence or deleted field (or a field path inside them), or, for a set, holds
     *     {@code FieldValue.delete()} (a set replaces the document: leave the field out)
     */
    public Map<String, Object> data(Op op, DocumentReference doc, FenceToken fence, Map<String, ?> fields) {
        check(doc, fence);
        // Copied first, then checked: what is checked is what is written, whatever the caller does to its map later.
        Map<String, Object> data = new HashMap<>(Objects.requireNonNull(fields, "fields"));
        if (data.isEmpty()) {
            throw new IllegalArgumentException("fields must not be empty");
        }
        for (Map.Entry<String, Object> field : data.entrySet()) {
            String name = field.getKey();
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("field names must not be empty");
            }
            // update() reads names as dotted field paths: "_fence.x" would overwrite the fence with a map
            if (name.equals(fenceField) || name.equals(deletedField)
                    || name.startsWith(fenceField + ".") || name.startsWith(deletedField + ".")) {
                throw new IllegalArgumentException("fields must not include '" + name + "'; fence-guard sets it");
            }
            if (op == Op.SET && field.getValue() == FieldValue.delete()) {
                throw new IllegalArgumentException("a fenced set replaces the whole document: leave field '" + name
                        + "' out instead of passing FieldValue.delete()");
            }
        }
        data.put(fenceField, rule.encode(fence));
        return data;
    }

    /**
     * The write rule for one read document: judge {@code fence} against the stored one (a tombstone's
     * counts; absent is 0), then plan the operation's change only if the rule allows one. A rejection
     * plans nothing and is counted in the metrics.
     *
     * @param data from {@link #data} for update and set; ignored for claim and delete
     */
    public Plan decide(Op op, DocumentReference doc, FenceToken fence, Map<String, Object> data, DocumentSnapshot read) {
        String resource = doc.getPath();
        long stored = read.exists() ? WriteRule.decode(read.get(fenceField)) : 0;
        if (!rule.admits(fence, stored)) {
            return new Plan(rule.stale(resource, fence, stored), Change.NONE, Map.of());
        }
        // Rule 1: a write that would create the fence record of an absent document is judged against the
        // horizon at this read's time. The write that follows applies only if the document is still absent
        // (a create, or the commit of the caller's transaction), so a purge that removed the record did so
        // before this read, whose time is then at or after the purge's.
        if (!read.exists() && op != Op.UPDATE && horizon.isPresent()) {
            long h = floorBefore(read.getReadTime(), horizon.get().ageMicros(), resource);
            if (fence.value() <= h) {
                return new Plan(rule.belowHorizon(resource, fence, h), Change.NONE, Map.of());
            }
        }
        boolean live = read.exists() && !Boolean.TRUE.equals(read.getBoolean(deletedField));
        WriteOutcome applied = new WriteOutcome.Applied(resource, fence.value());
        WriteOutcome notFound = new WriteOutcome.NotFound(resource);
        return switch (op) {
            // an update records nothing on a tombstone or an absent document
            case UPDATE -> live ? new Plan(applied, Change.UPDATE, data) : new Plan(notFound, Change.NONE, Map.of());
            case SET -> new Plan(applied, Change.REPLACE, data);
            case CLAIM -> live ? new Plan(applied, Change.UPDATE, Map.of(fenceField, rule.encode(fence)))
                    : new Plan(notFound, Change.REPLACE, tombstone(fence));
            case DELETE -> new Plan(applied, Change.REPLACE, tombstone(fence));
        };
    }

    private Map<String, Object> tombstone(FenceToken fence) {
        return Map.of(fenceField, rule.encode(fence), deletedField, true);
    }

    @Override
    public String toString() {
        return rule.policy() + ", " + rule.encoding() + " in '" + fenceField + "', tombstones marked by '" + deletedField
                + "', lock collections " + lockCollections
                + horizon.map(h -> ", horizon " + h.age() + ", clock margin " + h.margin()).orElse("");
    }
}
