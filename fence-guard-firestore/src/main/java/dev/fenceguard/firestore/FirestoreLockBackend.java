package dev.fenceguard.firestore;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Precondition;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.firestore.internal.DocIds;
import dev.fenceguard.firestore.internal.FirestoreErrors;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A lock backend on Google Cloud Firestore: one document per lock key; each operation reads the
 * document and writes it back only if it is unchanged.
 *
 * <pre>{@code
 * LockClient locks = LockClient.of(FirestoreLockBackend.builder(firestore)
 *         .withCollection("locks").withClockSkewAllowance(Duration.ofSeconds(1)).build());
 * }</pre>
 *
 * <p><b>Clock.</b> A Firestore transaction cannot read a server clock, so expiry is judged by the
 * client clock ({@link TimeSource}, default the system clock). The holder stores {@code now + ttl};
 * another client treats the lock as free only once its own clock passes that instant plus the
 * {@linkplain Builder#withClockSkewAllowance skew allowance}. Two holders can therefore only coexist if
 * two clients' clocks differ by more than the allowance: keep clocks synchronised (NTP) and the
 * allowance above their worst difference. Fences still protect resources if that fails.
 *
 * <p><b>Document.</b> {@code <collection>/<id>} with fields {@code key} (the lock key),
 * {@code fence} (last fence issued), {@code lockId} and {@code expiresAtMillis} (absent when free),
 * {@code acquiredAtMillis}. Ids are {@code "k" + key} with {@code %} and {@code /} percent-escaped, or
 * {@code "h" + SHA-256(key)} when that would exceed Firestore's 1,500 bytes. Documents are never deleted,
 * so the fence counter survives releases.
 *
 * <p><b>Atomicity.</b> Each operation is a read followed by a conditional write: {@code create} if the
 * document did not exist, else {@code update} with an update-time precondition from the read. The
 * write succeeds only if nobody changed the document since the read, which is what a read-write
 * transaction on this one document guarantees, in the same two round trips but without the locks a
 * transaction takes (under contention those made the emulator time out waiting for locks). A lost
 * race re-reads and decides again, up to {@link Builder#withTransactionAttempts} times; an acquire
 * that keeps losing reports the key as held. Thread-safe.
 */
public final class FirestoreLockBackend implements LockBackend {

    static final String KEY = "key";
    static final String FENCE = "fence";
    static final String LOCK_ID = "lockId";
    static final String EXPIRES = "expiresAtMillis";
    static final String ACQUIRED = "acquiredAtMillis";

    private final CollectionReference collection;
    private final long skewMillis;
    private final TimeSource time;
    private final int attempts;

    private FirestoreLockBackend(Builder b) {
        this.collection = b.db.collection(b.collection);
        this.skewMillis = b.skew.toMillis();
        this.time = b.time;
        this.attempts = b.attempts;
    }

    /** A backend on {@code db}; defaults: collection {@code fence_guard_locks}, skew allowance 1 s. */
    public static Builder builder(Firestore db) {
        return new Builder(db);
    }

    @Override
    public String name() {
        return "firestore";
    }

    /** The document that holds {@code key}'s lock (for operators). */
    public DocumentReference documentOf(String key) {
        return doc(LockKey.of(key));
    }

    @Override
    public Optional<Grant> tryAcquire(LockKey key, LockId lockId, Duration ttl) {
        DocumentReference doc = doc(key);
        for (int attempt = 0; attempt < attempts; attempt++) {
            DocumentSnapshot s = read(doc, key, "acquire");
            long now = time.now().toEpochMilli();
            if (liveForOthers(s, now)) {
                return Optional.empty();
            }
            long last = s.exists() && s.getLong(FENCE) != null ? s.getLong(FENCE) : 0;
            if (last >= FenceToken.MAX_VALUE) {
                throw new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key.value(), "the key has issued its last fence "
                        + last + "; no lock was taken");
            }
            long expires = now + ttl.toMillis();
            Map<String, Object> data = new HashMap<>();
            data.put(KEY, key.value());
            data.put(FENCE, last + 1);
            data.put(LOCK_ID, lockId.value());
            data.put(EXPIRES, expires);
            data.put(ACQUIRED, now);
            if (write(doc, s, data, key, "acquire")) {
                return Optional.of(new Grant(last + 1, Instant.ofEpochMilli(expires)));
            }
        }
        return Optional.empty(); // others kept changing the document: it is contended right now
    }

    @Override
    public boolean release(LockKey key, LockId lockId) {
        DocumentReference doc = doc(key);
        for (int attempt = 0; attempt < attempts; attempt++) {
            DocumentSnapshot s = read(doc, key, "release");
            if (!heldBy(s, lockId, time.now().toEpochMilli())) {
                return false;
            }
            if (write(doc, s, Map.of(LOCK_ID, FieldValue.delete(), EXPIRES, FieldValue.delete()), key, "release")) {
                return true;
            }
        }
        throw new FenceGuardException(ErrorCode.UNAVAILABLE, key.value(), "release lost " + attempts + " races in a row");
    }

    @Override
    public Optional<Instant> extend(LockKey key, LockId lockId, Duration ttl) {
        DocumentReference doc = doc(key);
        for (int attempt = 0; attempt < attempts; attempt++) {
            DocumentSnapshot s = read(doc, key, "extend");
            long now = time.now().toEpochMilli();
            if (!heldBy(s, lockId, now)) {
                return Optional.empty();
            }
            long expires = now + ttl.toMillis();
            if (write(doc, s, Map.of(EXPIRES, expires), key, "extend")) {
                return Optional.of(Instant.ofEpochMilli(expires));
            }
        }
        throw new FenceGuardException(ErrorCode.UNAVAILABLE, key.value(), "extend lost " + attempts + " races in a row");
    }

    private static DocumentSnapshot read(DocumentReference doc, LockKey key, String operation) {
        return FirestoreErrors.await(doc.get(), key.value(), operation);
    }

    /**
     * Writes {@code data} only if the document is still as read: {@code create} when it did not exist,
     * else {@code update} with an update-time precondition. Equivalent to a read-write transaction on
     * this one document, without its locks. False if someone changed the document meanwhile.
     */
    private static boolean write(DocumentReference doc, DocumentSnapshot read, Map<String, Object> data, LockKey key, String operation) {
        return read.exists()
                ? FirestoreErrors.awaitConditional(doc.update(data, Precondition.updatedAt(read.getUpdateTime())), key.value(), operation)
                : FirestoreErrors.awaitConditional(doc.create(data), key.value(), operation);
    }

    @Override
    public Optional<LockInfo> lookup(LockKey key) {
        DocumentSnapshot s = FirestoreErrors.await(doc(key).get(), key.value(), "lookup");
        if (!liveForOthers(s, time.now().toEpochMilli())) {
            return Optional.empty();
        }
        return Optional.of(new LockInfo(key, FenceToken.of(s.getLong(FENCE)), Instant.ofEpochMilli(s.getLong(EXPIRES))));
    }

    private DocumentReference doc(LockKey key) {
        return collection.document(DocIds.of(key));
    }

    /** Held as others see it: until the expiry plus the skew allowance. */
    private boolean liveForOthers(DocumentSnapshot s, long now) {
        Long expires = s.exists() ? s.getLong(EXPIRES) : null;
        return expires != null && s.getString(LOCK_ID) != null && now < expires + skewMillis;
    }

    /** Held by {@code lockId} as the holder sees it: strictly before the expiry, no allowance. */
    private static boolean heldBy(DocumentSnapshot s, LockId lockId, long now) {
        Long expires = s.exists() ? s.getLong(EXPIRES) : null;
        return expires != null && lockId.value().equals(s.getString(LOCK_ID)) && now < expires;
    }

    @Override
    public String toString() {
        return "FirestoreLockBackend[" + collection.getPath() + ", skew allowance " + skewMillis + " ms]";
    }

    /** Options for a {@link FirestoreLockBackend}. Not thread-safe. */
    public static final class Builder {
        private final Firestore db;
        private String collection = "fence_guard_locks";
        private Duration skew = Duration.ofSeconds(1);
        private TimeSource time = TimeSource.system();
        private int attempts = 25;

        private Builder(Firestore db) {
            this.db = Objects.requireNonNull(db, "db");
        }

        /**
         * The collection holding lock documents; default {@code fence_guard_locks}.
         *
         * @throws IllegalArgumentException if empty, containing {@code /}, {@code .}/{@code ..}, or {@code __.*__}
         */
        public Builder withCollection(String collection) {
            Objects.requireNonNull(collection, "collection");
            if (collection.isEmpty() || collection.contains("/") || collection.equals(".") || collection.equals("..")
                    || collection.matches("__.*__") || collection.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 1500) {
                throw new IllegalArgumentException("collection must be a single Firestore collection id (no '/', not '.' or '..',"
                        + " not __x__, at most 1500 bytes), was '" + collection + "'");
            }
            this.collection = collection;
            return this;
        }

        /**
         * How far apart client clocks may be: others treat a lock as held until its expiry plus this.
         * Default 1 s.
         *
         * @throws IllegalArgumentException if negative, sub-millisecond or above 1 minute
         */
        public Builder withClockSkewAllowance(Duration skew) {
            Objects.requireNonNull(skew, "skew");
            if (skew.isNegative() || skew.getNano() % 1_000_000 != 0 || skew.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new IllegalArgumentException("clock skew allowance must be whole milliseconds from 0 to 1 minute, was " + skew);
            }
            this.skew = skew;
            return this;
        }

        /** The client clock expiry is judged by; default {@link TimeSource#system()}. */
        public Builder withTimeSource(TimeSource time) {
            this.time = Objects.requireNonNull(time, "time");
            return this;
        }

        /**
         * How often an operation re-reads after losing a race to another writer; default 25.
         *
         * @throws IllegalArgumentException if below 1
         */
        public Builder withTransactionAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("transaction attempts must be at least 1, was " + attempts);
            }
            this.attempts = attempts;
            return this;
        }

        public FirestoreLockBackend build() {
            Builder copy = new Builder(db);
            copy.collection = collection;
            copy.skew = skew;
            copy.time = time;
            copy.attempts = attempts;
            return new FirestoreLockBackend(copy);
        }
    }
}
