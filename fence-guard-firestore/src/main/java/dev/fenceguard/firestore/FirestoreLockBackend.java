package dev.fenceguard.firestore;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.TransactionOptions;
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
 * A lock backend on Google Cloud Firestore: one document per lock key, each operation one
 * transaction.
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
 * <p>Contended transactions are retried by the SDK ({@link Builder#withTransactionAttempts}); when
 * the attempts run out the operation fails with UNAVAILABLE. Thread-safe.
 */
public final class FirestoreLockBackend implements LockBackend {

    static final String KEY = "key";
    static final String FENCE = "fence";
    static final String LOCK_ID = "lockId";
    static final String EXPIRES = "expiresAtMillis";
    static final String ACQUIRED = "acquiredAtMillis";

    private final Firestore db;
    private final CollectionReference collection;
    private final long skewMillis;
    private final TimeSource time;
    private final TransactionOptions options;

    private FirestoreLockBackend(Builder b) {
        this.db = b.db;
        this.collection = b.db.collection(b.collection);
        this.skewMillis = b.skew.toMillis();
        this.time = b.time;
        this.options = TransactionOptions.createReadWriteOptionsBuilder().setNumberOfAttempts(b.attempts).build();
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
        return FirestoreErrors.await(db.runTransaction(tx -> {
            DocumentSnapshot s = tx.get(doc).get();
            long now = time.now().toEpochMilli();
            if (liveForOthers(s, now)) {
                return Optional.<Grant>empty();
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
            tx.set(doc, data);
            return Optional.of(new Grant(last + 1, Instant.ofEpochMilli(expires)));
        }, options), key.value(), "acquire");
    }

    @Override
    public boolean release(LockKey key, LockId lockId) {
        DocumentReference doc = doc(key);
        return FirestoreErrors.await(db.runTransaction(tx -> {
            DocumentSnapshot s = tx.get(doc).get();
            if (!heldBy(s, lockId, time.now().toEpochMilli())) {
                return false;
            }
            tx.update(doc, Map.of(LOCK_ID, FieldValue.delete(), EXPIRES, FieldValue.delete()));
            return true;
        }, options), key.value(), "release");
    }

    @Override
    public Optional<Instant> extend(LockKey key, LockId lockId, Duration ttl) {
        DocumentReference doc = doc(key);
        return FirestoreErrors.await(db.runTransaction(tx -> {
            DocumentSnapshot s = tx.get(doc).get();
            long now = time.now().toEpochMilli();
            if (!heldBy(s, lockId, now)) {
                return Optional.<Instant>empty();
            }
            long expires = now + ttl.toMillis();
            tx.update(doc, Map.of(EXPIRES, expires));
            return Optional.of(Instant.ofEpochMilli(expires));
        }, options), key.value(), "extend");
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
         * How often the SDK may run a contended transaction; default 25.
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
