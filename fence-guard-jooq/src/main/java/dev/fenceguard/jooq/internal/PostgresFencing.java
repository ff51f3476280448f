package dev.fenceguard.jooq.internal;

import static dev.fenceguard.jooq.internal.FencedStatements.FENCE;
import static dev.fenceguard.jooq.internal.FencedStatements.KEY;
import static dev.fenceguard.jooq.internal.FencedStatements.slot;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.ClockFloor;
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
import org.jooq.Condition;
import org.jooq.Field;
import org.jooq.Name;
import org.jooq.Query;
import org.jooq.ResultQuery;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

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

    /**
     * {@code INSERT .. ON CONFLICT (key) DO UPDATE SET .. WHERE <rule>}. With a horizon, the insert arm
     * admits the fence only above the horizon or for a key that has a record, and the statement reports
     * whether it inserted and the horizon after its last wait:
     * <pre>
     * INSERT INTO t (..) SELECT .. WHERE :f &gt; &lt;horizon&gt; OR EXISTS (SELECT 1 FROM t WHERE key = :k FOR KEY SHARE)
     * ON CONFLICT (key) DO UPDATE SET .. WHERE &lt;rule&gt; RETURNING (xmax = 0), &lt;horizon&gt;
     * </pre>
     * The key-share lock keeps a purge from removing the record the write found (the purge skips locked
     * rows); the horizon in {@code RETURNING} is read after any wait on {@code ON CONFLICT}, which the one in
     * {@code WHERE}, read when the statement started, is not.
     */
    @Override
    public Query upsertQuery(FencedStatements t, Map<Field<?>, Object> insert, Map<Field<?>, Object> update) {
        if (t.horizon().isEmpty()) {
            return DSL.insertInto(t.table()).set(insert).onConflict(t.key()).doUpdate().set(update).where(t.admits(slot(FENCE, t.fence())));
        }
        Field<Long> h = horizonAt(t.horizon().get().ageMicros());
        List<Field<?>> columns = new ArrayList<>(insert.keySet());
        List<Field<?>> values = new ArrayList<>();
        insert.values().forEach(v -> values.add((Field<?>) v));
        Condition arm = FencedStatements.markSlot().gt(h)
                .or(DSL.exists(DSL.selectOne().from(t.table()).where(t.key().eq(slot(KEY, t.key()))).forKeyShare()));
        return DSL.insertInto(t.table()).columns(columns).select(DSL.select(values).where(arm))
                .onConflict(t.key()).doUpdate().set(update).where(t.admits(slot(FENCE, t.fence())))
                .returningResult(DSL.field("xmax = 0", SQLDataType.BOOLEAN).as("fg_inserted"), h.as("fg_after"));
    }

    /**
     * {@code tick(clock_timestamp() - micros)}: the clock floor ({@link ClockFloor}) of the database's clock
     * {@code micros} ago, read when it is evaluated (never {@code now()}, the start of the transaction).
     */
    static Field<Long> horizonAt(long micros) {
        return DSL.field("floor((extract(epoch from clock_timestamp()) * 1000000 - " + (ClockFloor.EPOCH_MILLIS * 1000 + micros)
                + ") / " + ClockFloor.MICROS_PER_FENCE + ")::bigint", SQLDataType.BIGINT);
    }

    @Override
    public Optional<Created> runHorizonUpsert(Session session, FencedStatements t, List<Field<?>> columns, StatementShape upsert,
            Object[] binds, FencedStatements.Rendering r) throws SQLException {
        List<Object[]> rows = session.fetch(upsert, binds);
        if (rows.isEmpty()) {
            return Optional.empty();
        }
        Object[] row = rows.getFirst();
        return Optional.of(new Created(Boolean.TRUE.equals(row[0]), ((Number) row[1]).longValue()));
    }

    /** {@code SELECT <horizon>, key, fence[, tombstone] FROM (SELECT 1) LEFT JOIN t ON key = :k}. */
    @Override
    public HorizonRead readWithHorizon(Session session, FencedStatements t, Object[] binds, FencedStatements.Rendering r)
            throws SQLException {
        StatementShape shape = t.custom("read_with_horizon", List.of(), 0, r, () -> {
            List<Field<?>> fields = new ArrayList<>(List.of(horizonAt(t.horizon().orElseThrow().ageMicros()), t.key(), t.fence()));
            t.tombstone().ifPresent(fields::add);
            return DSL.resultQuery("select {0} from (select 1) as fg_one left join {1} on {2}", DSL.list(fields.toArray(Field[]::new)),
                    t.table(), t.key().eq(slot(KEY, t.key())));
        });
        Object[] row = session.fetch(shape, binds).getFirst();
        return new HorizonRead(t.row(row, 1), ((Number) row[0]).longValue());
    }

    /**
     * <pre>
     * WITH fg_c AS (SELECT key FROM t WHERE tombstone AND fence &lt; (SELECT &lt;purge horizon&gt;) [AND key &gt; :cursor]
     *               ORDER BY key LIMIT n FOR UPDATE SKIP LOCKED),
     *      fg_d AS (DELETE FROM t WHERE key IN (SELECT key FROM fg_c) AND tombstone AND fence &lt; (SELECT &lt;purge horizon&gt;)
     *               RETURNING key)
     * SELECT (SELECT count(*) FROM fg_c), (SELECT key FROM fg_c ORDER BY key DESC LIMIT 1), (SELECT count(*) FROM fg_d)
     * </pre>
     * The purge horizon is an uncorrelated scalar subquery, evaluated once, so that it can be an index
     * condition. Locking re-reads each row's newest version in read committed: a tombstone that a write
     * revived or raised meanwhile no longer matches and stays; a row a write holds is skipped.
     */
    @Override
    public PurgeBatch purgeBatch(Session session, FencedStatements t, Object cursor, int batchSize, FencedStatements.Rendering r)
            throws SQLException {
        boolean after = cursor != null;
        StatementShape shape = t.custom(after ? "purge_after" : "purge_first", List.of(), batchSize, r, () -> {
            Field<Boolean> tombstone = t.tombstone().orElseThrow();
            Field<Long> h = DSL.field(DSL.select(horizonAt(t.horizon().orElseThrow().purgeMicros())));
            Condition purgeable = tombstone.isTrue().and(DSL.condition("{0} < {1}", t.fence(), h));
            Condition chosen = after ? purgeable.and(t.key().gt(slot(KEY, t.key()))) : purgeable;
            Name c = DSL.name("fg_c");
            Name d = DSL.name("fg_d");
            Name k = DSL.name("fg_k");
            Query candidates = DSL.select(t.key().as(k)).from(t.table()).where(chosen).orderBy(t.key()).limit(DSL.inline(batchSize))
                    .forUpdate().skipLocked();
            // key = any(array(..)), not key in (..): the array is built once (an InitPlan) and the delete is an index
            // scan on it. An IN is a join the planner costs from the table's statistics, which a mass delete leaves
            // stale (every row still counted live): a nested loop over the whole table per candidate was seen, 45 s
            // for one batch of 10,000 (docs/BENCHMARKS.md, "Storage over time").
            Query delete = DSL.deleteFrom(t.table()).where(DSL.condition("{0} = any(array({1}))", t.key(),
                    DSL.select(DSL.field(k)).from(c))).and(purgeable).returningResult(t.key());
            return DSL.resultQuery("with {0} as ({1}), {2} as ({3}) select (select count(*) from {0}), "
                    + "(select {4} from {0} order by {4} desc limit 1), (select count(*) from {2})", c, candidates, d, delete, DSL.field(k));
        });
        Object[] binds = new Object[FencedStatements.FIRST_VALUE];
        binds[KEY] = cursor;
        Object[] row = session.fetch(shape, binds).getFirst();
        return new PurgeBatch(((Number) row[0]).intValue(), row[1] == null ? null : t.readKey(row[1]), ((Number) row[2]).intValue());
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
        boolean recorded = ((Number) row[0]).longValue() == 1;
        boolean horizon = t.horizon().isPresent();
        return new TombstoneWrite(recorded, t.isTrue(row[1]), ((Number) row[2]).longValue() == 1, t.row(row, 3),
                horizon && recorded && Boolean.TRUE.equals(row[6]), horizon && recorded ? ((Number) row[7]).longValue() : -1);
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
        Condition absent = DSL.notExists(DSL.selectOne().from(t.table()).where(t.key().eq(k)));
        Field<Long> h = t.horizon().map(z -> horizonAt(z.ageMicros())).orElse(null);
        List<Field<?>> returning = new ArrayList<>(List.of(tombstone.as(deleted)));
        if (h != null) { // rule 1: a tombstone is a record created for an absent key; re-checked after any wait
            absent = absent.and(FencedStatements.markSlot().gt(h));
            returning.add(DSL.field("xmax = 0", SQLDataType.BOOLEAN).as("fg_inserted"));
            returning.add(h.as("fg_after"));
        }
        Query insert = DSL.insertInto(t.table()).columns(columns)
                .select(DSL.select(values).where(absent))
                .onConflict(t.key()).doUpdate().set(onConflict).where(t.admits(f))
                .returningResult(returning);
        Map<Field<?>, Object> raise = new LinkedHashMap<>();
        raise.put(t.fence(), f);
        Query update = DSL.update(t.table()).set(raise)
                .where(t.key().eq(k)).and(t.admits(f)).and(DSL.coalesce(tombstone, DSL.inline(false)).isTrue())
                .returningResult(DSL.inline(1));
        String extra = h == null ? "" : ", (select fg_inserted from {0}), (select fg_after from {0})";
        String sql = delete
                ? "with {0} as ({1}) select (select count(*) from {0}), (select {2} from {0}), 0, {4}, {5}, {6}" + extra
                        + " from (select 1) as fg_one left join {7} on {8}"
                : "with {0} as ({1}), {9} as ({3}) select (select count(*) from {0}), (select {2} from {0}), "
                        + "(select count(*) from {9}), {4}, {5}, {6}" + extra + " from (select 1) as fg_one left join {7} on {8}";
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
