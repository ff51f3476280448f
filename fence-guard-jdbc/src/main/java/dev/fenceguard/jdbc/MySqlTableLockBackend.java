package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.PurgeLoop;
import dev.fenceguard.core.internal.WarmUps;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.MySqlErrors;
import dev.fenceguard.jdbc.internal.MySqlLockRows;
import dev.fenceguard.jdbc.internal.TableSettings;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * What {@link MariaDbLockBackend} and {@link MySqlLockBackend} share on their one table: the calls on the
 * executor, bounded and mapped alike, the warm-up on the internal key, and the purge batch. Each subclass
 * brings its statements: the four operations on one connection, with the time the call has left.
 */
abstract sealed class MySqlTableLockBackend implements LockBackend, LockRowPurge permits MariaDbLockBackend, MySqlLockBackend {

    /** The internal key of warm-ups: no {@link LockKey} is empty. */
    private static final byte[] WARM_UP_KEY = new byte[0];

    private final Executor executor;
    private final BoundedJdbc calls;
    private final String name;
    private final MySqlLockPurge purge;
    /** The table, back-quoted, for statements and messages. */
    final String table;
    final FenceStrategy strategy;

    /**
     * @param name the store's name ({@link #name()})
     * @param statements how the purge prepares its statements
     */
    MySqlTableLockBackend(TableSettings b, String name, MySqlLockPurge.Statements statements) {
        this.executor = b.executor();
        this.calls = new BoundedJdbc(b.dataSource(), executor, MySqlErrors.naming(LockRowPurge.tablesUsed(b, '`')));
        this.name = name;
        this.strategy = b.strategy();
        this.table = b.backQuoted();
        this.purge = new MySqlLockPurge(b, statements);
    }

    /** The fence and expiry of a live lease. */
    record Live(long fence, Instant expiresAt) {}

    /** Tries to take {@code key} for {@code lockId}: the grant, or empty if a live lease holds it. */
    abstract Optional<Grant> acquire(Connection c, BoundedJdbc.TimeLeft left, byte[] key, String keyName, LockId lockId, Duration ttl)
            throws SQLException;

    /** Ends {@code lockId}'s live lease on {@code key}: whether there was one. */
    abstract boolean release(Connection c, BoundedJdbc.TimeLeft left, byte[] key, LockId lockId) throws SQLException;

    /** The new expiry of {@code lockId}'s live lease on {@code key}, or empty if it has none. */
    abstract Optional<Instant> extend(Connection c, BoundedJdbc.TimeLeft left, byte[] key, LockId lockId, Duration ttl) throws SQLException;

    /** The live lease on {@code key}, if any. */
    abstract Optional<Live> lookup(Connection c, BoundedJdbc.TimeLeft left, byte[] key) throws SQLException;

    @Override
    public String name() {
        return name;
    }

    /** The fence strategy in use. */
    public FenceStrategy fenceStrategy() {
        return strategy;
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return calls.submit(key.value(), "acquire on " + table, timeout,
                (c, left) -> acquire(c, left, MySqlLockRows.bytes(key), key.value(), lockId, ttl));
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return calls.submit(key.value(), "release on " + table, timeout, (c, left) -> release(c, left, MySqlLockRows.bytes(key), lockId));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return calls.submit(key.value(), "extend on " + table, timeout,
                (c, left) -> extend(c, left, MySqlLockRows.bytes(key), lockId, ttl));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return calls.submit(key.value(), "lookup on " + table, timeout, (c, left) -> lookup(c, left, MySqlLockRows.bytes(key))
                .map(live -> new LockInfo(key, FenceToken.of(live.fence()), live.expiresAt())));
    }

    /**
     * Gets ready for the first calls by making each of them once, for the internal key {@code ''} (no bytes,
     * which no lock key can be: keys are 1 to 512 bytes), in one transaction that is rolled back: an
     * acquisition (on MySQL with the read of its expiry), a refused one, an extension, a lookup and a release,
     * with the same code and statements as real calls. No user key is locked or touched, no fence is used up,
     * and the rollback leaves nothing behind. It fails if the lock table or a column is missing. Concurrent
     * warm-ups of several processes wait for each other's rollback on that one key (within the timeout). On
     * MySQL it leaves the connection's {@code LAST_INSERT_ID()} set, as every acquire does.
     *
     * @since 0.1
     */
    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        return calls.submit(null, "warm-up on " + table, timeout, BoundedJdbc.rolledBack((c, left) -> {
            return WarmUps.everyLockPath((holder, ttl) -> acquire(c, left, WARM_UP_KEY, "", holder, ttl).isPresent(),
                    (holder, ttl) -> extend(c, left, WARM_UP_KEY, holder, ttl).isPresent(),
                    (holder, ttl) -> lookup(c, left, WARM_UP_KEY).isPresent(),
                    (holder, ttl) -> release(c, left, WARM_UP_KEY, holder));
        })).thenApply(allRan -> null);
    }

    @Override
    public CompletableFuture<PurgeLoop.Batch<String>> purgeBatch(String after, int size, long marginMicros, Duration timeout) {
        return calls.submit(null, "purge of lock rows on " + table, timeout, MySqlLockPurge.readCommitted(
                LockRowPurge.inTransaction((c, left) -> purge.batch(c, left, after, size, marginMicros))));
    }

    /** The executor the calls run on. */
    public Executor executor() {
        return executor;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + table + ", " + strategy + ", " + executor + "]";
    }
}
