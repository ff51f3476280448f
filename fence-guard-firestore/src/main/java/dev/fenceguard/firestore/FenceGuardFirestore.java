package dev.fenceguard.firestore;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.internal.EntrySettings;
import dev.fenceguard.core.internal.Horizon;
import dev.fenceguard.core.spi.WriteRule;
import dev.fenceguard.firestore.internal.DocumentRule;
import dev.fenceguard.firestore.internal.FirestoreHandle;
import dev.fenceguard.firestore.internal.KeyedDocuments;
import dev.fenceguard.firestore.internal.LockCollections;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * fence-guard on one Firestore database, the one entry of this module: built once from a
 * {@link Firestore} client with one set of settings, it hands out the {@linkplain #lockBackend() lock
 * backend}, the {@linkplain #idempotencyBackend() idempotency backend}, the {@linkplain #flightStore()
 * flight store} of {@code Singleflight} and the {@linkplain #fencedWrites() fenced writes}, which share
 * the client, the settings and the way they talk to Firestore (a read, then a write conditioned on the
 * document being unchanged; asynchronous, under one deadline per call). With a {@code Firestore db} of
 * yours (on Google Cloud, {@code FirestoreOptions.getDefaultInstance().getService()}):
 *
 * <pre>{@code
 * FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(db).build();
 * LockClient locks = LockClient.of(fenceGuard.lockBackend());
 * FencedFirestore fenced = fenceGuard.fencedWrites();
 * DocumentReference order = db.collection("orders").document("42");
 * locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease ->
 *         fenced.update(order, lease.fence(), Map.of("status", "paid")).orThrow());
 * // without blocking: fenced.async().update(order, lease.fence(), Map.of("status", "paid"))
 * }</pre>
 *
 * <p>Because everything comes from one place, the fenced writes know the collections of the lock
 * backend, the idempotency backend and the flight store, and refuse documents in them (a fenced write there could rewind a lock's fence
 * or take over a lock), with nothing to repeat. Lock backends of other instances that share the
 * database are named with {@link Builder#withOtherLockCollections}.
 *
 * <p>Lock and resource may live in different databases: build one instance per database, and take
 * the lock backend from one and the fenced writes from the other. The {@link Firestore} client stays
 * yours: this class never closes it. Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class FenceGuardFirestore {

    private final FirestoreLockBackend lockBackend;
    private final FirestoreIdempotencyBackend idempotencyBackend;
    private final FirestoreFlightStore flightStore;
    private final Map<FencePolicy, FencedFirestore> fencedWrites;

    private FenceGuardFirestore(Builder b) {
        FirestoreHandle firestore = new FirestoreHandle(b.db, b.attempts);
        Optional<Horizon> horizon = Optional.ofNullable(b.horizon).map(h -> new Horizon(h, b.clockMargin));
        this.idempotencyBackend = new FirestoreIdempotencyBackend(new KeyedDocuments(firestore, b.idempotencyCollection));
        this.flightStore = new FirestoreFlightStore(new KeyedDocuments(firestore, b.flightCollection));
        Set<String> refused = new LinkedHashSet<>();
        refused.add(b.lockCollection);
        refused.add(b.idempotencyCollection);
        refused.add(b.flightCollection);
        refused.addAll(b.otherLockCollections);
        List<String> collections = List.copyOf(refused);
        KeyedDocuments locks = new KeyedDocuments(firestore, b.lockCollection);
        DocumentReference warmUp = FirestoreLockBackend.warmUpDocument(locks);
        this.fencedWrites = b.settings.perPolicy(b.encoding, "firestore", rule -> new FencedFirestore(new AsyncFencedFirestore(
                firestore, new DocumentRule(rule, b.fenceField, b.deletedField, collections, horizon), b.settings.callTimeout(),
                warmUp)));
        // the purges of both kinds count in the same metrics, through the write rule that holds them
        WriteRule counter = fencedWrites.get(FencePolicy.SAME_OR_NEWER).async().rule().writeRule();
        this.lockBackend = new FirestoreLockBackend(locks, b.strategy(), b.clockMargin, b.settings.callTimeout(),
                n -> counter.purged("lock", n));
    }

    /**
     * Settings for fence-guard on {@code db}.
     *
     * @throws NullPointerException if {@code db} is null
     * @since 0.1
     */
    public static Builder builder(Firestore db) {
        return new Builder(db);
    }

    /**
     * The lock backend: wrap it in a {@link dev.fenceguard.core.LockClient}.
     *
     * @since 0.1
     */
    public FirestoreLockBackend lockBackend() {
        return lockBackend;
    }

    /**
     * Removes the lock documents no acquisition needs any more, as {@code FenceGuardJdbc.purgeLocks} does for SQL
     * lock rows: the same name on every entry point whose lock records need a purge (Redis's expire on their own).
     * Only free documents whose fence is below the clock floor a {@link Builder#withClockMargin clock margin} ago
     * go, so that an acquisition of a removed key issues a fence above every fence removed, with no bound on
     * pauses ({@code docs/fence-lifecycle.md}). Runs in batches in the order {@code (fence, document id)}, each
     * candidate read again and deleted only if unchanged since that read and still free and below the floor;
     * stops when a batch finds fewer than the batch size or the purge's time bound has passed, and then
     * {@link PurgeResult#resumeAfter()} is the cursor to pass to {@link Purge#withStartAfter}. Removed documents
     * are counted in {@code fenceguard.purge.removed} ({@code store=firestore}, {@code kind=lock}).
     *
     * <p>{@link FenceStrategy#DENSE} lock documents are never purged: a key whose document is gone would start
     * again from fence 1, which {@code SAME_OR_NEWER} resources admit. Build with
     * {@link Builder#withFenceStrategy CLOCK_FLOORED} (every instance sharing the collection) to purge.
     *
     * @return what it removed, and where it stopped
     * @throws IllegalStateException if the fence strategy is {@code DENSE} (before any I/O)
     * @throws IllegalArgumentException if the purge's start key is not a {@link PurgeResult#resumeAfter()} of a
     *     Firestore lock purge (before any I/O)
     * @throws NullPointerException if {@code purge} is null
     * @throws dev.fenceguard.core.FenceGuardException if Firestore fails or an RPC chain does not end within the
     *     call timeout ({@code TIMEOUT}); the documents removed until then stay removed
     * @since 0.1
     */
    public PurgeResult purgeLocks(Purge purge) {
        return lockBackend.purge(purge);
    }

    /**
     * The idempotency backend: wrap it in a {@link dev.fenceguard.core.idempotency.IdempotencyStore}. Its
     * documents live in {@link Builder#withIdempotencyCollection the idempotency collection}, which the
     * fenced writes refuse as they refuse the lock collection.
     *
     * @since 0.1
     */
    public FirestoreIdempotencyBackend idempotencyBackend() {
        return idempotencyBackend;
    }

    /**
     * The flight store of {@link dev.fenceguard.core.singleflight.Singleflight}: its documents live in
     * {@link Builder#withFlightCollection the flight collection}, which the fenced writes refuse as they
     * refuse the lock collection; waiters listen to their flight's document.
     *
     * @since 0.1
     */
    public FirestoreFlightStore flightStore() {
        return flightStore;
    }

    /**
     * The fenced writes under {@link FencePolicy#SAME_OR_NEWER}: a holder may write many times under one lease.
     *
     * @since 0.1
     */
    public FencedFirestore fencedWrites() {
        return fencedWrites(FencePolicy.SAME_OR_NEWER);
    }

    /**
     * The fenced writes under {@code policy}, e.g. {@link FencePolicy#STRICTLY_NEWER} for writes that must
     * happen once per lease. Writers of both policies share every setting.
     *
     * @throws NullPointerException if {@code policy} is null
     * @since 0.1
     */
    public FencedFirestore fencedWrites(FencePolicy policy) {
        return fencedWrites.get(Objects.requireNonNull(policy, "policy"));
    }

    @Override
    public String toString() {
        return "FenceGuardFirestore[" + lockBackend + ", " + fencedWrites() + "]";
    }

    /**
     * Settings of a {@link FenceGuardFirestore}. Not thread-safe; {@link #build()} copies them, so a
     * builder can be reused.
     *
     * @since 0.1
     */
    public static final class Builder {
        private final Firestore db;
        private final EntrySettings settings = new EntrySettings();
        private String lockCollection = LockCollections.DEFAULT;
        private String idempotencyCollection = "fence_guard_idempotency";
        private String flightCollection = "fence_guard_flights";
        private List<String> otherLockCollections = List.of();
        private int attempts = FirestoreHandle.DEFAULT_ATTEMPTS;
        private FenceEncoding encoding = FenceEncoding.INTEGER;
        private String fenceField = "_fence";
        private String deletedField = "_deleted";
        /** Null until set: the default follows the horizon (see {@link #withFenceStrategy}). */
        private FenceStrategy strategy;
        private Duration horizon;
        private Duration clockMargin = Horizon.DEFAULT_MARGIN;

        private Builder(Firestore db) {
            this.db = Objects.requireNonNull(db, "db");
        }

        /**
         * The top-level collection holding the lock documents; default {@code fence_guard_locks}. The
         * fenced writes refuse every document in it and beneath its documents.
         *
         * @throws IllegalArgumentException if it is not a single Firestore collection id: empty,
         *     containing {@code /}, {@code .} or {@code ..}, matching {@code __.*__}, longer than 1,500
         *     UTF-8 bytes, or holding an unpaired surrogate
         * @throws NullPointerException if {@code collection} is null
         * @since 0.1
         */
        public Builder withLockCollection(String collection) {
            this.lockCollection = LockCollections.requireCollectionId("lockCollection", collection);
            return this;
        }

        /**
         * The lock collections of <em>other</em> lock backends whose locks live in the same database
         * (other {@code FenceGuardFirestore} instances, other services); none by default. The fenced
         * writes refuse documents in them and beneath their documents, as they always do for this
         * instance's own {@link #withLockCollection lock collection}. Replaces the previous list.
         *
         * @throws IllegalArgumentException if a name is not a single Firestore collection id (see
         *     {@link #withLockCollection})
         * @throws NullPointerException if {@code collections} or one of them is null
         * @since 0.1
         */
        public Builder withOtherLockCollections(String... collections) {
            this.otherLockCollections = EntrySettings.each("collections", collections,
                    c -> LockCollections.requireCollectionId("otherLockCollections", c));
            return this;
        }

        /**
         * How many times an operation (of the lock backend, the idempotency backend, the flight store or
         * the fenced writes) reads the document and tries its
         * conditional write before giving up under contention (every other writer that changes the
         * document in between costs one attempt); default 25. An acquire that runs out reports the key
         * as held; a release, an extend or a fenced write fails with {@code UNAVAILABLE}.
         *
         * @throws IllegalArgumentException if below 1
         * @since 0.1
         */
        public Builder withWriteAttempts(int attempts) {
            this.attempts = FirestoreHandle.requireAttempts(attempts);
            return this;
        }

        /**
         * How long one call may take: one fenced write, from the call to its answer, retries after lost
         * races included (and {@link FencedFirestore#warmUp()}); default 10 s. A write still unanswered
         * then fails with {@code TIMEOUT} (it may still have been applied). The calls of the lock backend,
         * the idempotency backend and the flight store are bounded by the timeouts their
         * {@link dev.fenceguard.core.LockClient}, {@code IdempotencyStore} or {@code Singleflight} passes instead.
         *
         * @throws IllegalArgumentException if below 1 ms or above 10 minutes
         * @throws NullPointerException if {@code timeout} is null
         * @since 0.1
         */
        public Builder withCallTimeout(Duration timeout) {
            settings.callTimeout(timeout);
            return this;
        }

        /**
         * How resources store their fence: an integer field (default) or the 15-character text form.
         *
         * @throws NullPointerException if {@code encoding} is null
         * @since 0.1
         */
        public Builder withEncoding(FenceEncoding encoding) {
            this.encoding = Objects.requireNonNull(encoding, "encoding");
            return this;
        }

        /**
         * The top-level field of a resource document that holds its fence; default {@code _fence}.
         *
         * @throws IllegalArgumentException if empty, equal to the deleted field, or not a plain field
         *     name (it contains {@code .}, {@code `}, {@code ~}, {@code *}, {@code /}, {@code [} or {@code ]})
         * @throws NullPointerException if {@code field} is null
         * @since 0.1
         */
        public Builder withFenceField(String field) {
            this.fenceField = field("fenceField", field, "deletedField", deletedField);
            return this;
        }

        /**
         * The top-level field that marks a resource document as a tombstone; default {@code _deleted}.
         *
         * @throws IllegalArgumentException if empty, equal to the fence field, or not a plain field name
         *     (see {@link #withFenceField})
         * @throws NullPointerException if {@code field} is null
         * @since 0.1
         */
        public Builder withDeletedField(String field) {
            this.deletedField = field("deletedField", field, "fenceField", fenceField);
            return this;
        }

        /**
         * Where stale-write rejections are counted; default {@link LockMetrics#automatic()}.
         *
         * @throws NullPointerException if {@code metrics} is null
         * @since 0.1
         */
        public Builder withMetrics(LockMetrics metrics) {
            settings.metrics(metrics);
            return this;
        }

        /**
         * Where each fenced write is observed: one {@code fenceguard.write} observation per call of the
         * fenced writes (both faces, both policies, and the calls in your {@link com.google.cloud.firestore.Transaction}),
         * with {@code backend} {@code firestore}, {@code resource.type} the document's collection id
         * ({@code orders} for {@code tenants/t1/orders/42}), the {@code operation} ({@code update},
         * {@code set}, {@code claim}, {@code delete}; {@code check} for
         * {@link FencedFirestore#check}) and the {@code outcome}. Pass the object given to
         * {@link dev.fenceguard.core.LockClient.Builder#withObservations}, so that a write made in the work
         * of a blocking {@code withLock} (on its thread) is a child of that {@code withLock}. A call in your
         * transaction runs on the SDK's transaction thread: it is observed once per attempt of the
         * transaction, with what it staged, and is a child of {@code withLock} only if you make the
         * observation current there. Default {@link LockObservations#none()}: nothing observed, nothing spent.
         *
         * @throws NullPointerException if {@code observations} is null
         * @since 0.1
         */
        public Builder withObservations(LockObservations observations) {
            settings.observations(observations);
            return this;
        }

        /**
         * How the lock backend chooses fences. Default {@link FenceStrategy#DENSE} (1, 2, 3, ... per key, as
         * before), or {@link FenceStrategy#CLOCK_FLOORED} when a horizon is set ({@link #withHorizon}): then
         * each acquisition issues {@code max(last + 1, tick(readTime) + 1)}, the clock floor of Firestore's
         * clock at the acquisition's read, so a key whose document was purged
         * ({@link #purgeLocks FenceGuardFirestore.purgeLocks}) starts above every fence it issued before. Only
         * {@code CLOCK_FLOORED} lock documents can be purged. Switching a collection from {@code DENSE} to
         * {@code CLOCK_FLOORED} keeps fences rising (the floor is far above any dense value); switching back does
         * not, and every instance sharing the lock collection must use the same strategy.
         *
         * @throws NullPointerException if {@code strategy} is null
         * @since 0.1
         */
        public Builder withFenceStrategy(FenceStrategy strategy) {
            this.strategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /**
         * Holds the fenced writes to a horizon and lets {@link FencedFirestore#purge} remove old tombstones
         * ({@code docs/fence-lifecycle.md}). A write that would create the fence record of a document that
         * does not exist (a {@code set}, {@code claim}, {@code check} or {@code delete} of an absent document,
         * in your transaction or not) is applied only if its fence is above {@code tick(readTime - horizon)},
         * the clock floor of Firestore's clock {@code horizon} before the read time of the write's read; the
         * write that follows applies only if the document is still absent. Otherwise it is
         * {@link dev.fenceguard.core.WriteOutcome.Stale} with reason {@code BELOW_HORIZON} and the horizon as
         * its current fence. Writes that find a document (a tombstone included) are judged by the write rule
         * alone. So a tombstone older than the horizon (plus the clock margin) can be removed with no bound
         * on how long a writer may pause.
         *
         * <p>The price: a lease whose fence is older than {@code horizon} can no longer create a document.
         * Pick a horizon well above your longest lease hold (renewals included) plus the skew between the
         * lock's clock and Firestore's; days are cheap. Fences must come from a
         * {@link FenceStrategy#CLOCK_FLOORED} lock: {@code DENSE} fences are all below any horizon, so every
         * write that creates a document would be refused. This instance's own lock backend is then
         * {@code CLOCK_FLOORED} unless you set {@code DENSE} explicitly, which {@link #build()} refuses.
         *
         * @param horizon the horizon age, at least 1 second
         * @throws NullPointerException if {@code horizon} is null
         * @throws IllegalArgumentException if {@code horizon} is shorter than 1 second or longer than 3650 days
         * @since 0.1
         */
        public Builder withHorizon(Duration horizon) {
            this.horizon = Horizon.checkAge(horizon);
            return this;
        }

        /**
         * How far Firestore's clock may step back between a purge and a later write or acquisition
         * ({@code docs/fence-lifecycle.md}); default 5 minutes. {@link FencedFirestore#purge} removes only
         * tombstones whose fence is below {@code tick(readTime - horizon - clockMargin)};
         * {@link #purgeLocks FenceGuardFirestore.purgeLocks} removes only free lock documents whose fence is below
         * {@code tick(readTime - clockMargin)} and whose lease ended at least {@code clockMargin} ago.
         *
         * @param clockMargin zero or more, at most 1 day
         * @throws NullPointerException if {@code clockMargin} is null
         * @throws IllegalArgumentException if it is negative or longer than 1 day
         * @since 0.1
         */
        public Builder withClockMargin(Duration clockMargin) {
            this.clockMargin = Horizon.checkMargin(clockMargin);
            return this;
        }

        private FenceStrategy strategy() {
            return strategy != null ? strategy : horizon != null ? FenceStrategy.CLOCK_FLOORED : FenceStrategy.DENSE;
        }

        /**
         * Test seam, not API: the client's wall clock. Nothing here reads it (expiry is judged by
         * Firestore's read time); tests hand it a clock minutes off to show that it does not matter.
         */
        Builder withTimeSource(TimeSource time) {
            Objects.requireNonNull(time, "time");
            return this;
        }

        /**
         * The top-level collection holding the idempotency documents; default {@code fence_guard_idempotency}.
         *
         * @throws IllegalArgumentException if it is not a single Firestore collection id (see
         *     {@link #withLockCollection})
         * @throws NullPointerException if {@code collection} is null
         * @since 0.1
         */
        public Builder withIdempotencyCollection(String collection) {
            this.idempotencyCollection = LockCollections.requireCollectionId("idempotencyCollection", collection);
            return this;
        }

        /**
         * The top-level collection holding the flight documents of
         * {@link dev.fenceguard.core.singleflight.Singleflight}; default {@code fence_guard_flights}.
         *
         * @throws IllegalArgumentException if it is not a single Firestore collection id (see
         *     {@link #withLockCollection})
         * @throws NullPointerException if {@code collection} is null
         * @since 0.1
         */
        public Builder withFlightCollection(String collection) {
            this.flightCollection = LockCollections.requireCollectionId("flightCollection", collection);
            return this;
        }

        /**
         * A new instance with these settings. Does no I/O.
         *
         * @throws IllegalArgumentException if the lock, idempotency and flight collections are not three
         *     different collections; if a horizon is set with the {@code DENSE} fence strategy
         * @since 0.1
         */
        public FenceGuardFirestore build() {
            if (horizon != null && strategy == FenceStrategy.DENSE) {
                throw new IllegalArgumentException("withHorizon needs CLOCK_FLOORED fences, and withFenceStrategy(DENSE) was set:"
                        + " dense fences (1, 2, 3, ...) are all below any horizon, so every write that creates a document would be"
                        + " refused");
            }
            if (idempotencyCollection.equals(lockCollection)) {
                throw new IllegalArgumentException("idempotencyCollection must differ from lockCollection '" + lockCollection
                        + "': an idempotency entry and a lock of the same key would share a document");
            }
            if (flightCollection.equals(lockCollection) || flightCollection.equals(idempotencyCollection)) {
                throw new IllegalArgumentException("flightCollection '" + flightCollection + "' must differ from lockCollection '"
                        + lockCollection + "' and idempotencyCollection '" + idempotencyCollection
                        + "': a flight and a lock or idempotency entry of the same key would share a document");
            }
            return new FenceGuardFirestore(this);
        }

        private static String field(String setting, String name, String otherSetting, String other) {
            Objects.requireNonNull(name, setting);
            if (name.isEmpty() || name.equals(other)) {
                throw new IllegalArgumentException(setting + " must be non-empty and differ from " + otherSetting + " '"
                        + other + "', was '" + name + "'");
            }
            // Firestore reads "a.b" as a path in update() and get() but as one field in set(): a fence
            // stored by a set would then read back as 0 (and the same for the other special characters).
            if (name.chars().anyMatch(c -> ".`~*/[]".indexOf(c) >= 0)) {
                throw new IllegalArgumentException(setting + " must be a plain top-level field name (none of . ` ~ * / [ ]),"
                        + " was '" + name + "'");
            }
            return name;
        }
    }
}
