package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.internal.Horizon;
import dev.fenceguard.core.internal.PurgeLoop;
import dev.fenceguard.core.internal.SqlIdentifiers;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.Database;
import dev.fenceguard.jdbc.internal.TableSettings;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * fence-guard on a SQL database through plain JDBC: built once from a {@link DataSource}, it learns which
 * database that is (PostgreSQL, MariaDB or MySQL) and hands out the stores fence-guard keeps there.
 *
 * <pre>{@code
 * FenceGuardMigrations.migrate(dataSource);                           // creates public.fence_guard_locks
 * try (FenceGuardJdbc jdbc = FenceGuardJdbc.builder(dataSource).build()) {
 *     LockClient locks = LockClient.of(jdbc.lockBackend());
 *     locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> ship(42L, lease));
 * }
 * }</pre>
 *
 * <p><b>What each database offers.</b>
 * <table>
 *   <caption>Stores by database</caption>
 *   <tr><th>database</th><th>{@link #lockBackend()}</th><th>{@link #idempotencyBackend()}</th><th>{@link #flightStore()}</th></tr>
 *   <tr><td>PostgreSQL 13+</td><td>yes</td><td>yes</td><td>yes ({@code LISTEN}/{@code NOTIFY}, needs pgjdbc)</td></tr>
 *   <tr><td>MariaDB 10.11+</td><td>yes</td><td>no</td><td>no</td></tr>
 *   <tr><td>MySQL 8.0.19+</td><td>yes</td><td>no</td><td>no</td></tr>
 * </table>
 * The tables are created by fence-guard-migrations ({@code FenceGuardMigrations}) or by your own migrations
 * (layouts in {@code docs/postgresql.md} and {@code docs/mysql-mariadb.md}).
 *
 * <p><b>No driver, no jOOQ.</b> This module brings neither: the application brings the JDBC driver
 * (pgjdbc, MariaDB Connector/J or MySQL Connector/J). A MariaDB server is recognised through either
 * MariaDB Connector/J or MySQL Connector/J. Fenced SQL writes are in {@code fence-guard-jooq}.
 *
 * <p><b>Timeouts.</b> There is no timeout setting here: each call is bounded by the timeout the caller
 * hands it, which is the {@code withCallTimeout} of the {@code LockClient}, {@code IdempotencyStore} or
 * {@code Singleflight} built on these stores.
 *
 * <p>Thread-safe. {@link #close()} closes the flight store's listener connection, if one was opened.
 *
 * @since 0.1
 */
public final class FenceGuardJdbc implements AutoCloseable {

    /** The least bound of one purge batch on the server. */
    private static final Duration MIN_BATCH_BOUND = Duration.ofSeconds(1);

    private final Database database;
    private final LockBackend lockBackend;
    private final PostgresIdempotencyBackend idempotencyBackend;
    private final PostgresFlightStore flightStore;
    private final Duration clockMargin;
    private final LockMetrics metrics;

    private FenceGuardJdbc(Database database, LockBackend lockBackend, PostgresIdempotencyBackend idempotencyBackend,
            PostgresFlightStore flightStore, Builder b) {
        this.database = database;
        this.lockBackend = lockBackend;
        this.idempotencyBackend = idempotencyBackend;
        this.flightStore = flightStore;
        this.clockMargin = b.clockMargin;
        this.metrics = b.metrics != null ? b.metrics : LockMetrics.automatic();
    }

    /**
     * A builder for the stores on {@code dataSource}; defaults: schema {@code public} on PostgreSQL (on
     * MariaDB and MySQL the schema must be given), tables {@code fence_guard_locks},
     * {@code fence_guard_idempotency} and {@code fence_guard_flights}, {@link FenceStrategy#DENSE}, a
     * virtual thread per call.
     *
     * @throws NullPointerException if {@code dataSource} is null
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The lock backend on the lock table, for {@code LockClient.of(..)}. */
    public LockBackend lockBackend() {
        return lockBackend;
    }

    /**
     * The idempotency backend on the idempotency table, for {@code IdempotencyStore.builder(..)}.
     *
     * @throws UnsupportedOperationException on MariaDB and MySQL, which have no idempotency backend yet
     */
    public IdempotencyBackend idempotencyBackend() {
        if (idempotencyBackend == null) {
            throw unsupported("an idempotency backend");
        }
        return idempotencyBackend;
    }

    /**
     * The flight store on the flight table, for {@code Singleflight.builder(..)}. Waiters are woken by
     * {@code LISTEN}/{@code NOTIFY} on one connection of the listener data source
     * ({@link Builder#withListenerDataSource}), opened on the first wait; it needs pgjdbc.
     *
     * @throws UnsupportedOperationException on MariaDB and MySQL, which have no flight store yet
     */
    public FlightStore flightStore() {
        if (flightStore == null) {
            throw unsupported("a flight store");
        }
        return flightStore;
    }

    /**
     * Removes lock rows that no acquisition needs any more, so that a table with one lock per order or job
     * does not grow forever ({@code docs/fence-lifecycle.md}). Only free rows go (released, or whose lease
     * expired); a lock that is held is never touched, and a later acquisition of a removed key issues a
     * fence above every fence the key issued before:
     * <ul>
     *   <li>{@link FenceStrategy#CLOCK_FLOORED}: rows whose fence is below {@code tick(clock - clockMargin)},
     *       the clock floor of the database's clock that long ago ({@link Builder#withClockMargin}): a new row
     *       starts at the floor of its own time, above them, as long as the clock does not step back by more
     *       than the margin.</li>
     *   <li>{@link FenceStrategy#DENSE}: every free row; the batch raises the table's floor row (in
     *       {@code fence_guard_lock_floors}) to the highest fence it removed, in the same transaction, and a
     *       key that has no row starts its counter above that floor.</li>
     * </ul>
     * Under both, the floor row is locked {@code FOR UPDATE} first and raised, so fences keep rising if the
     * table's strategy is switched later. The floor row comes with the lock table's second migration
     * ({@code FenceGuardMigrations}); without it the purge fails ({@code INVALID_ARGUMENT}) and removes nothing.
     *
     * <p>Runs in batches in key order, each a transaction of its own: the floor row locked, then the candidate
     * rows locked {@code FOR UPDATE SKIP LOCKED} (a row that an acquisition holds or is taking is skipped, and
     * left for a later purge), deleted with the condition checked again against each row's newest version,
     * and the floor raised. On PostgreSQL the last three are one statement; on MariaDB (10.6+) and MySQL
     * (8.0+) a locking {@code SELECT} and a {@code DELETE} by key, at read committed (repeatable read would
     * lock every row and gap the scan passes). Stops when a batch finds fewer free rows than the batch size,
     * or when the purge's time bound has passed; then {@link PurgeResult#resumeAfter()} is the key (a
     * {@code String}) to go on after. Each batch is bounded by the purge's {@code maxDuration}, or 1 second if
     * that is shorter: on the server on PostgreSQL and MariaDB ({@code lock_timeout}, {@code statement_timeout};
     * {@code max_statement_time}, {@code innodb_lock_wait_timeout}), on MySQL by aborting the connection as
     * for the backend's calls. Removed rows are counted in {@code fenceguard.purge.removed} ({@code store} the
     * backend's name, {@code kind=lock}) of the entry's {@link Builder#withMetrics metrics}.
     *
     * @return what it removed, and where it stopped
     * @throws NullPointerException if {@code purge} is null
     * @throws IllegalArgumentException if the purge's start key is not a {@code String} (before any SQL)
     * @throws dev.fenceguard.core.FenceGuardException mapped from the database's error; {@code INVALID_ARGUMENT}
     *     if the floor row is missing
     * @since 0.1
     */
    public PurgeResult purgeLocks(Purge purge) {
        return purge((LockRowPurge) lockBackend, purge, clockMargin, metrics);
    }

    /** {@link #purgeLocks} on {@code rows}: the tests reach the MySQL backend, which no MariaDB server hands out, here. */
    static PurgeResult purge(LockRowPurge rows, Purge purge, Duration clockMargin, LockMetrics metrics) {
        Objects.requireNonNull(purge, "purge");
        String start = "";
        if (purge.startAfter().isPresent()) {
            if (!(purge.startAfter().get() instanceof String key) || key.isEmpty()) {
                throw new IllegalArgumentException("purge of lock rows starts after a lock key, a non-empty String (the "
                        + "resumeAfter() of an earlier purge), was " + purge.startAfter().get().getClass().getName());
            }
            start = key;
        }
        long marginMicros = clockMargin.toNanos() / 1_000;
        // A short time bound still lets one batch run: it bounds when batches start, not the first one's statements.
        Duration batchBound = purge.maxDuration().compareTo(MIN_BATCH_BOUND) < 0 ? MIN_BATCH_BOUND : purge.maxDuration();
        return PurgeLoop.run(purge, start, after -> {
            PurgeLoop.Batch<String> batch = Stages.awaitUninterruptibly(rows.purgeBatch(after, purge.batchSize(), marginMicros, batchBound));
            metrics.purged(rows.name(), "lock", batch.removed());
            return batch;
        }, last -> last);
    }

    private UnsupportedOperationException unsupported(String what) {
        return new UnsupportedOperationException("fence-guard-jdbc has " + what + " for PostgreSQL only; this data source is "
                + database.displayName());
    }

    /** Closes the flight store's listener connection, if one was opened; the stores' other calls go on working. */
    @Override
    public void close() {
        if (flightStore != null) {
            flightStore.close();
        }
    }

    @Override
    public String toString() {
        return "FenceGuardJdbc[" + database.displayName() + ", " + lockBackend + "]";
    }

    /**
     * Options for a {@link FenceGuardJdbc}. Each {@code with..} checks its value at once; {@link #build()}
     * learns the database and copies the settings. Not thread-safe.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private DataSource listenerDataSource;
        private String schema;
        private String lockTable = TableSettings.DEFAULT_LOCK_TABLE;
        private String idempotencyTable = "fence_guard_idempotency";
        private String flightTable = "fence_guard_flights";
        private FenceStrategy strategy = FenceStrategy.DENSE;
        private Executor executor = BoundedJdbc.VIRTUAL_THREADS;
        private Duration clockMargin = Horizon.DEFAULT_MARGIN;
        private LockMetrics metrics;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * The schema (MariaDB, MySQL: database) of every table; default {@code public} on PostgreSQL,
         * required on MariaDB and MySQL, where a connection need not have a default database.
         *
         * @throws IllegalArgumentException if not a plain SQL identifier
         */
        public Builder withSchema(String schema) {
            this.schema = SqlIdentifiers.require("schema", schema);
            return this;
        }

        /**
         * The lock table; default {@code fence_guard_locks}.
         *
         * @throws IllegalArgumentException if not a plain SQL identifier
         */
        public Builder withLockTable(String table) {
            this.lockTable = SqlIdentifiers.require("lock table", table);
            return this;
        }

        /**
         * The idempotency table (PostgreSQL); default {@code fence_guard_idempotency}.
         *
         * @throws IllegalArgumentException if not a plain SQL identifier
         */
        public Builder withIdempotencyTable(String table) {
            this.idempotencyTable = SqlIdentifiers.require("idempotency table", table);
            return this;
        }

        /**
         * The flight table (PostgreSQL); default {@code fence_guard_flights}.
         *
         * @throws IllegalArgumentException if not a plain SQL identifier
         */
        public Builder withFlightTable(String table) {
            this.flightTable = SqlIdentifiers.require("flight table", table);
            return this;
        }

        /**
         * How the lock backend chooses fences; default {@link FenceStrategy#DENSE}. Choose
         * {@link FenceStrategy#CLOCK_FLOORED} when the database can fail over to an asynchronous replica
         * that may not have the latest fences.
         *
         * @throws NullPointerException if {@code strategy} is null
         */
        public Builder withFenceStrategy(FenceStrategy strategy) {
            this.strategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /**
         * Where the blocking JDBC work of each call runs; default: a new virtual thread per call, except a call
         * the blocking {@code LockClient} makes from a platform thread, which runs on that thread (it would
         * only wait for the call; docs/postgresql.md, "Threads and time bounds"). An executor given here is
         * used for every call. Give
         * your own to cap concurrency or to use platform threads (on JDK 21 to 23 a virtual thread
         * that blocks inside {@code synchronized} pins its carrier; pgjdbc 42.6+ and HikariCP do not).
         * The executor must run tasks on other threads than the caller's, or the caller blocks: a direct
         * executor ({@code Runnable::run}) defeats the asynchronous SPI. A call still queued at its
         * timeout is failed with {@code TIMEOUT} and never sent; a call the executor rejects fails with
         * {@code UNAVAILABLE}. fence-guard never shuts the executor down.
         *
         * @throws NullPointerException if {@code executor} is null
         */
        public Builder withExecutor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * How far back {@link #purgeLocks} judges a {@link FenceStrategy#CLOCK_FLOORED} lock row old enough to
         * remove: its fence must be below {@code tick(clock - clockMargin)}. The bound on how far the
         * database's clock may step back between a purge and a later acquisition (NTP slews small errors;
         * after a larger step, pause purges for the margin plus the step). Default 5 minutes; not used under
         * {@link FenceStrategy#DENSE}, whose purge folds instead.
         *
         * @throws NullPointerException if {@code clockMargin} is null
         * @throws IllegalArgumentException if it is negative or longer than 1 day
         */
        public Builder withClockMargin(Duration clockMargin) {
            this.clockMargin = Horizon.checkMargin(clockMargin);
            return this;
        }

        /**
         * Where {@link #purgeLocks} counts what it removed; default {@link LockMetrics#automatic()}.
         *
         * @throws NullPointerException if {@code metrics} is null
         */
        public Builder withMetrics(LockMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /**
         * Where the flight store's one long-lived {@code LISTEN} connection comes from; default the
         * builder's data source. Give a non-pooled one (a {@code PGSimpleDataSource}) to keep the pool's
         * connections for statements. It must reach the same database, and not through a pooler in
         * transaction mode (PgBouncer drops {@code LISTEN} there).
         *
         * @throws NullPointerException if {@code dataSource} is null
         */
        public Builder withListenerDataSource(DataSource dataSource) {
            this.listenerDataSource = Objects.requireNonNull(dataSource, "dataSource");
            return this;
        }

        /**
         * The stores with these settings. It opens one connection to learn which database the data source
         * is to, the first time any entry is built on that data source (later ones, and the stores' calls,
         * ask nothing); no table is read or written.
         *
         * @throws IllegalArgumentException if the database is none of PostgreSQL, MariaDB and MySQL (the
         *     message names it), or if it is MariaDB or MySQL and no schema was given
         * @throws dev.fenceguard.core.FenceGuardException {@code UNAVAILABLE} if no connection could be opened
         */
        public FenceGuardJdbc build() {
            Database database = Database.of(dataSource, "fence-guard-jdbc's stores");
            if (database != Database.POSTGRESQL && schema == null) {
                throw new IllegalArgumentException("schema must be given on " + database.displayName()
                        + " (the database of fence-guard's tables): withSchema(\"app\")");
            }
            TableSettings settings = TableSettings.of(dataSource).withSchema(schema == null ? TableSettings.DEFAULT_SCHEMA : schema)
                    .withFenceStrategy(strategy).withExecutor(executor);
            TableSettings locks = settings.withTable(lockTable);
            return switch (database) {
                case POSTGRESQL -> new FenceGuardJdbc(database, new PostgresLockBackend(locks),
                        new PostgresIdempotencyBackend(settings.withTable(idempotencyTable)),
                        new PostgresFlightStore(settings.withTable(flightTable), listenerDataSource == null ? dataSource : listenerDataSource), this);
                case MARIADB -> new FenceGuardJdbc(database, new MariaDbLockBackend(locks), null, null, this);
                case MYSQL -> new FenceGuardJdbc(database, new MySqlLockBackend(locks), null, null, this);
            };
        }
    }
}
