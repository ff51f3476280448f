package dev.fenceguard.jdbc.internal;

import static dev.fenceguard.jdbc.internal.FencedStatements.FENCE;
import static dev.fenceguard.jdbc.internal.FencedStatements.KEY;
import static dev.fenceguard.jdbc.internal.FencedStatements.slot;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jooq.Condition;
import org.jooq.Field;
import org.jooq.Query;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * Fenced writes on MySQL and MariaDB, which have neither {@code ON CONFLICT .. WHERE} nor
 * {@code UPDATE .. RETURNING}, and whose update counts are changed rows unless the client asks for
 * found rows (both drivers ask by default; {@code useAffectedRows=true} turns it off).
 *
 * <p><b>Upsert</b>: {@code INSERT .. ON DUPLICATE KEY UPDATE} has no {@code WHERE}, so every assignment
 * carries the rule: {@code col = IF(<rule on the stored fence>, :value, col)}, with the fence column
 * assigned <em>last</em>. MySQL evaluates the assignments left to right and a later one sees the
 * columns the earlier ones set, so the fence must still be the stored one while every other column is
 * judged. When the rule refuses, the fence's assignment also evaluates
 * {@code LAST_INSERT_ID(stored fence + 2^62)}: the server reports that value as the statement's insert
 * id in the same reply, so a stale upsert is told from an applied one (and its current fence known) in
 * one round trip, whatever the update count means. Ids a table generates stay far below 2^62.
 *
 * <p><b>Claim and delete of an absent or deleted row</b>: after the {@code UPDATE} matched nothing, the
 * row is read; a key with no row gets {@code INSERT .. SELECT .. WHERE NOT EXISTS} (a concurrent insert
 * makes it insert nothing or fail on the key, and the write is tried again), a deleted row that a claim
 * admits gets its fence raised by {@code UPDATE .. WHERE <rule> AND tombstone}.
 *
 * <p><b>Multi-row update</b>: one fenced {@code UPDATE} per key, each judged by its own count; no
 * statement can both update several rows and say which it changed.
 */
public final class MySqlFencing implements FencingDialect {

    /** The one instance; it holds nothing. */
    public static final MySqlFencing INSTANCE = new MySqlFencing();

    /** Added to a refusing fence in {@code LAST_INSERT_ID(..)}; above any id a table generates, fences stay below 2^50. */
    static final long STALE_MARK = 1L << 62;

    /** MySQL's duplicate key error: a concurrent insert of the same key won. */
    private static final int DUPLICATE_KEY = 1062;

    private MySqlFencing() {}

    @Override
    public String resourceType() {
        return "mysql";
    }

    /**
     * MariaDB's: jOOQ renders MySQL's upsert with the 8.0.19 row alias ({@code VALUES (..) AS excluded}),
     * which MariaDB refuses, while these statements in MariaDB's rendering are also valid MySQL (they use
     * no {@code VALUES()} function). A caller's {@code DSLContext} renders them in its own dialect.
     */
    @Override
    public SQLDialect jooqDialect() {
        return SQLDialect.MARIADB;
    }

    @Override
    public boolean accepts(SQLDialect dialect) {
        return dialect.family() == SQLDialect.MYSQL || dialect.family() == SQLDialect.MARIADB;
    }

    @Override
    public boolean applied(int rows) {
        return rows == 1;
    }

    @Override
    public boolean countsChangedRows() {
        return true;
    }

    /**
     * {@code INSERT INTO t (..) VALUES (..) ON DUPLICATE KEY UPDATE c1 = IF(<rule>, :c1, c1), ..,
     * fence = IF(<rule>, :f, IF(LAST_INSERT_ID(CAST(COALESCE(fence, 0) AS UNSIGNED) + 2^62) = 0, NULL, fence))}.
     * The inner {@code IF} never yields NULL (its condition is never true); it only keeps the fence while
     * reporting it.
     */
    @Override
    public Query upsertQuery(FencedStatements t, Map<Field<?>, Object> insert, Map<Field<?>, Object> update) {
        Field<Object> f = slot(FENCE, t.fence());
        Condition admits = t.admits(f);
        Map<Field<?>, Object> guarded = new LinkedHashMap<>();
        update.forEach((column, value) -> {
            if (!column.equals(t.fence())) {
                guarded.put(column, guard(admits, (Field<?>) value, column));
            }
        });
        Field<Long> stored = DSL.field("cast({0} as unsigned)", SQLDataType.BIGINT, DSL.coalesce(t.fence(), DSL.inline(t.rule().zero(), t.fence())));
        Field<Long> report = DSL.field("last_insert_id({0})", SQLDataType.BIGINT, stored.plus(DSL.inline(STALE_MARK)));
        Field<Object> keep = DSL.when(report.eq(DSL.inline(0L)), DSL.inline(null, t.fence())).otherwise(t.fence());
        guarded.put(t.fence(), DSL.when(admits, f).otherwise(keep)); // last: the guards above read the stored fence
        return DSL.insertInto(t.table()).set(insert).onDuplicateKeyUpdate().set(guarded);
    }

    @SuppressWarnings("unchecked")
    private static Field<Object> guard(Condition admits, Field<?> value, Field<?> column) {
        return DSL.when(admits, (Field<Object>) value).otherwise((Field<Object>) column);
    }

    @Override
    public Upserted runUpsert(Session session, StatementShape upsert, Object[] binds) throws SQLException {
        long[] result = session.executeWithInsertId(upsert, binds);
        long insertId = result[1];
        if (insertId >= STALE_MARK) {
            return new Upserted(false, insertId - STALE_MARK);
        }
        if (insertId >= 0) {
            return new Upserted(true, -1); // no refusal reported: inserted, updated, or already these values
        }
        // Run through jOOQ, no insert id: 2 is an update; 0 or 1 may be a refusal, read the row to tell.
        return new Upserted(result[0] == 2, -1);
    }

    /** One single-key fenced {@code UPDATE} per key. */
    @Override
    public Set<Object> updateAll(Session session, FencedStatements t, List<Field<?>> columns, Collection<Object> keys, int padded,
            Object[] binds, FencedStatements.Rendering r) throws SQLException {
        StatementShape update = t.update(columns, r);
        Object[] one = binds.clone();
        Set<Object> applied = new HashSet<>();
        for (Object key : keys) {
            one[KEY] = key;
            if (applied(session.execute(update, one))) {
                applied.add(key);
            }
        }
        return applied;
    }

    @Override
    public TombstoneWrite recordTombstone(Session session, FencedStatements t, boolean delete, List<Field<?>> placeholders,
            Object[] binds, FencedStatements.Rendering r) throws SQLException {
        List<Object[]> rows = session.fetch(t.readRow(r), binds);
        FencedStatements.Row seen = rows.isEmpty() ? null : t.row(rows.getFirst(), 0);
        long presented = dev.fenceguard.core.spi.WriteRule.decode(binds[FENCE]);
        if (seen == null) {
            try {
                if (session.execute(insertTombstone(t, placeholders, r), binds) == 1) {
                    return new TombstoneWrite(true, true, false, null);
                }
            } catch (SQLException e) {
                if (SqlCauses.of(e).map(SQLException::getErrorCode).orElse(0) != DUPLICATE_KEY) {
                    throw e;
                }
            }
            return new TombstoneWrite(false, false, false, null); // the key appeared meanwhile: try again
        }
        boolean admits = t.rule().policy() == FencePolicy.SAME_OR_NEWER ? seen.fence() <= presented : seen.fence() < presented;
        if (!admits) {
            return new TombstoneWrite(false, false, false, seen);
        }
        // The UPDATE before this missed a row the rule admits: it changed in between, or the UPDATE matched it
        // and changed nothing (changed-rows count) because it already was as the write would leave it.
        boolean unchanged = seen.fence() == presented;
        if (delete) {
            return seen.deleted() && unchanged ? new TombstoneWrite(true, true, false, seen) : new TombstoneWrite(false, false, false, seen);
        }
        if (!seen.deleted()) {
            return unchanged ? new TombstoneWrite(true, false, false, seen) : new TombstoneWrite(false, false, false, seen);
        }
        boolean raised = session.execute(raiseTombstone(t, r), binds) == 1 || unchanged;
        return new TombstoneWrite(false, false, raised, seen);
    }

    /** {@code INSERT INTO t (key, fence, tombstone[, placeholders]) SELECT :k, :f, true[, ..] FROM DUAL WHERE NOT EXISTS (row)}. */
    private static StatementShape insertTombstone(FencedStatements t, List<Field<?>> placeholders, FencedStatements.Rendering r) {
        return t.custom("insert_tombstone", placeholders, 0, r, () -> {
            Field<Boolean> tombstone = t.tombstone().orElseThrow();
            Field<Object> k = slot(KEY, t.key());
            List<Field<?>> columns = new ArrayList<>(List.of(t.key(), t.fence(), tombstone));
            List<Field<?>> values = new ArrayList<>(List.of(k, slot(FENCE, t.fence()), DSL.inline(true, tombstone)));
            t.assign(placeholders, FencedStatements.FIRST_VALUE, false).forEach((column, value) -> {
                columns.add(column);
                values.add((Field<?>) value);
            });
            return DSL.insertInto(t.table()).columns(columns)
                    .select(DSL.select(values).whereNotExists(DSL.selectOne().from(t.table()).where(t.key().eq(k))));
        });
    }

    /** {@code UPDATE t SET fence = :f WHERE key = :k AND <rule> AND tombstone}: a claim raising a tombstone's fence. */
    private static StatementShape raiseTombstone(FencedStatements t, FencedStatements.Rendering r) {
        return t.custom("raise_tombstone", List.of(), 0, r, () -> DSL.update(t.table()).set(Map.<Field<?>, Object>of(t.fence(), slot(FENCE, t.fence())))
                .where(t.key().eq(slot(KEY, t.key()))).and(t.admits(slot(FENCE, t.fence())))
                .and(DSL.coalesce(t.tombstone().orElseThrow(), DSL.inline(false)).isTrue()));
    }

    @Override
    public boolean rowRefused(SQLException e) {
        return MySqlErrors.rowRefused(e);
    }

    @Override
    public FenceGuardException map(Throwable e, String resource, String operation) {
        return MySqlErrors.map(e, resource, operation);
    }

    @Override
    public Optional<String> column(SQLException e) {
        return MySqlErrors.column(e);
    }

    /** MySQL names no constraint in a form fence-guard can read without parsing values. */
    @Override
    public Optional<String> constraint(SQLException e) {
        return Optional.empty();
    }
}
