package dev.fenceguard.jooq;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.internal.SqlIdentifiers;
import dev.fenceguard.core.spi.WriteRule;
import dev.fenceguard.jooq.internal.Dialects;
import dev.fenceguard.jooq.internal.FencedStatements;
import dev.fenceguard.jooq.internal.FencingDialect;
import dev.fenceguard.core.internal.Horizon;
import dev.fenceguard.jooq.internal.MySqlFencing;
import dev.fenceguard.jooq.internal.PostgresFencing;
import dev.fenceguard.jooq.internal.WriteTarget;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Name;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * A table whose rows are guarded by a fence column: the definition of how to write to it so that
 * stale writes are refused. Immutable and thread-safe; build once and share.
 *
 * <pre>{@code
 * // jOOQ generated classes
 * FencedTable orders = FencedTable.builder(ORDERS, ORDERS.ID, ORDERS.FENCE_TOKEN).build();
 * // or plain names
 * FencedTable byName = FencedTable.builder("public", "orders", "id", "fence_token")
 *         .withKeyType(Long.class).withTombstoneColumn("fence_deleted").build();
 *
 * orders.on(dsl).update(42L, lease.fence(), Assignments.of("status", "paid")).orThrow();
 * }</pre>
 *
 * <p>The write rule of {@link FencePolicy} is applied inside each SQL statement, so the data and the
 * stored fence change together or not at all; a NULL stored fence counts as 0. Writes run in the
 * transaction of the {@link DSLContext} or {@link Connection} you pass to {@link #on}, or each in its
 * own statement on a {@link DataSource}. PostgreSQL 13+ ({@code ON CONFLICT}, {@code RETURNING}), and
 * MySQL and MariaDB (guarded {@code ON DUPLICATE KEY UPDATE}; see {@code docs/mysql-mariadb.md} for how
 * each write runs there), told apart by the {@code DSLContext}'s dialect or the connection's metadata.
 *
 * <p>Deletes need a tombstone column ({@link Builder#withTombstoneColumn(String)}, a
 * {@code BOOLEAN NOT NULL DEFAULT FALSE}): a fenced delete marks the row and keeps its fence, so a
 * zombie's upsert cannot bring it back; a delete or claim of a key that has no row inserts a tombstoned
 * row for the same reason. Your reads should add {@link #notDeleted()}. Tombstone rows are kept until you
 * purge them; {@code docs/postgresql.md} says when that is safe.
 *
 * <p>A fenced table is never a lock table: {@link Builder#build()} refuses a table named
 * {@code fence_guard_*} (fence-guard's own tables: the default lock table {@code fence_guard_locks} and
 * the migration history), a key, fence or tombstone column named like a lock table's own columns
 * ({@code lock_key}, {@code lock_id}, {@code expires_at}, {@code acquired_at}), and a jOOQ table that has
 * both {@code lock_key} and {@code lock_id} columns. A lock table, whatever its name, has only those four
 * columns besides {@code fence}, so no fenced table can be built on it: a fenced write there could take
 * over, release or rename a lock, or reset its fence counter. (If you add columns of your own to a lock
 * table, do not point a fenced table at it.)
 *
 * @since 0.1
 */
public final class FencedTable {

    /** The PostgreSQL statements; also the table's definition for everything that is the same on every database. */
    private final FencedStatements statements;
    private final FencedStatements mysql;
    private final FencePolicy policy;
    private final FenceEncoding encoding;
    private final Horizon horizon;

    private FencedTable(Builder b) {
        this.horizon = b.horizon == null ? null : new Horizon(b.horizon, b.clockMargin);
        this.policy = b.policy;
        this.encoding = b.encoding;
        this.statements = statements(b, PostgresFencing.INSTANCE);
        this.mysql = statements(b, MySqlFencing.INSTANCE);
    }

    @SuppressWarnings("unchecked")
    private static FencedStatements statements(Builder b, FencingDialect dialect) {
        WriteRule rule = new WriteRule(b.policy, b.encoding, b.metrics != null ? b.metrics : LockMetrics.automatic(), dialect.resourceType(),
                b.observations);
        return new FencedStatements(b.table, (Field<Object>) b.key, (Field<Object>) b.fence, Optional.ofNullable(b.tombstone),
                rule, dialect, Optional.ofNullable(b.horizon).map(h -> new Horizon(h, b.clockMargin)));
    }

    private FencedStatements on(FencingDialect dialect) {
        return dialect == PostgresFencing.INSTANCE ? statements : mysql;
    }

    /**
     * The horizon age writes are held to and purges use ({@link Builder#withHorizon}), if the table has one.
     *
     * @since 0.1
     */
    public Optional<Duration> horizon() {
        return Optional.ofNullable(horizon).map(Horizon::age);
    }

    /**
     * The clock margin purges leave behind the horizon ({@link Builder#withClockMargin}); meaningful only
     * with a horizon.
     *
     * @since 0.1
     */
    public Duration clockMargin() {
        return horizon == null ? Horizon.DEFAULT_MARGIN : horizon.margin();
    }

    /**
     * A builder for a jOOQ table (e.g. generated) with its key and fence fields.
     *
     * <p>The key must be unique (a primary key or unique constraint) for upserts.
     */
    public static Builder builder(Table<?> table, Field<?> key, Field<?> fence) {
        return new Builder(Objects.requireNonNull(table, "table"), Objects.requireNonNull(key, "key"),
                Objects.requireNonNull(fence, "fence"));
    }

    /**
     * A builder from plain names, each validated as a plain SQL identifier and quoted (so names are
     * case-sensitive).
     *
     * @throws IllegalArgumentException if a name is not a plain SQL identifier, or the key and fence
     *     columns are the same
     */
    public static Builder builder(String schema, String table, String keyColumn, String fenceColumn) {
        SqlIdentifiers.require("schema", schema);
        SqlIdentifiers.require("table", table);
        SqlIdentifiers.require("key column", keyColumn);
        SqlIdentifiers.require("fence column", fenceColumn);
        if (keyColumn.equals(fenceColumn)) {
            throw new IllegalArgumentException("key column and fence column must differ, both were '" + keyColumn + "'");
        }
        Table<?> t = DSL.table(DSL.name(schema, table));
        // Qualified names: ON CONFLICT .. DO UPDATE .. WHERE must not confuse the row with EXCLUDED.
        return new Builder(t, DSL.field(DSL.name(schema, table, keyColumn)), DSL.field(DSL.name(schema, table, fenceColumn)))
                .plainNames();
    }

    /** The rule writes are judged by. */
    public FencePolicy policy() {
        return policy;
    }

    /** The table's qualified name, used to describe resources in outcomes. */
    public String name() {
        return statements.name();
    }

    /**
     * The write rule as a jOOQ condition on the stored fence, for statements you build yourself:
     * {@code COALESCE(fence, 0) <= :f} (or {@code <} for {@link FencePolicy#STRICTLY_NEWER}). Set the
     * fence column to {@link #fenceValue(FenceToken)} in the same statement.
     */
    public Condition admits(FenceToken presented) {
        Objects.requireNonNull(presented, "fence");
        return statements.admits(DSL.val(fenceValue(presented), statements.fence()));
    }

    /** A condition that excludes tombstoned rows (TRUE when there is no tombstone column). */
    public Condition notDeleted() {
        return statements.notDeleted();
    }

    /** The value to store in the fence column for {@code fence}: a {@code Long} or the 15-digit text. */
    public Object fenceValue(FenceToken fence) {
        return statements.rule().encode(fence);
    }

    /**
     * Writes through {@code ctx}, in whatever transaction it runs; the statements are those of its
     * dialect (PostgreSQL, MySQL or MariaDB).
     *
     * @throws IllegalArgumentException if {@code ctx} has another dialect
     */
    public FencedWriter on(DSLContext ctx) {
        Objects.requireNonNull(ctx, "ctx");
        FencingDialect dialect = Dialects.of(ctx.dialect()).orElseThrow(() -> new IllegalArgumentException(
                "fenced writes need the POSTGRES, MYSQL or MARIADB dialect, the DSLContext has " + ctx.dialect()));
        FencedStatements s = on(dialect);
        return new FencedWriter(s, WriteTarget.of(ctx, dialect), s.rendering(ctx));
    }

    /**
     * Writes on {@code connection}, inside its current transaction; never commits or rolls back. The
     * database is told by the connection's metadata (the product name, which the drivers know without a
     * round trip).
     *
     * @throws IllegalArgumentException if the connection is to another database than PostgreSQL, MySQL or MariaDB
     */
    public FencedWriter on(Connection connection) {
        Objects.requireNonNull(connection, "connection");
        FencedStatements s = on(Dialects.of(connection));
        return new FencedWriter(s, WriteTarget.of(connection, s.dialect()), s.defaultRendering());
    }

    /**
     * Writes on connections from {@code dataSource}, one per write; a write is committed before it
     * returns (the backend commits if the pool hands out connections with auto-commit off). The database
     * is told by the metadata of the first connection fence-guard takes from {@code dataSource}, once per
     * {@code DataSource} for the life of the JVM: that connection is taken by the first call of the first
     * writer for it whose arguments pass their checks, never here (so invalid arguments fail before any
     * connection is taken).
     *
     * <p>That first call throws {@link IllegalArgumentException} if the data source is for another database
     * than PostgreSQL, MySQL or MariaDB, and a {@link dev.fenceguard.core.FenceGuardException} if the
     * connection cannot be had.
     *
     * @since 0.1
     */
    public FencedWriter on(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        Optional<FencingDialect> known = Dialects.known(dataSource);
        if (known.isPresent()) {
            return writer(dataSource, known.get());
        }
        return new FencedWriter(statements, () -> writer(dataSource, Dialects.of(dataSource)));
    }

    private FencedWriter writer(DataSource dataSource, FencingDialect dialect) {
        FencedStatements s = on(dialect);
        return new FencedWriter(s, WriteTarget.of(dataSource, s.dialect()), s.defaultRendering());
    }

    @Override
    public String toString() {
        return "FencedTable[" + name() + ", key=" + statements.key().getName() + ", fence=" + statements.fence().getName() + ", "
                + policy + ", " + encoding + statements.tombstone().map(t -> ", tombstone=" + t.getName()).orElse("")
                + (horizon == null ? "" : ", horizon=" + horizon.age() + ", clockMargin=" + horizon.margin()) + "]";
    }

    /** The columns only a lock table has (DESIGN §3; {@code fence} is left out: it is a common fence column name). */
    private static final Set<String> LOCK_TABLE_COLUMNS = Set.of("lock_key", "lock_id", "expires_at", "acquired_at");
    private static final String RESERVED_TABLE_PREFIX = "fence_guard_";

    /** Options for a {@link FencedTable}. Not thread-safe; {@link #build()} copies. */
    public static final class Builder {
        private final Table<?> table;
        private Field<?> key;
        private Field<?> fence;
        private Field<Boolean> tombstone;
        private FencePolicy policy = FencePolicy.SAME_OR_NEWER;
        private FenceEncoding encoding = FenceEncoding.INTEGER;
        private LockMetrics metrics;
        private LockObservations observations = LockObservations.none();
        private Duration horizon;
        private Duration clockMargin = Horizon.DEFAULT_MARGIN;
        private boolean clockMarginSet;
        private boolean plain;

        private Builder(Table<?> table, Field<?> key, Field<?> fence) {
            this.table = table;
            this.key = key;
            this.fence = fence;
        }

        private Builder plainNames() {
            this.plain = true;
            this.fence = DSL.field(fence.getQualifiedName(), SQLDataType.BIGINT);
            return this;
        }

        /** The write rule; default {@link FencePolicy#SAME_OR_NEWER}. */
        public Builder withPolicy(FencePolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** How the fence column stores fences: {@code BIGINT} (default) or {@code CHAR(15)} text. */
        public Builder withEncoding(FenceEncoding encoding) {
            this.encoding = Objects.requireNonNull(encoding, "encoding");
            if (plain) {
                Name name = fence.getQualifiedName();
                fence = encoding == FenceEncoding.INTEGER ? DSL.field(name, SQLDataType.BIGINT) : DSL.field(name, SQLDataType.CHAR(15));
            }
            return this;
        }

        /**
         * The Java type of the key column for plain-name tables (e.g. {@code Long.class} for
         * {@code BIGINT}, {@code UUID.class}); keys you pass are converted to it. Without it, pass keys of
         * the type the driver returns for the column.
         *
         * @throws IllegalStateException for tables built from jOOQ fields (their key field has a type)
         */
        public Builder withKeyType(Class<?> type) {
            Objects.requireNonNull(type, "type");
            if (!plain) {
                throw new IllegalStateException("withKeyType is for tables built from plain names; the jOOQ key field "
                        + key + " already has type " + key.getType().getName());
            }
            this.key = DSL.field(key.getQualifiedName(), type);
            return this;
        }

        /**
         * A {@code BOOLEAN} column that marks fenced deletes; required for {@link FencedWriter#delete}, and
         * what lets {@link FencedWriter#claim} record a fence for a key that has no row.
         *
         * @throws IllegalArgumentException if not a plain SQL identifier or the same as the key or fence column
         */
        public Builder withTombstoneColumn(String column) {
            SqlIdentifiers.require("tombstone column", column);
            if (column.equals(key.getName()) || column.equals(fence.getName())) {
                throw new IllegalArgumentException("tombstone column must differ from the key and fence columns, was '" + column + "'");
            }
            this.tombstone = DSL.field(table.getQualifiedName().append(column), SQLDataType.BOOLEAN);
            return this;
        }

        /** A jOOQ {@code BOOLEAN} field that marks fenced deletes; see {@link #withTombstoneColumn(String)}. */
        public Builder withTombstoneColumn(Field<Boolean> column) {
            this.tombstone = Objects.requireNonNull(column, "column");
            return this;
        }

        private void refuseLockTables() {
            String name = table.getName();
            if (name.toLowerCase(Locale.ROOT).startsWith(RESERVED_TABLE_PREFIX)) {
                throw new IllegalArgumentException("table '" + name + "' is one of fence-guard's own (names starting with '"
                        + RESERVED_TABLE_PREFIX + "' are reserved for lock tables and their migration history); a fenced "
                        + "write there could take over a lock or reset its fence");
            }
            List<Field<?>> columns = new ArrayList<>(List.of(key, fence));
            if (tombstone != null) {
                columns.add(tombstone);
            }
            for (Field<?> column : columns) {
                if (LOCK_TABLE_COLUMNS.contains(column.getName().toLowerCase(Locale.ROOT))) {
                    throw new IllegalArgumentException("column '" + column.getName() + "' of table '" + name + "' is named like a "
                            + "lock table's column " + LOCK_TABLE_COLUMNS.stream().sorted().toList() + "; a fenced table must not be "
                            + "a fence-guard lock table, where a fenced write could take over a lock or reset its fence");
                }
            }
            Set<String> all = new HashSet<>();
            for (Field<?> f : table.fields()) {
                all.add(f.getName().toLowerCase(Locale.ROOT));
            }
            if (all.contains("lock_key") && all.contains("lock_id")) {
                throw new IllegalArgumentException("table '" + name + "' has the columns lock_key and lock_id of a fence-guard "
                        + "lock table; a fenced write there could take over a lock or reset its fence");
            }
        }

        /** Where stale-write rejections are counted; default {@link LockMetrics#automatic()}. */
        public Builder withMetrics(LockMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /**
         * Where each fenced write is observed: one {@code fenceguard.write} observation per write, with
         * {@code backend} {@code postgres} or {@code mysql} (MySQL and MariaDB), {@code resource.type} the table's qualified name, the
         * {@code operation} ({@code update}, {@code claim}, {@code upsert}, {@code delete},
         * {@code update_all}) and the {@code outcome}. Pass the object given to
         * {@link dev.fenceguard.core.LockClient.Builder#withObservations}, so that a write made in the work
         * of a blocking {@code withLock} (on its thread) is a child of that {@code withLock}. Default
         * {@link LockObservations#none()}: nothing observed, nothing spent. docs/metrics.md lists the key values.
         *
         * @throws NullPointerException if {@code observations} is null
         * @since 0.1
         */
        public Builder withObservations(LockObservations observations) {
            this.observations = Objects.requireNonNull(observations, "observations");
            return this;
        }

        /**
         * Holds writes to a horizon and lets {@link FencedWriter#purge} remove old tombstones
         * ({@code docs/fence-lifecycle.md}). A write that would create the fence record of a key that has
         * none (an {@link FencedWriter#upsert} of an absent key, a {@link FencedWriter#claim} or
         * {@link FencedWriter#delete} of a key without a row) is applied only if its fence is above
         * {@code tick(now - horizon)}, the clock floor of the database's clock {@code horizon} ago, read after
         * the write's last wait (PostgreSQL {@code clock_timestamp()}, MySQL and MariaDB {@code SYSDATE(6)}); otherwise it is {@link dev.fenceguard.core.WriteOutcome.Stale}
         * with reason {@code BELOW_HORIZON} and the horizon as its current fence. Writes that find a record
         * are judged by the write rule alone, as without a horizon. So a tombstone older than the horizon
         * (plus the clock margin) can be removed with no bound on how long a writer may pause.
         *
         * <p>The price: a lease whose fence is older than {@code horizon} can no longer create a key. Pick a
         * horizon well above your longest lease hold (renewals included) plus the skew between the lock's
         * clock and the database's; days are cheap. Fences must come from a
         * {@link dev.fenceguard.core.FenceStrategy#CLOCK_FLOORED} lock: {@code DENSE} fences are all below
         * any horizon, so every write that creates a key would be refused. A write that may create a record
         * runs under a savepoint (on an auto-commit connection, in a transaction of its own), so that an
         * insert the re-check refuses is rolled back.
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
         * How far the database's clock may step back between a purge and a later write
         * ({@code docs/fence-lifecycle.md}): a purge removes only tombstones whose fence is below
         * {@code tick(clock_timestamp() - horizon - clockMargin)}. Default 5 minutes. Needs
         * {@link #withHorizon}.
         *
         * @param clockMargin zero or more, at most 1 day
         * @throws NullPointerException if {@code clockMargin} is null
         * @throws IllegalArgumentException if it is negative or longer than 1 day
         * @since 0.1
         */
        public Builder withClockMargin(Duration clockMargin) {
            this.clockMargin = Horizon.checkMargin(clockMargin);
            this.clockMarginSet = true;
            return this;
        }

        /**
         * The table definition.
         *
         * @throws IllegalArgumentException if the table is, or could be, a lock table (see the class
         *     comment); if a clock margin is set without a horizon; if a horizon is set with
         *     {@link FenceEncoding#TEXT} fences (not yet supported)
         */
        public FencedTable build() {
            refuseLockTables();
            if (clockMarginSet && horizon == null) {
                throw new IllegalArgumentException("withClockMargin needs withHorizon: the margin only matters to purges, which need a horizon");
            }
            if (horizon != null && encoding != FenceEncoding.INTEGER) {
                throw new IllegalArgumentException("withHorizon needs FenceEncoding.INTEGER fences (BIGINT); not yet for " + encoding
                        + " (CHAR(15)) fence columns");
            }
            Builder copy = new Builder(table, key, fence);
            copy.tombstone = tombstone;
            copy.policy = policy;
            copy.encoding = encoding;
            copy.metrics = metrics;
            copy.observations = observations;
            copy.horizon = horizon;
            copy.clockMargin = clockMargin;
            return new FencedTable(copy);
        }
    }
}
