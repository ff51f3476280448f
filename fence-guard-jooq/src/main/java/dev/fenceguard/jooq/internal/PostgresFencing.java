package dev.fenceguard.jooq.internal;

import static dev.fenceguard.jooq.internal.FencedStatements.FENCE;
import static dev.fenceguard.jooq.internal.FencedStatements.KEY;
import static dev.fenceguard.jooq.internal.FencedStatements.slot;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.jdbc.internal.PgErrors;
import dev.fenceguard.jdbc.internal.SqlCauses;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jooq.Field;
import org.jooq.Name;
import org.jooq.Query;
import org.jooq.ResultQuery;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/** Fenced writes on PostgreSQL: {@code ON CONFLICT}, {@code RETURNING}, data-modifying {@code WITH}. */
public final class PostgresFencing implements FencingDialect {

    /** The one instance; it holds nothing. */
    public static final PostgresFencing INSTANCE = new PostgresFencing();

    private PostgresFencing() {}

    @Override
    public String resourceType() {
        return "postgres";
    }

    @Override
    public SQLDialect jooqDialect() {
        return SQLDialect.POSTGRES;
    }

    @Override
    public boolean applied(int rows) {
        return rows == 1;
    }

    /** {@code INSERT .. ON CONFLICT (key) DO UPDATE SET .. WHERE <rule>}. */
    @Override
    public Query upsertQuery(FencedStatements t, Map<Field<?>, Object> insert, Map<Field<?>, Object> update) {
        return DSL.insertInto(t.table()).set(insert).onConflict(t.key()).doUpdate().set(update).where(t.admits(slot(FENCE, t.fence())));
    }

    @Override
    public Upserted runUpsert(Session session, StatementShape upsert, Object[] binds) throws SQLException {
        return new Upserted(session.execute(upsert, binds) == 1, -1);
    }

    /**
     * {@code UPDATE t SET <columns>, fence = :f WHERE key IN (..) AND <rule> AND <not deleted> RETURNING key}:
     * one statement.
     */
    @Override
    public Set<Object> updateAll(Session session, FencedStatements t, List<Field<?>> columns, Collection<Object> keys, int padded,
            Object[] binds, FencedStatements.Rendering r) throws SQLException {
        Set<Object> applied = new HashSet<>();
        for (Object[] row : session.fetch(updateAllShape(t, columns, padded, r), binds)) {
            applied.add(t.readKey(row[0]));
        }
        return applied;
    }

    /** The statement of {@link #updateAll}, for {@code padded} keys in the slots after the values. */
    static StatementShape updateAllShape(FencedStatements t, List<Field<?>> columns, int padded, FencedStatements.Rendering r) {
        return t.custom("update_all", columns, padded, r, () -> DSL.update(t.table())
                .set(t.assign(columns, FencedStatements.FIRST_VALUE, true))
                .where(t.key().in(t.keySlots(FencedStatements.FIRST_VALUE + columns.size(), padded)))
                .and(t.admits(slot(FENCE, t.fence()))).and(t.notDeleted())
                .returningResult(t.key()));
    }

    @Override
    public List<StatementShape> warmUpShapes(FencedStatements t, List<Field<?>> columns, FencedStatements.Rendering r) {
        List<StatementShape> shapes = new java.util.ArrayList<>();
        shapes.add(updateAllShape(t, columns, 1, r));
        if (t.tombstone().isPresent()) {
            for (boolean delete : new boolean[] {true, false}) {
                shapes.add(t.custom(delete ? "tombstone_delete" : "tombstone_claim", List.of(), 0, r,
                        () -> tombstoneQuery(t, delete, t.assign(List.of(), FencedStatements.FIRST_VALUE, false))));
            }
        }
        return shapes;
    }

    @Override
    public TombstoneWrite recordTombstone(Session session, FencedStatements t, boolean delete, List<Field<?>> placeholders,
            Object[] binds, FencedStatements.Rendering r) throws SQLException {
        StatementShape shape = t.custom(delete ? "tombstone_delete" : "tombstone_claim", placeholders, 0, r,
                () -> tombstoneQuery(t, delete, t.assign(placeholders, FencedStatements.FIRST_VALUE, false)));
        Object[] row = session.fetch(shape, binds).getFirst();
        return new TombstoneWrite(((Number) row[0]).longValue() == 1, t.isTrue(row[1]), ((Number) row[2]).longValue() == 1,
                t.row(row, 3));
    }

    @Override
    public boolean rowRefused(SQLException e) {
        return SqlCauses.of(e).map(SQLException::getSQLState).orElse("").startsWith("23");
    }

    /**
     * One statement that records the fence on a tombstone if the rule admits it, and otherwise reads the row:
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
     */
    private static ResultQuery<?> tombstoneQuery(FencedStatements t, boolean delete, Map<Field<?>, Object> placeholders) {
        Field<Boolean> tombstone = t.tombstone().orElseThrow();
        Field<Object> k = slot(KEY, t.key());
        Field<Object> f = slot(FENCE, t.fence());
        List<Field<?>> columns = new ArrayList<>(List.of(t.key(), t.fence(), tombstone));
        List<Field<?>> values = new ArrayList<>(List.of(k, f, DSL.inline(true, tombstone)));
        placeholders.forEach((column, value) -> {
            columns.add(column);
            values.add((Field<?>) value);
        });
        Map<Field<?>, Object> onConflict = new LinkedHashMap<>();
        if (delete) {
            onConflict.put(tombstone, DSL.inline(true, tombstone));
        }
        onConflict.put(t.fence(), f);
        Name ins = DSL.name("fg_ins");
        Name upd = DSL.name("fg_upd");
        Name deleted = DSL.name("fg_deleted");
        Query insert = DSL.insertInto(t.table()).columns(columns)
                .select(DSL.select(values).whereNotExists(DSL.selectOne().from(t.table()).where(t.key().eq(k))))
                .onConflict(t.key()).doUpdate().set(onConflict).where(t.admits(f))
                .returningResult(tombstone.as(deleted));
        Map<Field<?>, Object> raise = new LinkedHashMap<>();
        raise.put(t.fence(), f);
        Query update = DSL.update(t.table()).set(raise)
                .where(t.key().eq(k)).and(t.admits(f)).and(DSL.coalesce(tombstone, DSL.inline(false)).isTrue())
                .returningResult(DSL.inline(1));
        String sql = delete
                ? "with {0} as ({1}) select (select count(*) from {0}), (select {2} from {0}), 0, {4}, {5}, {6} "
                        + "from (select 1) as fg_one left join {7} on {8}"
                : "with {0} as ({1}), {9} as ({3}) select (select count(*) from {0}), (select {2} from {0}), "
                        + "(select count(*) from {9}), {4}, {5}, {6} from (select 1) as fg_one left join {7} on {8}";
        return DSL.resultQuery(sql, ins, insert, deleted, update, t.key(), t.fence(), tombstone, t.table(), t.key().eq(k), upd);
    }

    @Override
    public FenceGuardException map(Throwable e, String resource, String operation) {
        return PgErrors.map(e, resource, operation);
    }

    @Override
    public Optional<String> column(SQLException e) {
        return PgErrors.column(e);
    }

    @Override
    public Optional<String> constraint(SQLException e) {
        return PgErrors.constraint(e);
    }
}
