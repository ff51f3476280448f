package dev.fenceguard.firestore.internal;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldPath;
import com.google.cloud.firestore.Precondition;
import com.google.cloud.firestore.Query;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.QuerySnapshot;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.internal.PurgeLoop;
import dev.fenceguard.core.spi.WriteRule;
import dev.fenceguard.firestore.internal.FirestoreHandle.Step;
import io.grpc.Context;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import java.util.function.LongUnaryOperator;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The purge of fence records on Firestore (docs/fence-lifecycle.md), one for tombstones and free lock
 * documents alike. Each batch reads the server's clock (a read of a document nothing writes), queries the
 * candidates whose fence is below the horizon at that time, in the order {@code (fence, document id)},
 * and removes each one by the module's one path ({@link FirestoreHandle#readThenWrite}): it reads the
 * document again, judges it by {@code removable} against that read's own time, and deletes it only if it
 * is unchanged since that read (an update-time precondition); a lost race reads and judges again. So a
 * document that a write revived or raised between the query and the delete stays: the query only finds
 * candidates, the re-read decides. Immutable and thread-safe.
 *
 * <p>Why not Firestore transactions: the same compare-and-set on one document, without the transaction
 * locks that made the emulator time out under contention (see {@link FirestoreHandle}), and the read
 * time of the re-read is the server clock the rule needs.
 */
public final class Purger {

    /** How many documents of one batch are removed at once: enough to hide round trips, few enough not to flood the channel. */
    static final int WINDOW = 16;

    private final FirestoreHandle firestore;
    private final String fenceField;
    private final LongFunction<Object> encode;
    private final DocumentReference clock;
    private final Duration timeout;
    private final String kind;
    private final LongConsumer counted;

    /**
     * @param fenceField the field the query orders and filters by
     * @param encode a fence as stored, for the query's bound and cursor
     * @param clock a document nothing writes, read for the server's clock before each batch's query
     * @param timeout the bound of each RPC chain (the clock read, a query, the removal of one document)
     * @param kind {@code tombstone} or {@code lock}, for errors
     * @param counted told how many documents each batch removed
     */
    public Purger(FirestoreHandle firestore, String fenceField, LongFunction<Object> encode, DocumentReference clock,
            Duration timeout, String kind, LongConsumer counted) {
        this.firestore = firestore;
        this.fenceField = fenceField;
        this.encode = encode;
        this.clock = clock;
        this.timeout = timeout;
        this.kind = kind;
        this.counted = counted;
    }

    /** Where a purge starts after: the fence and document id of the last document examined. */
    public record Cursor(long fence, String id) {

        /** The text form handed out as {@link PurgeResult#resumeAfter()}: {@code <fence>/<document id>}. */
        @Override
        public String toString() {
            return fence + "/" + id;
        }

        /**
         * The cursor {@code key} (from {@link Purge#startAfter()}) stands for.
         *
         * @throws IllegalArgumentException if it is not the text form of a cursor
         */
        public static Cursor parse(Object key) {
            Objects.requireNonNull(key, "startAfter");
            String text = key.toString();
            int slash = text.indexOf('/');
            if (key instanceof String && slash > 0 && slash < text.length() - 1 && text.indexOf('/', slash + 1) < 0) {
                try {
                    long fence = Long.parseLong(text.substring(0, slash));
                    if (fence >= 0) {
                        return new Cursor(fence, text.substring(slash + 1));
                    }
                } catch (NumberFormatException e) {
                    // refused below
                }
            }
            String shown = text.length() > 80 ? text.substring(0, 80) + "..." : text;
            throw new IllegalArgumentException("startAfter of a Firestore purge must be the resumeAfter() of an earlier purge of"
                    + " the same collection, '<fence>/<document id>', was " + (key instanceof String ? "'" + shown + "'"
                    : "a " + key.getClass().getName()));
        }
    }

    /**
     * Runs {@code purge} over {@code collection}.
     *
     * @param candidates adds the query's filters other than the fence's (e.g. {@code _deleted == true})
     * @param horizonAt the purge horizon at a server read time: candidates have a fence below it
     * @param removable the re-check on a document's newest read, against that read's time
     * @throws IllegalArgumentException if the purge's start key is not a cursor (before any I/O)
     */
    public CompletableFuture<PurgeResult> run(CollectionReference collection, Purge purge, UnaryOperator<Query> candidates,
            LongUnaryOperator horizonAt, Predicate<DocumentSnapshot> removable) {
        Cursor start = purge.startAfter().map(Cursor::parse).orElse(null);
        Batches batches = new Batches(collection, purge, candidates, horizonAt, removable);
        return PurgeLoop.runAsync(purge, start, batches::batch, Cursor::toString);
    }

    /** The server's read time of {@link #clock}: the clock each batch's query bound is taken from. */
    private CompletableFuture<Timestamp> serverTime() {
        return firestore.readThenWrite(clock.getPath(), "purge of " + kind + "s (clock read)", timeout, clock,
                read -> Step.finish(read.getReadTime()), () -> null);
    }

    /** The epoch microseconds of a read time. */
    public static long micros(Timestamp t) {
        return Math.addExact(Math.multiplyExact(t.getSeconds(), 1_000_000L), t.getNanos() / 1_000);
    }

    private final class Batches {
        private final CollectionReference collection;
        private final Purge purge;
        private final UnaryOperator<Query> candidates;
        private final LongUnaryOperator horizonAt;
        private final Predicate<DocumentSnapshot> removable;
        /**
         * The gRPC context the purge was called in. Every batch and every removal starts in it, though each is
         * started from the callback of an earlier one: gRPC's context storage may make a child of the current
         * context each time one is attached (the Firestore SDK installs OpenTelemetry's, which does), so work
         * started in the last step's context would grow a chain of contexts by one per document, held until the
         * purge returns (gRPC logs "Context ancestry chain length is abnormally long" past 1,000).
         */
        private final Context origin = Context.current();

        Batches(CollectionReference collection, Purge purge, UnaryOperator<Query> candidates, LongUnaryOperator horizonAt,
                Predicate<DocumentSnapshot> removable) {
            this.collection = collection;
            this.purge = purge;
            this.candidates = candidates;
            this.horizonAt = horizonAt;
            this.removable = removable;
        }

        /** One batch: the candidates after {@code after} (null: from the first) at the server's time, each removed if the re-check allows. */
        CompletableFuture<PurgeLoop.Batch<Cursor>> batch(Cursor after) {
            return inOrigin(() -> batchHere(after));
        }

        private CompletableFuture<PurgeLoop.Batch<Cursor>> batchHere(Cursor after) {
            return serverTime().thenCompose(now -> {
                if (now == null) {
                    throw new IllegalStateException("Firestore returned no read time; cannot judge the horizon");
                }
                long h = horizonAt.applyAsLong(micros(now));
                Query q = candidates.apply(collection).whereLessThan(fenceField, encode.apply(h))
                        .orderBy(fenceField).orderBy(FieldPath.documentId()).limit(purge.batchSize());
                Query page = after == null ? q : q.startAfter(encode.apply(after.fence()), collection.document(after.id()));
                return BoundedCall.<QuerySnapshot>start(collection.getPath(), "purge of " + kind + "s (query)", timeout,
                        call -> call.send(page::get, call::complete));
            }).thenCompose(found -> {
                List<QueryDocumentSnapshot> docs = found.getDocuments();
                return removeAll(docs).thenApply(removed -> {
                    counted.accept(removed);
                    // Only a full batch needs its last position (the next one's start).
                    QueryDocumentSnapshot last = docs.size() < purge.batchSize() ? null : docs.get(docs.size() - 1);
                    Cursor next = last == null ? null : new Cursor(WriteRule.decode(last.get(fenceField)), last.getId());
                    return new PurgeLoop.Batch<>(docs.size(), next, removed);
                });
            });
        }

        /** Starts {@code work} with {@link #origin} current. */
        private <T> T inOrigin(Supplier<T> work) {
            Context previous = origin.attach();
            try {
                return work.get();
            } finally {
                origin.detach(previous);
            }
        }

        /** Removes what the re-check allows of {@code docs}, at most {@link #WINDOW} at once: how many went. */
        private CompletableFuture<Long> removeAll(List<QueryDocumentSnapshot> docs) {
            Window window = new Window(docs);
            window.start();
            return window.done;
        }

        /** One document: read again, judged by the read's own time, deleted only if unchanged since that read. */
        private CompletableFuture<Boolean> remove(DocumentReference doc) {
            return firestore.readThenWrite(doc.getPath(), "purge of " + kind + "s", timeout, doc,
                    read -> removable.test(read)
                            ? Step.write(() -> doc.delete(Precondition.updatedAt(read.getUpdateTime())), Boolean.TRUE)
                            : Step.finish(Boolean.FALSE),
                    () -> Boolean.FALSE); // changed by others at every read: it is in use, leave it
        }

        /** The removals of one batch, {@link #WINDOW} in flight; the first failure fails the batch once the others ended. */
        private final class Window {
            final CompletableFuture<Long> done = new CompletableFuture<>();
            private final List<QueryDocumentSnapshot> docs;
            private int next;
            private int inFlight;
            private long removed;
            private Throwable failure;

            Window(List<QueryDocumentSnapshot> docs) {
                this.docs = docs;
            }

            synchronized void start() {
                if (docs.isEmpty()) {
                    done.complete(0L);
                    return;
                }
                while (inFlight < WINDOW && next < docs.size()) {
                    launch(docs.get(next++).getReference());
                }
            }

            private void launch(DocumentReference doc) {
                inFlight++;
                inOrigin(() -> remove(doc)).whenComplete((gone, error) -> ended(Boolean.TRUE.equals(gone), error));
            }

            private synchronized void ended(boolean gone, Throwable error) {
                inFlight--;
                if (gone) {
                    removed++;
                }
                if (error != null && failure == null) {
                    failure = error;
                }
                if (failure == null && next < docs.size()) {
                    launch(docs.get(next++).getReference());
                } else if (inFlight == 0) {
                    if (failure == null) {
                        done.complete(removed);
                    } else {
                        counted.accept(removed);
                        done.completeExceptionally(failure);
                    }
                }
            }
        }
    }
}
