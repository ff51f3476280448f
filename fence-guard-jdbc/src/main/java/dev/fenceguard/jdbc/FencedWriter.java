package dev.fenceguard.jdbc;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.WriteRule;
import dev.fenceguard.jdbc.internal.OwnConnection;
import dev.fenceguard.jdbc.internal.PgErrors;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Name;
import org.jooq.Query;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.postgresql.util.PSQLException;

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
 * from the SQLSTATE.
 *
 * <p>Once a key has seen fence {@code f} (a write, a claim or a delete), no write with a lower fence
 * changes it, whether the row exists, was deleted or never existed; with {@link
 * dev.fenceguard.core.FencePolicy#STRICTLY_NEWER}, not with {@code f} either. The one exception is a table
 * without a tombstone column: there a claim of an absent key cannot record anything (and {@code delete}
 * is refused).
 */
public final class FencedWriter {

    private static final Map<Field<?>, Object> NO_VALUES = Map.of();
    private static final int MAX_ATTEMPTS = 5;

    private final FencedTable t;
    private final Executor executor;

    FencedWriter(FencedTable table, Executor executor) {
        this.t = table;
        this.executor = executor;
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
        Object k = checkKey(key);
        Objects.requireNonNull(fence, "fence");
        Map<Field<?>, Object> set = checkValues(values);
        String resource = resource(k);
        return executor.run(resource, "fenced update", ctx -> {
            int rows = ctx.update(t.table()).set(set).set(t.fence(), t.fenceValue(fence))
                    .where(t.key().eq(k)).and(t.admits(fence)).and(t.notDeleted()).execute();
            return rows == 1 ? new WriteOutcome.Applied(resource, fence.value()) : diagnose(ctx, k, fence, resource);
        });
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
        return claim(key, fence, NO_VALUES);
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
        requireTombstone("claim with tombstone values");
        return claim(key, fence, checkValues(placeholder));
    }

    private WriteOutcome claim(Object key, FenceToken fence, Map<Field<?>, Object> placeholder) {
        Object k = checkKey(key);
        Objects.requireNonNull(fence, "fence");
        String resource = resource(k);
        return executor.run(resource, "fenced claim", ctx -> {
            for (int attempt = 1; ; attempt++) {
                int rows = ctx.update(t.table()).set(t.fence(), t.fenceValue(fence))
                        .where(t.key().eq(k)).and(t.admits(fence)).and(t.notDeleted()).execute();
                if (rows == 1) {
                    return new WriteOutcome.Applied(resource, fence.value());
                }
                if (t.tombstone().isEmpty()) {
                    return diagnose(ctx, k, fence, resource);
                }
                Optional<WriteOutcome> out = recordOnTombstone(ctx, k, fence, placeholder, resource, false);
                if (out.isPresent()) {
                    return out.get();
                }
                checkAttempts(attempt, resource, "claim");
            }
        });
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
        Object k = checkKey(key);
        Objects.requireNonNull(fence, "fence");
        Map<Field<?>, Object> set = checkValues(values);
        String resource = resource(k);
        Map<Field<?>, Object> update = new LinkedHashMap<>(set);
        update.put(t.fence(), t.fenceValue(fence));
        t.tombstone().ifPresent(d -> update.put(d, false));
        Map<Field<?>, Object> insert = new LinkedHashMap<>();
        insert.put(t.key(), k);
        insert.putAll(update);
        return executor.run(resource, "fenced upsert", ctx -> {
            int rows = ctx.insertInto(t.table()).set(insert).onConflict(t.key()).doUpdate().set(update)
                    .where(t.admits(fence)).execute();
            return rows == 1 ? new WriteOutcome.Applied(resource, fence.value()) : diagnose(ctx, k, fence, resource);
        });
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
        requireTombstone("delete");
        return delete(key, fence, NO_VALUES);
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
        requireTombstone("delete");
        return delete(key, fence, checkValues(placeholder));
    }

    private WriteOutcome delete(Object key, FenceToken fence, Map<Field<?>, Object> placeholder) {
        Field<Boolean> tombstone = requireTombstone("delete");
        Object k = checkKey(key);
        Objects.requireNonNull(fence, "fence");
        String resource = resource(k);
        return executor.run(resource, "fenced delete", ctx -> {
            for (int attempt = 1; ; attempt++) {
                int rows = ctx.update(t.table()).set(tombstone, true).set(t.fence(), t.fenceValue(fence))
                        .where(t.key().eq(k)).and(t.admits(fence)).execute();
                if (rows == 1) {
                    return new WriteOutcome.Applied(resource, fence.value());
                }
                Optional<WriteOutcome> out = recordOnTombstone(ctx, k, fence, placeholder, resource, true);
                if (out.isPresent()) {
                    return out.get();
                }
                checkAttempts(attempt, resource, "delete");
            }
        });
    }

    /**
     * One fenced {@code UPDATE} over several keys, with an outcome per key: rows whose fence admits
     * {@code fence} are updated (all in the one statement), the others are reported {@code Stale} or
     * {@code NotFound}, as by {@link #update} (nothing is recorded for a key without a live row). Duplicate
     * keys are updated once.
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
            ks.add(checkKey(key));
        }
        Objects.requireNonNull(fence, "fence");
        Map<Field<?>, Object> set = checkValues(values);
        return executor.run(t.name() + "[" + ks.size() + " keys]", "fenced multi-row update", ctx -> {
            Set<Object> applied = new HashSet<>(ctx.update(t.table()).set(set).set(t.fence(), t.fenceValue(fence))
                    .where(t.key().in(ks)).and(t.admits(fence)).and(t.notDeleted())
                    .returningResult(t.key()).fetch(r -> r.value1()));
            List<Object> rejected = ks.stream().filter(k -> !applied.contains(k)).toList();
            Map<Object, Record> current = new HashMap<>();
            if (!rejected.isEmpty()) {
                for (Record r : ctx.select(diagnoseFields()).from(t.table()).where(t.key().in(rejected)).fetch()) {
                    current.put(r.get(t.key()), r);
                }
            }
            Map<Object, WriteOutcome> out = new LinkedHashMap<>();
            for (Object k : ks) {
                String resource = resource(k);
                out.put(k, applied.contains(k) ? new WriteOutcome.Applied(resource, fence.value())
                        : judge(current.get(k), fence, resource));
            }
            return out;
        });
    }

    /**
     * The second statement of a claim or delete whose {@code UPDATE} matched nothing: records the fence on
     * a tombstone if the rule admits it, and otherwise reads the row, in one statement.
     * <pre>
     * WITH ins AS (INSERT INTO t (key, fence, tombstone[, placeholders])
     *              SELECT :k, :f, true[, ..] WHERE NOT EXISTS (SELECT 1 FROM t WHERE key = :k)
     *              ON CONFLICT (key) DO UPDATE SET [tombstone = true,] fence = :f WHERE &lt;rule&gt;
     *              RETURNING tombstone)
     *   [, upd AS (UPDATE t SET fence = :f WHERE key = :k AND &lt;rule&gt; AND tombstone RETURNING 1)]  -- claim
     * SELECT (SELECT count(*) FROM ins), (SELECT tombstone FROM ins), [(SELECT count(*) FROM upd),]
     *        key, fence, tombstone FROM (SELECT 1) LEFT JOIN t ON key = :k
     * </pre>
     * {@code NOT EXISTS} keeps PostgreSQL from building the insert row (and checking its NOT NULL
     * constraints) when the row exists; the outer SELECT reads the row as the statement found it, so a
     * stale write is diagnosed without a third statement. {@code ins} and {@code upd} cannot both touch a
     * row: one needs it absent from the statement's snapshot, the other present.
     *
     * @return the outcome, or empty if the row changed between the two statements (run both again)
     */
    private Optional<WriteOutcome> recordOnTombstone(DSLContext ctx, Object k, FenceToken fence, Map<Field<?>, Object> placeholder,
            String resource, boolean delete) {
        Field<Boolean> tombstone = t.tombstone().orElseThrow();
        Object encoded = t.fenceValue(fence);
        List<Field<?>> columns = new ArrayList<>(List.of(t.key(), t.fence(), tombstone));
        List<Field<?>> values = new ArrayList<>(List.of(DSL.val(k, t.key()), DSL.val(encoded, t.fence()), DSL.inline(true)));
        placeholder.forEach((column, value) -> {
            columns.add(column);
            values.add(DSL.val(value, column));
        });
        Map<Field<?>, Object> onConflict = new LinkedHashMap<>();
        if (delete) {
            onConflict.put(tombstone, true);
        }
        onConflict.put(t.fence(), encoded);
        Name ins = DSL.name("fg_ins");
        Name upd = DSL.name("fg_upd");
        Name deleted = DSL.name("fg_deleted");
        Query insert = ctx.insertInto(t.table()).columns(columns)
                .select(DSL.select(values).whereNotExists(DSL.selectOne().from(t.table()).where(t.key().eq(k))))
                .onConflict(t.key()).doUpdate().set(onConflict).where(t.admits(fence))
                .returningResult(tombstone.as(deleted));
        Query update = ctx.update(t.table()).set(t.fence(), encoded)
                .where(t.key().eq(k)).and(t.admits(fence)).and(DSL.coalesce(tombstone, DSL.inline(false)).isTrue())
                .returningResult(DSL.inline(1));
        String sql = delete
                ? "with {0} as ({1}) select (select count(*) from {0}), (select {2} from {0}), 0, {4}, {5}, {6} "
                        + "from (select 1) as fg_one left join {7} on {8}"
                : "with {0} as ({1}), {9} as ({3}) select (select count(*) from {0}), (select {2} from {0}), "
                        + "(select count(*) from {9}), {4}, {5}, {6} from (select 1) as fg_one left join {7} on {8}";
        Record r;
        try {
            r = ctx.resultQuery(sql, ins, insert, deleted, update, t.key(), t.fence(), tombstone, t.table(), t.key().eq(k), upd)
                    .fetchOne();
        } catch (DataAccessException e) {
            throw tombstoneRefused(e, resource, delete ? "delete" : "claim", fence);
        }
        if (((Number) r.get(0)).longValue() == 1) { // tombstone inserted, or an admitted conflict updated
            boolean nowDeleted = Boolean.TRUE.equals(r.get(1));
            return Optional.of(nowDeleted && !delete ? new WriteOutcome.NotFound(resource) : new WriteOutcome.Applied(resource, fence.value()));
        }
        if (((Number) r.get(2)).longValue() == 1) { // claim raised a tombstone's fence
            return Optional.of(new WriteOutcome.NotFound(resource));
        }
        if (r.get(3) == null) {
            // Absent from the statement's snapshot, yet the insert conflicted: a concurrent insert won and
            // the rule refused our fence over it. Read what it wrote.
            Record now = ctx.select(diagnoseFields()).from(t.table()).where(t.key().eq(k)).fetchOne();
            return now == null ? Optional.empty() : staleOrRetry(WriteRule.decode(now.get(t.fence())), fence, resource);
        }
        return staleOrRetry(WriteRule.decode(r.get(4)), fence, resource);
    }

    private Optional<WriteOutcome> staleOrRetry(long stored, FenceToken fence, String resource) {
        if (t.rule().admits(fence, stored)) {
            return Optional.empty(); // the row appeared or changed after the first statement
        }
        return Optional.of(t.rule().stale(resource, fence, stored));
    }

    private static void checkAttempts(int attempt, String resource, String operation) {
        // Each retry follows a concurrent change of the row; fences only rise, so this ends quickly.
        if (attempt >= MAX_ATTEMPTS) {
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, resource, "fenced " + operation + " gave up after "
                    + attempt + " attempts: the row kept changing between statements");
        }
    }

    private RuntimeException tombstoneRefused(DataAccessException e, String resource, String operation, FenceToken fence) {
        SQLException sql = e.getCause(SQLException.class);
        if (sql == null || sql.getSQLState() == null || !sql.getSQLState().startsWith("23")) {
            return e; // the executor maps it like any other database error
        }
        String column = null;
        String constraint = null;
        if (sql instanceof PSQLException p && p.getServerErrorMessage() != null) {
            column = p.getServerErrorMessage().getColumn();
            constraint = p.getServerErrorMessage().getConstraint();
        }
        String what = column != null ? "column \"" + column + "\"" : constraint != null ? "constraint \"" + constraint + "\"" : "a constraint";
        String fix = "23502".equals(sql.getSQLState()) && column != null
                ? "give column \"" + column + "\" a default or allow NULL in it, or pass values for tombstone rows: "
                        + operation + "(key, fence, Assignments.of(\"" + column + "\", ...))"
                : "pass values that satisfy it for tombstone rows: " + operation + "(key, fence, Assignments.of(...))";
        return new FenceGuardException(ErrorCode.INVALID_ARGUMENT, resource, "fenced " + operation + " found no row, so it"
                + " inserts a tombstone row (key, fence " + fence.value() + ", " + t.tombstone().orElseThrow().getName()
                + " = true) to refuse older fences, and the table refused that row on " + what + " (SQLSTATE "
                + sql.getSQLState() + ": " + sql.getMessage() + "); " + fix, e);
    }

    private Field<Boolean> requireTombstone(String operation) {
        return t.tombstone().orElseThrow(() -> new IllegalStateException("fenced " + operation + " of " + t.name()
                + " needs a tombstone column (FencedTable.Builder.withTombstoneColumn): a hard DELETE would let a stale"
                + " upsert bring the row back"));
    }

    private List<Field<?>> diagnoseFields() {
        List<Field<?>> fields = new ArrayList<>(List.of(t.key(), t.fence()));
        t.tombstone().ifPresent(fields::add);
        return fields;
    }

    private WriteOutcome diagnose(DSLContext ctx, Object key, FenceToken fence, String resource) {
        Record row = ctx.select(diagnoseFields()).from(t.table()).where(t.key().eq(key)).fetchOne();
        return judge(row, fence, resource);
    }

    private WriteOutcome judge(Record row, FenceToken fence, String resource) {
        if (row == null) {
            return new WriteOutcome.NotFound(resource);
        }
        long stored = WriteRule.decode(row.get(t.fence()));
        boolean deleted = t.tombstone().map(d -> Boolean.TRUE.equals(row.get(d))).orElse(false);
        if (t.rule().admits(fence, stored)) {
            // The rule admits the fence, so the statement matched nothing for another reason: the row is
            // deleted (or appeared only after our statement).
            return new WriteOutcome.NotFound(resource);
        }
        return t.rule().stale(resource, fence, stored);
    }

    private Object checkKey(Object key) {
        Objects.requireNonNull(key, "key");
        Object converted;
        try {
            converted = t.key().getDataType().convert(key);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("key " + key + " cannot be converted to the key column's type "
                    + t.key().getType().getName() + ": " + e.getMessage(), e);
        }
        if (converted == null) { // jOOQ answers null, not an error, for text that is no number
            throw new IllegalArgumentException("key " + key + " cannot be converted to the key column's type "
                    + t.key().getType().getName());
        }
        if (converted instanceof CharSequence s) {
            WriteRule.checkTextKey("key", s.toString());
        }
        return converted;
    }

    private Map<Field<?>, Object> checkValues(Assignments values) {
        Objects.requireNonNull(values, "values");
        for (Field<?> f : values.values().keySet()) {
            String name = f.getName();
            if (name.equals(t.key().getName()) || name.equals(t.fence().getName())
                    || t.tombstone().map(d -> d.getName().equals(name)).orElse(false)) {
                throw new IllegalArgumentException("assignments must not set the key, fence or tombstone column ('" + name
                        + "'); fence-guard sets those itself");
            }
        }
        return values.values();
    }

    private String resource(Object key) {
        String k = String.valueOf(key);
        return t.name() + "[" + t.key().getName() + "=" + (k.length() > 64 ? k.substring(0, 64) + "..." : k) + "]";
    }

    /** Where statements run: a given DSLContext, or a connection per write from a DataSource. */
    interface Executor {
        <T> T run(String resource, String operation, Function<DSLContext, T> work);

        static Executor of(DSLContext ctx) {
            return new Executor() {
                @Override
                public <T> T run(String resource, String operation, Function<DSLContext, T> work) {
                    try {
                        return work.apply(ctx);
                    } catch (DataAccessException e) {
                        throw mapped(e, resource, operation);
                    }
                }
            };
        }

        static Executor of(DataSource dataSource) {
            return new Executor() {
                @Override
                public <T> T run(String resource, String operation, Function<DSLContext, T> work) {
                    try {
                        return OwnConnection.run(dataSource, c -> work.apply(DSL.using(c, SQLDialect.POSTGRES)));
                    } catch (SQLException e) {
                        throw PgErrors.map(e, resource, operation);
                    } catch (DataAccessException e) {
                        throw mapped(e, resource, operation);
                    }
                }
            };
        }

        private static RuntimeException mapped(DataAccessException e, String resource, String operation) {
            SQLException sql = e.getCause(SQLException.class);
            return sql != null ? PgErrors.map(sql, resource, operation) : e;
        }
    }
}
