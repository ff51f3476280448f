package dev.fenceguard.jooq;

import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import static dev.fenceguard.jooq.internal.FencedStatements.FIRST_VALUE;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.PurgeLoop;
import dev.fenceguard.core.internal.WarmUps;
import dev.fenceguard.core.spi.WriteObservation;
import dev.fenceguard.jdbc.internal.SqlCauses;
import dev.fenceguard.jooq.internal.FencedStatements;
import dev.fenceguard.jooq.internal.FencedStatements.Row;
import dev.fenceguard.jooq.internal.FencingDialect;
import dev.fenceguard.jooq.internal.FencingDialect.TombstoneWrite;
import dev.fenceguard.jooq.internal.Session;
import dev.fenceguard.jooq.internal.StatementShape;
import dev.fenceguard.jooq.internal.WriteTarget;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Field;

/**
 * Fenced writes to one {@link FencedTable} through one executor (a {@link DSLContext}, a
 * {@link java.sql.Connection} or a {@link DataSource}); get one from {@link FencedTable#on}. Cheap to create;
 * as thread-safe as the executor it wraps.
 *
 * <p>Each write is one SQL statement that applies the data and the new fence only if the write rule
 * admits the presented fence. When the statement changes nothing, a second statement reads the row
 * to tell {@link WriteOutcome.Stale} from {@link WriteOutcome.NotFound}; for {@link #delete} and
 * {@link #claim} that second statement also records the fence on a tombstone when the key has no live
 * row. Database errors are thrown as {@link dev.fenceguard.core.FenceGuardException} with a code mapped
 * from the SQLSTATE found in the error's cause chain.
 *
 * <p>Statements are rendered once per table, operation and set of assigned columns, and run as prepared
 * statements on the executor's connection, in its transaction. Values of plain JDBC types ({@code String},
 * numbers, {@code Boolean}, {@code UUID}, {@code byte[]}, {@code java.time} dates and times) are bound by
 * the driver directly; a value that needs jOOQ's binding (a column with a converter or a custom binding,
 * {@code JSONB}, arrays, enums) makes its statement run through jOOQ. So a {@code DSLContext}'s
 * {@code ExecuteListener}s see only the statements that run through jOOQ; its settings that change how
 * names render (a schema mapping, quoting, name case) are applied.
 *
 * <p>Once a key has seen fence {@code f} (a write, a claim or a delete), no write with a lower fence
 * changes it, whether the row exists, was deleted or never existed; with {@link
 * dev.fenceguard.core.FencePolicy#STRICTLY_NEWER}, not with {@code f} either. The one exception is a table
 * without a tombstone column: there a claim of an absent key cannot record anything (and {@code delete}
 * is refused).
 *
 * <p>Each call that passes its argument checks is observed as one {@code fenceguard.write}
 * ({@link FencedTable.Builder#withObservations}), its second statement included; invalid arguments,
 * refused before any SQL, are not.
 *
 * @since 0.1
 */
public final class FencedWriter {

    private static final int MAX_ATTEMPTS = 5;

    /** The single-key writes; each differs only in its first statement and in what follows a miss. */
    private enum Operation {
        UPDATE, UPSERT, CLAIM, DELETE;

        /** The {@code operation} key value of its observation. */
        final String observed = name().toLowerCase(Locale.ROOT);
        final String description = "fenced " + observed;
    }

    private final FencedStatements t;
    private final WriteTarget target;
    private final FencedStatements.Rendering rendering;
    /** Null when this writer knows its database; else what makes the writer that does, on the first call. */
    private final Supplier<FencedWriter> resolver;
    private volatile FencedWriter resolved;

    FencedWriter(FencedStatements statements, WriteTarget target, FencedStatements.Rendering rendering) {
        this.t = statements;
        this.target = target;
        this.rendering = rendering;
        this.resolver = null;
    }

    /**
     * A writer whose database is learnt on its first call, after that call's arguments are checked:
     * {@code checks} (any database's statements of the table; the checks are the same on all) checks
     * them, {@code resolver} makes the writer that runs the call (it may take a connection).
     */
    FencedWriter(FencedStatements checks, Supplier<FencedWriter> resolver) {
        this.t = checks;
        this.target = null;
        this.rendering = null;
        this.resolver = resolver;
    }

    /** The writer that runs statements: this one, or the one its database was learnt for. */
    private FencedWriter resolved() {
        if (resolver == null) {
            return this;
        }
        FencedWriter w = resolved;
        if (w == null) {
            w = resolver.get(); // two first calls at once may both resolve; either result is the same writer
            resolved = w;
        }
        return w;
    }

    /**
     * {@code UPDATE .. SET <values>, fence = :f WHERE key = :k AND <rule> AND <not deleted>}.
     *
     * <p>An update never creates a row or a tombstone: on a key without a live row whose tombstone (if
     * any) admits {@code fence} it returns {@code NotFound} and records nothing. Use {@link #claim} or
     * {@link #delete} to leave a fence on an absent key.
     *
     * @return {@code Applied}; {@code Stale} if the row holds a fence the rule does not let {@code fence}
     *     replace (including a tombstone with a newer fence); {@code NotFound} if there is no such row or
     *     its tombstone admits {@code fence} (nothing recorded)
     * @throws IllegalArgumentException if an argument is invalid (before any SQL)
     */
    public WriteOutcome update(Object key, FenceToken fence, Assignments values) {
        return write(Operation.UPDATE, key, fence, values, checked(values, 0));
    }

    /**
     * Records {@code fence} on the row without changing its data: {@code UPDATE .. SET fence = :f WHERE
     * key = :k AND <rule> AND <not deleted>}. Do this right after acquiring a lock and <em>before</em>
     * reading the row for a read-modify-write: from then on a zombie's write is refused, so it cannot slip
     * in between your read and your write.
     *
     * <p>On a row that is absent or deleted, a claim the rule admits still records {@code fence}, on the
     * tombstone: it raises a deleted row's fence, or inserts a tombstoned row ({@code key}, {@code fence},
     * tombstone {@code true}) for a key that never existed, and returns {@code NotFound} (there is no row to
     * write, but older fences are refused from now on: a zombie's {@link #upsert} of the key is
     * {@code Stale}). That second statement runs only on this path; see {@link #delete(Object, FenceToken,
     * Assignments)} for tables with {@code NOT NULL} columns without defaults.
     *
     * <p>Without a tombstone column a claim of an absent row cannot record anything: it returns
     * {@code NotFound} and a later {@code upsert} of that key with any fence is applied.
     *
     * @return {@code Applied} (the row exists and now holds {@code fence}); {@code Stale(stored)}; or
     *     {@code NotFound} (no live row; with a tombstone column, the tombstone now holds {@code fence})
     * @throws IllegalArgumentException if an argument is invalid (before any SQL)
     * @throws dev.fenceguard.core.FenceGuardException {@code INVALID_ARGUMENT} if the table refuses the
     *     tombstone row (a {@code NOT NULL} column without a default, a check constraint, ...); the message
     *     names the column or constraint
     */
    public WriteOutcome claim(Object key, FenceToken fence) {
        return write(Operation.CLAIM, key, fence, Assignments.NONE, checked(Assignments.NONE, 0));
    }

    /**
     * {@link #claim(Object, FenceToken)}, with {@code placeholder} values for the columns of a tombstone row
     * it inserts for a key that never existed (e.g. {@code NOT NULL} columns without defaults). The values
     * are used only in that insert, never on an existing row.
     *
     * @throws IllegalStateException if the table has no tombstone column (nothing would use the values)
     * @throws IllegalArgumentException if an argument is invalid (before any SQL)
     * @throws dev.fenceguard.core.FenceGuardException {@code INVALID_ARGUMENT} if the table still refuses the
     *     tombstone row; the message names the column or constraint
     */
    public WriteOutcome claim(Object key, FenceToken fence, Assignments placeholder) {
        t.requireTombstone("claim with tombstone values");
        return write(Operation.CLAIM, key, fence, placeholder, checked(placeholder, 0));
    }

    /**
     * {@code INSERT .. ON CONFLICT (key) DO UPDATE SET <values>, fence = :f [, tombstone = false]
     * WHERE <rule>}: inserts a new row, or replaces an existing (or tombstoned) one if the rule admits the
     * fence. Needs a unique constraint on the key column.
     *
     * <p>A tombstone left by {@link #delete} or by a {@link #claim} of an absent key counts like a row: an
     * older fence is {@code Stale} and the key stays deleted; an admitted fence recreates the row (tombstone
     * {@code false}). A key never seen is inserted. A NULL stored fence counts as 0.
     *
     * @return {@code Applied}, or {@code Stale} with the fence the row or tombstone holds
     * @throws IllegalArgumentException if an argument is invalid (before any SQL)
     */
    public WriteOutcome upsert(Object key, FenceToken fence, Assignments values) {
        return write(Operation.UPSERT, key, fence, values, checked(values, 0));
    }

    /**
     * Fenced delete that keeps a tombstone: {@code UPDATE .. SET tombstone = true, fence = :f WHERE
     * key = :k AND <rule>}. Deleting an already deleted row under a newer fence raises the tombstone's
     * fence (and is {@code Applied}), so zombies of every older lease stay out.
     *
     * <p>A key that has no row at all gets one: when the {@code UPDATE} finds nothing, a second statement
     * inserts a tombstoned row ({@code key}, {@code fence}, tombstone {@code true}; the other columns take
     * their defaults) and the delete is {@code Applied}. Without it a zombie's {@link #upsert} under an
     * older fence would create the row the newer lease had deleted. That statement,
     * {@code INSERT .. SELECT .. WHERE NOT EXISTS (row) ON CONFLICT (key) DO UPDATE SET tombstone = true,
     * fence = :f WHERE <rule>}, only inserts when there is no row, so a row that exists (a stale delete)
     * is never re-checked against the table's constraints, and it is atomic against a concurrent insert of
     * the key. If the table has {@code NOT NULL} columns without defaults, the insert is refused: give them
     * defaults, or use {@link #delete(Object, FenceToken, Assignments)}. Inside your transaction, PostgreSQL
     * aborts the transaction on that error.
     *
     * <p>Every tombstone is a row kept until you purge it; see the module documentation ({@code
     * docs/postgresql.md}) for the cost and for when a tombstone may be removed safely.
     *
     * @return {@code Applied} (the key now reads as deleted and its tombstone holds {@code fence}, whether
     *     the row existed, was already deleted, or never existed), or {@code Stale(stored)} and nothing changed
     * @throws IllegalStateException if the table has no tombstone column
     * @throws IllegalArgumentException if an argument is invalid (before any SQL)
     * @throws dev.fenceguard.core.FenceGuardException {@code INVALID_ARGUMENT} if the table refuses the
     *     tombstone row of a key that never existed; the message names the column or constraint
     */
    public WriteOutcome delete(Object key, FenceToken fence) {
        t.requireTombstone("delete");
        return write(Operation.DELETE, key, fence, Assignments.NONE, checked(Assignments.NONE, 0));
    }

    /**
     * {@link #delete(Object, FenceToken)}, with {@code placeholder} values for the columns of the tombstone
     * row it inserts for a key that never existed, for tables whose {@code NOT NULL} columns have no
     * defaults: {@code delete(7L, fence, Assignments.of("status", "deleted"))}. The values are used only in
     * that insert, never on an existing row.
     *
     * @throws IllegalStateException if the table has no tombstone column
     * @throws IllegalArgumentException if an argument is invalid, or {@code placeholder} sets the key, fence
     *     or tombstone column (before any SQL)
     * @throws dev.fenceguard.core.FenceGuardException {@code INVALID_ARGUMENT} if the table still refuses
     *     the tombstone row; the message names the column or constraint
     */
    public WriteOutcome delete(Object key, FenceToken fence, Assignments placeholder) {
        t.requireTombstone("delete");
        return write(Operation.DELETE, key, fence, placeholder, checked(placeholder, 0));
    }

    /**
     * One fenced {@code UPDATE} over several keys, with an outcome per key: rows whose fence admits
     * {@code fence} are updated (all in the one statement), the others are reported {@code Stale} or
     * {@code NotFound}, as by {@link #update} (nothing is recorded for a key without a live row). Duplicate
     * keys are updated once. Observed as one write ({@code update_all}) whose outcome is the worst of the
     * keys': {@code stale} if any key was, else {@code not_found} if any key was, else {@code applied}.
     *
     * @return outcomes by key, in the order of {@code keys}
     * @throws IllegalArgumentException if {@code keys} is empty or an argument is invalid (before any SQL)
     */
    public Map<Object, WriteOutcome> updateAll(Collection<?> keys, FenceToken fence, Assignments values) {
        Objects.requireNonNull(keys, "keys");
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("updateAll needs at least one key");
        }
        Set<Object> ks = new LinkedHashSet<>();
        for (Object key : keys) {
            ks.add(t.checkKey(key));
        }
        Objects.requireNonNull(fence, "fence");
        int padded = FencedStatements.padded(ks.size());
        Object[] binds = checked(values, padded);
        if (resolver != null) {
            return resolved().updateAll(keys, fence, values);
        }
        List<Field<?>> columns = values.columns();
        t.bind(binds, ks.iterator().next(), fence);
        putKeys(binds, FIRST_VALUE + columns.size(), ks, padded);
        WriteObservation observation = t.rule().startWrite(t.name(), "update_all", fence);
        Map<Object, WriteOutcome> outcomes;
        try (LockObservations.Scope scope = observation.openScope()) {
            outcomes = runUpdateAll(ks, fence, columns, padded, binds);
        } catch (RuntimeException | Error e) {
            observation.fail(e);
            throw e;
        }
        observation.finish(worst(outcomes.values()));
        return outcomes;
    }

    private Map<Object, WriteOutcome> runUpdateAll(Set<Object> ks, FenceToken fence, List<Field<?>> columns, int padded, Object[] binds) {
        return target.run(t.name() + "[" + ks.size() + " keys]", "fenced multi-row update", session -> {
            Set<Object> applied = t.dialect().updateAll(session, t, columns, ks, padded, binds, rendering);
            List<Object> rejected = ks.stream().filter(k -> !applied.contains(k)).toList();
            Map<Object, Row> current = new HashMap<>();
            if (!rejected.isEmpty()) {
                int n = FencedStatements.padded(rejected.size());
                Object[] read = new Object[FIRST_VALUE + n];
                putKeys(read, FIRST_VALUE, rejected, n);
                for (Object[] raw : session.fetch(t.readRows(n, rendering), read)) {
                    Row row = t.row(raw, 0);
                    current.put(row.key(), row);
                }
            }
            Map<Object, WriteOutcome> out = new LinkedHashMap<>();
            for (Object k : ks) {
                String resource = t.resource(k);
                out.put(k, applied.contains(k) ? new WriteOutcome.Applied(resource, fence.value()) : judge(current.get(k), fence, resource));
            }
            return out;
        });
    }

    /**
     * Gets this writer ready for its first writes, so that a service pays jOOQ's first rendering, the
     * driver's first statements and the first run of this code at startup instead of in its first
     * request. For each of {@code columnSets} (only their columns count), and for the claim's statement,
     * it runs the {@link #update} path for real with a NULL key, which no row has: {@code UPDATE .. WHERE key = NULL ..} changes and
     * locks no row (statement-level triggers on the table do fire), and the row read that tells
     * {@code Stale} from {@code NotFound} finds nothing. It renders the other statements of those columns
     * ({@link #upsert}, single-key {@link #updateAll}) and of {@link #claim}, {@link #delete} and the
     * tombstone records, and has the database describe each without running it (PostgreSQL: JDBC
     * {@code getParameterMetaData}; MySQL and MariaDB, whose drivers describe on the client:
     * {@code EXPLAIN} with NULL values; either way parsed and checked against the table, never executed).
     * So nothing is written, a missing table or column fails here, and the statements land in the table's
     * cache. On MySQL and MariaDB the write through a {@code DataSource} learns the database first (one
     * connection, once per data source). Not observed and not counted. Idempotent.
     *
     * <pre>{@code
     * orders.on(dataSource).warmUp(Assignments.of("status", ""), Assignments.of("status", "").and("paid_at", null));
     * }</pre>
     *
     * @param columnSets the column sets your writes assign, as example assignments (their values are
     *     bound to the statement that matches no row)
     * @throws IllegalArgumentException if an assignment sets the key, fence or tombstone column or its
     *     values do not convert to the columns' types (before any SQL)
     * @throws FenceGuardException mapped from the database's error (e.g. {@code UNAVAILABLE} when it
     *     cannot be reached, {@code INVALID_ARGUMENT} for a missing table or column)
     * @since 0.1
     */
    public void warmUp(Assignments... columnSets) {
        Objects.requireNonNull(columnSets, "columnSets");
        List<Object[]> binds = new ArrayList<>();
        for (Assignments set : columnSets) {
            binds.add(checked(set, 0));
        }
        if (resolver != null) {
            resolved().warmUp(columnSets);
            return;
        }
        List<StatementShape> described = new ArrayList<>();
        for (Assignments set : columnSets) {
            List<Field<?>> columns = set.columns();
            described.add(t.upsert(columns, rendering));
            described.addAll(t.dialect().warmUpShapes(t, columns, rendering));
        }
        described.add(t.readRows(1, rendering));
        if (t.tombstone().isPresent()) {
            described.add(t.markDeleted(rendering));
        }
        // Run for real, matching no row: an update of no column is the claim's first statement.
        new SingleWrite(Operation.UPDATE, null, FenceToken.of(1), Assignments.NONE, checked(Assignments.NONE, 0)).get();
        for (int i = 0; i < columnSets.length; i++) {
            new SingleWrite(Operation.UPDATE, null, FenceToken.of(1), columnSets[i], binds.get(i)).get();
        }
        target.run(t.name(), "warm-up of fenced writes", session -> {
            for (StatementShape shape : described) {
                t.dialect().describe(session, shape);
            }
            return null;
        });
        WarmUps.outcomes();
    }

    /**
     * Removes tombstones that no write can need any more: rows whose tombstone column is {@code true} and
     * whose fence is below {@code tick(clock_timestamp() - horizon - clockMargin)}, the clock floor of the
     * database's clock that long ago ({@link FencedTable.Builder#withHorizon}, {@code docs/fence-lifecycle.md}).
     * Safe with no bound on how long a writer pauses: a write that finds no record is refused at or below
     * the horizon, which is above every fence removed. Live rows are never touched.
     *
     * <p>Runs in batches in key order, each one statement on PostgreSQL ({@code DELETE .. WHERE key IN (SELECT
     * .. ORDER BY key LIMIT n FOR UPDATE SKIP LOCKED) AND <condition again> RETURNING key}), two on MySQL and
     * MariaDB (the {@code SELECT .. FOR UPDATE SKIP LOCKED}, then {@code DELETE .. WHERE key IN (..) AND
     * <condition again>}; MariaDB 10.6+, MySQL 8.0+), on a {@code DataSource} each in a transaction of its own
     * (MySQL and MariaDB: at read committed); in the caller's transaction otherwise, whose commit is then the
     * caller's. The condition is re-checked on each row's newest version under its row lock, so a
     * tombstone that a concurrent write revives or raises stays; rows a write holds are skipped (and left for
     * a later purge). Stops when a batch finds fewer than the batch size, or when the purge's time bound has
     * passed; then {@link PurgeResult#resumeAfter()} is the key to go on after. Removed rows are counted in
     * {@code fenceguard.purge.removed} ({@code store=postgres}, or {@code mysql} on MySQL and MariaDB as the
     * stale-write meter names them; {@code kind=tombstone}) of the table's
     * {@link FencedTable.Builder#withMetrics metrics}. Not observed as a write. The batch query wants an
     * index of the tombstone rows by key: {@code TombstoneIndex} (with {@code TombstoneIndexMigration}) in
     * fence-guard-migrations adds one (see {@code docs/mysql-mariadb.md} for MySQL and MariaDB).
     *
     * @return what it removed, and where it stopped
     * @throws NullPointerException if {@code purge} is null
     * @throws IllegalStateException if the table has no horizon or no tombstone column (before any SQL)
     * @throws IllegalArgumentException if the purge's start key cannot be converted to the key column's type
     * @throws FenceGuardException mapped from the database's error
     * @since 0.1
     */
    public PurgeResult purge(Purge purge) {
        Objects.requireNonNull(purge, "purge");
        if (t.horizon().isEmpty()) {
            throw new IllegalStateException("purge of " + t.name() + " needs a horizon (FencedTable.Builder.withHorizon): without"
                    + " one, a write that finds no record would admit any fence, so no tombstone can be removed safely");
        }
        if (t.tombstone().isEmpty()) {
            throw new IllegalStateException("purge of " + t.name() + " needs a tombstone column (FencedTable.Builder"
                    + ".withTombstoneColumn): it removes tombstone rows, and this table has none");
        }
        Object start = purge.startAfter().map(t::checkKey).orElse(null);
        if (resolver != null) {
            return resolved().purge(purge);
        }
        return PurgeLoop.run(purge, start, after -> {
            FencingDialect.PurgeBatch batch = target.run(t.name(), "purge of tombstones",
                    session -> t.dialect().purgeBatch(session, t, after, purge.batchSize(), rendering));
            t.rule().purged("tombstone", batch.removed());
            return new PurgeLoop.Batch<>(batch.examined(), batch.last(), batch.removed());
        }, last -> last);
    }

    /**
     * The one path of every single-key write: arguments checked (before any SQL), then the operation's
     * statement; if it matched nothing, a second statement that reads the row, or for a claim or delete
     * records the fence on a tombstone; then the outcome. Only a concurrent change of the row between the
     * two statements sends it round again.
     */
    private WriteOutcome write(Operation op, Object key, FenceToken fence, Assignments values, Object[] binds) {
        Object k = t.checkKey(key);
        Objects.requireNonNull(fence, "fence");
        FencedWriter w = resolved();
        return w.t.rule().observe(w.t.name(), op.observed, fence, w.new SingleWrite(op, k, fence, values, binds));
    }

    /**
     * One single-key write after its checks: the write {@link #write} observes and the work it runs on the
     * connection, as one object, so that a write makes no lambdas of its own. The warm-up runs it too.
     */
    private final class SingleWrite implements Supplier<WriteOutcome>, WriteTarget.Work<WriteOutcome> {
        private final Operation op;
        /** Null only for a warm-up, which matches no row. */
        private final Object k;
        private final FenceToken fence;
        private final Assignments values;
        /** The per-call values, the assigned ones already checked and in place. */
        private final Object[] binds;
        private String resource;

        SingleWrite(Operation op, Object k, FenceToken fence, Assignments values, Object[] binds) {
            this.op = op;
            this.k = k;
            this.fence = fence;
            this.values = values;
            this.binds = binds;
        }

        /** The write, unobserved. */
        @Override
        public WriteOutcome get() {
            resource = t.resource(k);
            t.bind(binds, k, fence);
            return target.run(resource, op.description, this);
        }

        /** The statements, on the connection. */
        @Override
        public WriteOutcome apply(Session session) throws SQLException {
            boolean recordsTombstone = (op == Operation.CLAIM || op == Operation.DELETE) && t.tombstone().isPresent();
            List<Field<?>> columns = values.columns();
            StatementShape first = firstStatement(op, values);
            for (int attempt = 1; ; attempt++) {
                if (op == Operation.UPSERT && t.horizon().isPresent()) {
                    Optional<WriteOutcome> out = upsertUnderHorizon(session, columns, first, binds, fence, resource);
                    if (out.isPresent()) {
                        return out.get();
                    }
                } else if (op == Operation.UPSERT) {
                    FencingDialect.Upserted u = t.dialect().runUpsert(session, first, binds);
                    if (u.applied()) {
                        return new WriteOutcome.Applied(resource, fence.value());
                    }
                    if (u.staleFence() >= 0) {
                        return t.rule().stale(resource, fence, u.staleFence());
                    }
                } else if (t.dialect().runUpdate(session, first, binds)) {
                    return new WriteOutcome.Applied(resource, fence.value());
                }
                Optional<WriteOutcome> out = op == Operation.UPSERT && t.horizon().isPresent() ? Optional.empty() : recordsTombstone
                        ? recordOnTombstone(session, op, columns, binds, fence, resource)
                        : Optional.of(judgeAfterMiss(session, op, binds, fence, resource));
                if (out.isPresent()) {
                    return out.get();
                }
                // Each retry follows a concurrent change of the row; fences only rise, so this ends quickly.
                if (attempt >= MAX_ATTEMPTS) {
                    throw new FenceGuardException(ErrorCode.UNAVAILABLE, resource, op.description + " gave up after "
                            + attempt + " attempts: the row kept changing between statements");
                }
            }
        }
    }

    /**
     * The statement an update or upsert of {@code values}' columns last ran as, remembered on the
     * {@link Assignments} (one slot): an instance kept as a constant then skips the lookup in the table's
     * cache, whose key is built from the columns on every call. One built per call looks up as before.
     */
    record LastShape(FencedStatements statements, FencedStatements.Rendering rendering, Operation op, StatementShape shape) {}

    /** The first statement of {@code op} for {@code values}' columns. */
    private StatementShape firstStatement(Operation op, Assignments values) {
        if (op == Operation.CLAIM) {
            return t.claim(rendering);
        }
        if (op == Operation.DELETE) {
            return t.markDeleted(rendering);
        }
        LastShape last = values.lastShape;
        if (last != null && last.op() == op && last.statements() == t && last.rendering() == rendering) {
            return last.shape();
        }
        List<Field<?>> columns = values.columns();
        StatementShape shape = op == Operation.UPDATE ? t.update(columns, rendering) : t.upsert(columns, rendering);
        values.lastShape = new LastShape(t, rendering, op, shape);
        return shape;
    }

    /**
     * An upsert of a table with a horizon (docs/fence-lifecycle.md, rule 1), under a savepoint: a row it
     * inserted with a fence at or below the horizon read after the statement's last wait is rolled back
     * and refused as {@code BELOW_HORIZON}. When the statement wrote nothing, one read of the row and the
     * horizon tells why.
     *
     * @return the outcome, or empty if the row changed in between (run again)
     */
    private Optional<WriteOutcome> upsertUnderHorizon(Session session, List<Field<?>> columns, StatementShape upsert, Object[] binds,
            FenceToken fence, String resource) throws SQLException {
        Optional<FencingDialect.Created> created = session.undoable(s -> t.dialect().runHorizonUpsert(s, t, columns, upsert, binds, rendering),
                c -> c.isPresent() && belowHorizon(c.get(), fence));
        if (created.isPresent()) {
            return Optional.of(belowHorizon(created.get(), fence)
                    ? t.rule().belowHorizon(resource, fence, created.get().horizonAfter())
                    : new WriteOutcome.Applied(resource, fence.value()));
        }
        return refusedUnderHorizon(session, binds, fence, resource);
    }

    private static boolean belowHorizon(FencingDialect.Created c, FenceToken fence) {
        return c.inserted() && fence.value() <= c.horizonAfter();
    }

    /**
     * Why a write of a table with a horizon that may create a record wrote nothing: a record that refuses
     * the fence ({@code Stale}), no record and a fence at or below the horizon ({@code BELOW_HORIZON}), or
     * neither, because the row changed after the statement (empty: run again).
     */
    private Optional<WriteOutcome> refusedUnderHorizon(Session session, Object[] binds, FenceToken fence, String resource)
            throws SQLException {
        FencingDialect.HorizonRead read = t.dialect().readWithHorizon(session, t, binds, rendering);
        if (read.row() == null) {
            return fence.value() <= read.horizon() ? Optional.of(t.rule().belowHorizon(resource, fence, read.horizon())) : Optional.empty();
        }
        return t.rule().admits(fence, read.row().fence()) ? Optional.empty()
                : Optional.of(t.rule().stale(resource, fence, read.row().fence()));
    }

    /** The outcome an observation of several writes ends with: the worst one (stale, then not found, then applied). */
    private static WriteOutcome worst(Collection<WriteOutcome> outcomes) {
        WriteOutcome worst = null;
        for (WriteOutcome o : outcomes) {
            if (worst == null || severity(o) > severity(worst)) {
                worst = o;
            }
        }
        return worst;
    }

    private static int severity(WriteOutcome outcome) {
        // Type tests, not a pattern switch, whose first run generates a class (see WriteObservation#finish).
        return outcome instanceof WriteOutcome.Applied ? 0 : outcome instanceof WriteOutcome.NotFound ? 1 : 2;
    }

    /**
     * The second statement of a claim or delete whose first matched nothing (see
     * {@link dev.fenceguard.jooq.internal.FencingDialect#recordTombstone}).
     *
     * @return the outcome, or empty if the row changed between the two statements (run both again)
     */
    private Optional<WriteOutcome> recordOnTombstone(Session session, Operation op, List<Field<?>> placeholders, Object[] binds,
            FenceToken fence, String resource) throws SQLException {
        boolean delete = op == Operation.DELETE;
        boolean horizon = t.horizon().isPresent();
        TombstoneWrite w;
        try {
            w = horizon
                    ? session.undoable(s -> t.dialect().recordTombstone(s, t, delete, placeholders, binds, rendering),
                            r -> r.inserted() && fence.value() <= r.horizonAfter())
                    : t.dialect().recordTombstone(session, t, delete, placeholders, binds, rendering);
        } catch (SQLException e) {
            if (t.dialect().rowRefused(e)) { // a constraint, or a column without a value, refused the tombstone row
                throw tombstoneRefused(e, SqlCauses.of(e).map(SQLException::getSQLState).orElse(""), resource, op, fence);
            }
            throw e;
        }
        if (w.inserted() && fence.value() <= w.horizonAfter()) { // rule 1, re-checked after a wait: rolled back
            return Optional.of(t.rule().belowHorizon(resource, fence, w.horizonAfter()));
        }
        if (w.recorded()) { // tombstone inserted, or an admitted conflict updated
            return Optional.of(w.deletedAfter() && !delete ? new WriteOutcome.NotFound(resource) : new WriteOutcome.Applied(resource, fence.value()));
        }
        if (w.raised()) { // a claim raised a tombstone's fence
            return Optional.of(new WriteOutcome.NotFound(resource));
        }
        if (horizon && (w.seen() == null || t.rule().admits(fence, w.seen().fence()))) {
            // No row, and the horizon refused the insert; or a row that changed (or was purged) meanwhile.
            return refusedUnderHorizon(session, binds, fence, resource);
        }
        // No row in the statement's snapshot, yet the insert conflicted: a concurrent insert won and the rule
        // refused our fence over it. Read what it wrote.
        Row seen = w.seen() != null ? w.seen() : readRow(session, binds);
        if (seen == null || t.rule().admits(fence, seen.fence())) {
            return Optional.empty(); // the row appeared or changed after the first statement
        }
        return Optional.of(t.rule().stale(resource, fence, seen.fence()));
    }

    /**
     * A tombstone row the table refused, as {@code INVALID_ARGUMENT} saying how to fix it. Like every error,
     * it names the column or constraint but never quotes the row.
     */
    private FenceGuardException tombstoneRefused(SQLException e, String state, String resource, Operation op, FenceToken fence) {
        String operation = op.name().toLowerCase(Locale.ROOT);
        Optional<String> column = t.dialect().column(e);
        String what = column.map(c -> "column \"" + c + "\"")
                .or(() -> t.dialect().constraint(e).map(c -> "constraint \"" + c + "\"")).orElse("a constraint");
        boolean missingValue = column.isPresent() && ("23502".equals(state) || "mysql".equals(t.dialect().resourceType()));
        String fix = missingValue
                ? "give column \"" + column.get() + "\" a default or allow NULL in it, or pass values for tombstone rows: "
                        + operation + "(key, fence, Assignments.of(\"" + column.get() + "\", ...))"
                : "pass values that satisfy it for tombstone rows: " + operation + "(key, fence, Assignments.of(...))";
        return new FenceGuardException(ErrorCode.INVALID_ARGUMENT, resource, op.description + " found no row, so it"
                + " inserts a tombstone row (key, fence " + fence.value() + ", " + t.tombstone().orElseThrow().getName()
                + " = true) to refuse older fences, and the table refused that row on " + what + " (SQLSTATE "
                + state + "); " + fix, t.dialect().map(e, resource, op.description).getCause());
    }

    private Row readRow(Session session, Object[] binds) throws SQLException {
        List<Object[]> rows = session.fetch(t.readRow(rendering), binds);
        return rows.isEmpty() ? null : t.row(rows.getFirst(), 0);
    }

    /**
     * The outcome of an update or an upsert whose statement did not say it wrote the row, from the row
     * read after it (and for an update, whether the dialect's read found that its statement matched).
     */
    private WriteOutcome judgeAfterMiss(Session session, Operation op, Object[] binds, FenceToken fence, String resource)
            throws SQLException {
        if (op == Operation.UPSERT) {
            // Only an upsert run through jOOQ gets here (MySQL: no insert id), its count 0 or 1 meaning an
            // insert, a row set to the values it held, or a refusal. Under SAME_OR_NEWER a refusal needs a stored
            // fence above the presented one and fences never fall, so a row now holding exactly the presented
            // fence was written, or already held it and was admitted: applied.
            Row row = readRow(session, binds);
            if (row != null && row.fence() == fence.value() && t.rule().policy() == dev.fenceguard.core.FencePolicy.SAME_OR_NEWER) {
                return new WriteOutcome.Applied(resource, fence.value());
            }
            return judge(row, fence, resource);
        }
        FencingDialect.Read read = t.dialect().readAfterMiss(session, t, binds, rendering);
        return read.matched() ? new WriteOutcome.Applied(resource, fence.value()) : judge(read.row(), fence, resource);
    }

    /** The outcome of a write whose statement matched no row, by the row as read after it. */
    private WriteOutcome judge(Row row, FenceToken fence, String resource) {
        if (row == null || t.rule().admits(fence, row.fence())) {
            // No row; or the rule admits the fence, so the statement matched nothing for another reason: the
            // row is deleted (or appeared only after our statement).
            return new WriteOutcome.NotFound(resource);
        }
        return t.rule().stale(resource, fence, row.fence());
    }

    /** The per-call values with {@code values}' checked (see {@link FencedStatements#checkValues}); before any SQL. */
    private Object[] checked(Assignments values, int keys) {
        Objects.requireNonNull(values, "values");
        return t.checkValues(values.values(), keys);
    }

    /** {@code keys} into the slots from {@code first} on, the last repeated up to {@code padded} slots. */
    private static void putKeys(Object[] into, int first, Collection<Object> keys, int padded) {
        int i = first;
        Object last = null;
        for (Object k : keys) {
            into[i++] = k;
            last = k;
        }
        while (i < first + padded) {
            into[i++] = last;
        }
    }
}
