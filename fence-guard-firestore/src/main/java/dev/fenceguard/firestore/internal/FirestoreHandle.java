package dev.fenceguard.firestore.internal;

import com.google.api.core.ApiFuture;
import com.google.cloud.Timestamp;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldPath;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Precondition;
import com.google.cloud.firestore.WriteBatch;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The module's one way to Firestore, shared by the lock backend and the fenced writes: the client,
 * the settings both use, and the one operation both are made of, a read followed by a write that
 * applies only if the document is still as read (a compare-and-set on one document), re-read after a
 * lost race, the whole chain under one deadline ({@link BoundedCall}). Immutable and thread-safe.
 */
public final class FirestoreHandle {

    /** The default of every builder's {@code writeAttempts}. */
    public static final int DEFAULT_ATTEMPTS = 25;

    private final Firestore db;
    private final int attempts;

    /**
     * @param attempts how many reads (each followed by a conditional write) an operation may make
     *     before it gives up under contention; at least 1
     */
    public FirestoreHandle(Firestore db, int attempts) {
        this.db = Objects.requireNonNull(db, "db");
        this.attempts = requireAttempts(attempts);
    }

    /**
     * The {@code writeAttempts} setting of a builder, checked when it is set (the one check and message
     * for every builder of this module).
     *
     * @throws IllegalArgumentException if below 1
     */
    public static int requireAttempts(int attempts) {
        if (attempts < 1) {
            throw new IllegalArgumentException("writeAttempts must be at least 1, was " + attempts);
        }
        return attempts;
    }

    /** The client, for building document references. */
    public Firestore db() {
        return db;
    }

    /** How many reads (each followed by a conditional write) an operation may make. */
    public int attempts() {
        return attempts;
    }

    /** The answer of an operation that lost every race it ran: {@code UNAVAILABLE}. */
    public <T> T lostRaces(String subject, String operation) {
        throw new FenceGuardException(ErrorCode.UNAVAILABLE, subject, operation + " lost " + attempts + " races in a row");
    }

    /**
     * The server's clock at {@code read}: its read time in epoch milliseconds rounded down. For a
     * whole-millisecond expiry {@code e}, {@code floor(t) < e} exactly when {@code t < e}, so rounding
     * never revives a lease, an entry or a result. The one clock every operation of this module judges
     * expiry and retention by.
     */
    public static long readMillis(DocumentSnapshot read, String subject) {
        return readMillis(read.getReadTime(), subject);
    }

    /** A read time in epoch milliseconds rounded down, as {@link #readMillis(DocumentSnapshot, String)}. */
    public static long readMillis(Timestamp t, String subject) {
        if (t == null) { // never seen: every read response carries a read time
            throw new FenceGuardException(ErrorCode.INTERNAL, subject, "Firestore returned no read time; cannot judge expiry");
        }
        return Math.addExact(Math.multiplyExact(t.getSeconds(), 1000L), t.getNanos() / 1_000_000);
    }

    /**
     * What an operation does after a read: finish with a value, or send a conditional write and finish
     * with the value if it applies (a lost race reads again).
     *
     * @param value the operation's answer
     * @param write the conditional write, or null to finish without writing
     */
    public record Step<T>(T value, Supplier<? extends ApiFuture<?>> write) {

        /** Finish with {@code value}, writing nothing. */
        public static <T> Step<T> finish(T value) {
            return new Step<>(value, null);
        }

        /** Send {@code write}; if it applies, finish with {@code value}, if it loses its race, read again. */
        public static <T> Step<T> write(Supplier<? extends ApiFuture<?>> write, T value) {
            return new Step<>(value, Objects.requireNonNull(write, "write"));
        }
    }

    /**
     * Reads {@code doc}, lets {@code decide} choose the next {@link Step} from the snapshot, and repeats
     * both while the conditional write loses its race, at most {@link #attempts()} times; then the
     * answer is {@code contended.get()} (which may throw a {@link dev.fenceguard.core.FenceGuardException}).
     * No thread waits: each RPC is sent from the callback of the one before. The future fails with
     * {@code TIMEOUT} at {@code timeout}, and with the mapped error if an RPC fails or {@code decide}
     * throws.
     *
     * @param subject the lock key or resource named in errors
     * @param operation the operation named in errors ("acquire", "fenced set", ...)
     */
    public <T> CompletableFuture<T> readThenWrite(String subject, String operation, Duration timeout, DocumentReference doc,
            Function<DocumentSnapshot, Step<T>> decide, Supplier<T> contended) {
        return BoundedCall.start(subject, operation, timeout, call -> attempt(call, doc, decide, contended, 1));
    }

    /**
     * The two RPCs every operation is made of, with nothing written: a read of {@code reserved} (a
     * document no lock key or resource maps to) and the commit of an empty batch. This opens the gRPC
     * channel and loads the SDK's read and commit paths.
     */
    public CompletableFuture<Void> warmUp(DocumentReference reserved, Duration timeout) {
        return readThenWrite(null, "warm-up", timeout, reserved, read -> Step.write(() -> db.batch().commit(), Boolean.TRUE),
                () -> Boolean.TRUE).thenApply(done -> null);
    }

    private <T> void attempt(BoundedCall<T> call, DocumentReference doc, Function<DocumentSnapshot, Step<T>> decide,
            Supplier<T> contended, int attempt) {
        call.send(doc::get, snapshot -> {
            Step<T> step = decide.apply(snapshot);
            if (step.write() == null) {
                call.complete(step.value());
                return;
            }
            call.sendConditional(step.write(), written -> {
                if (written) {
                    call.complete(step.value());
                } else if (attempt < attempts) {
                    attempt(call, doc, decide, contended, attempt + 1);
                } else {
                    call.complete(contended.get());
                }
            });
        });
    }

    /**
     * Writes the fields named by {@code fields} (keys are dotted field paths, as in
     * {@link DocumentReference#update(Map)}) only if the document is unchanged since {@code read}: an
     * update with an update-time precondition, or a {@code create} when the read found no document (keys
     * are then field names).
     */
    public static ApiFuture<?> updateIfUnchanged(DocumentReference doc, DocumentSnapshot read, Map<String, Object> fields) {
        return read.exists() ? doc.update(fields, Precondition.updatedAt(read.getUpdateTime())) : doc.create(fields);
    }

    /**
     * Replaces the whole document by {@code data} (keys are field names, as in
     * {@link DocumentReference#set(Map)}) only if it is unchanged since {@code read}, with the result
     * {@code set} would give.
     *
     * <p>Firestore's {@code set} takes no precondition, so: when the read found no document, a
     * {@code create}; otherwise one update with an update-time precondition whose mask names every field
     * of {@code data} and every top-level field of the read document (those not in {@code data} are
     * deleted). When {@code data} holds a transform ({@code FieldValue.increment(..)},
     * {@code serverTimestamp()}, ...), that update would apply it to the old value, where {@code set}
     * starts from nothing; then the precondition is checked by a first write (deleting one field) and
     * the document replaced by a {@code set} in the same atomic commit.
     */
    public ApiFuture<?> replaceIfUnchanged(DocumentReference doc, DocumentSnapshot read, Map<String, Object> data) {
        if (!read.exists()) {
            return doc.create(data);
        }
        Precondition unchanged = Precondition.updatedAt(read.getUpdateTime());
        if (data.values().stream().anyMatch(v -> v instanceof FieldValue)) {
            WriteBatch batch = db.batch();
            batch.update(doc, unchanged, FieldPath.of(data.keySet().iterator().next()), FieldValue.delete());
            batch.set(doc, data);
            return batch.commit();
        }
        List<Object> pathsAndValues = new ArrayList<>();
        data.forEach((name, value) -> {
            pathsAndValues.add(FieldPath.of(name));
            pathsAndValues.add(value);
        });
        Map<String, Object> old = read.getData();
        if (old != null) {
            for (String name : old.keySet()) {
                if (!data.containsKey(name)) {
                    pathsAndValues.add(FieldPath.of(name));
                    pathsAndValues.add(FieldValue.delete());
                }
            }
        }
        return doc.update(unchanged, (FieldPath) pathsAndValues.get(0), pathsAndValues.get(1),
                pathsAndValues.subList(2, pathsAndValues.size()).toArray());
    }
}
