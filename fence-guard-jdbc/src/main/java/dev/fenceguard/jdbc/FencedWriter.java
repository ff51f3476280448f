package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
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
import java.util.Set;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * Fenced writes to one {@link FencedTable} through one executor (a {@link DSLContext}, a
 * {@link java.sql.Connection} or a {@link DataSource}); get one from {@link FencedTable#on}. Cheap to create;
 * as thread-safe as the executor it wraps.
 *
 * <p>Each write is one SQL statement that applies the data and the new fence only if the write rule
 * admits the presented fence. When the statement changes nothing, a second statement reads the row
 * to tell {@link WriteOutcome.Stale} from {@link WriteOutcome.NotFound}. Database errors are thrown as
 * {@link dev.fenceguard.core.FenceGuardException} with a code mapped from the SQLSTATE.
 */
public final class FencedWriter {

    private final FencedTable t;
    private final Executor executor;

    FencedWriter(FencedTable table, Executor executor) {
        this.t = table;
        this.executor = executor;
    }

    /**
     * {@code UPDATE .. SET <values>, fence = :f WHERE key = :k AND <rule> AND <not deleted>}.
     *
     * @return {@code Applied}; {@code Stale} if the row holds a fence the rule does not let {@code fence}
     *     replace (including a tombstone with a newer fence); {@code NotFound} if there is no such row or
     *     it was deleted under an older or equal fence
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
     * @return {@code Applied}, {@code Stale(stored)} or {@code NotFound}
     * @throws IllegalArgumentException if an argument is invalid (before any SQL)
     */
    public WriteOutcome claim(Object key, FenceToken fence) {
        Object k = checkKey(key);
        Objects.requireNonNull(fence, "fence");
        String resource = resource(k);
        return executor.run(resource, "fenced claim", ctx -> {
            int rows = ctx.update(t.table()).set(t.fence(), t.fenceValue(fence))
                    .where(t.key().eq(k)).and(t.admits(fence)).and(t.notDeleted()).execute();
            return rows == 1 ? new WriteOutcome.Applied(resource, fence.value()) : diagnose(ctx, k, fence, resource);
        });
    }

    /**
     * {@code INSERT .. ON CONFLICT (key) DO UPDATE SET <values>, fence = :f [, tombstone = false]
     * WHERE <rule>}: inserts a new row, or replaces an existing (or tombstoned) one if the rule admits the
     * fence. Needs a unique constraint on the key column.
     *
     * @return {@code Applied}, or {@code Stale} with the fence the row holds
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
     * <p>A row that never existed has no fence to keep: deleting it is {@code NotFound} and leaves
     * nothing behind.
     *
     * @throws IllegalStateException if the table has no tombstone column
     * @throws IllegalArgumentException if an argument is invalid (before any SQL)
     */
    public WriteOutcome delete(Object key, FenceToken fence) {
        Field<Boolean> tombstone = t.tombstone().orElseThrow(() -> new IllegalStateException("fenced delete of " + t.name()
                + " needs a tombstone column (FencedTable.Builder.withTombstoneColumn): a hard DELETE would let a stale"
                + " upsert bring the row back"));
        Object k = checkKey(key);
        Objects.requireNonNull(fence, "fence");
        String resource = resource(k);
        return executor.run(resource, "fenced delete", ctx -> {
            int rows = ctx.update(t.table()).set(tombstone, true).set(t.fence(), t.fenceValue(fence))
                    .where(t.key().eq(k)).and(t.admits(fence)).execute();
            return rows == 1 ? new WriteOutcome.Applied(resource, fence.value()) : diagnose(ctx, k, fence, resource);
        });
    }

    /**
     * One fenced {@code UPDATE} over several keys, with an outcome per key: rows whose fence admits
     * {@code fence} are updated (all in the one statement), the others are reported {@code Stale} or
     * {@code NotFound}. Duplicate keys are updated once.
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
        long stored = t.decode(row.get(t.fence()));
        boolean deleted = t.tombstone().map(d -> Boolean.TRUE.equals(row.get(d))).orElse(false);
        if (t.policy().admits(fence, stored)) {
            // The rule admits the fence, so the statement matched nothing for another reason: the row is
            // deleted (or appeared only after our statement).
            return new WriteOutcome.NotFound(resource);
        }
        t.metrics().staleWriteRejected(t.name());
        return new WriteOutcome.Stale(resource, fence.value(), stored, t.policy()) ;
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
            String text = s.toString();
            if (text.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("key must not contain NUL (U+0000), which PostgreSQL cannot store in text");
            }
            dev.fenceguard.core.internal.Text.requireValidUnicode("key", text);
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
