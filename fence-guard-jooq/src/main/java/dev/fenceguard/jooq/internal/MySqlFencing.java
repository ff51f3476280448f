package dev.fenceguard.jooq.internal;

import static dev.fenceguard.jooq.internal.FencedStatements.FENCE;
import static dev.fenceguard.jooq.internal.FencedStatements.KEY;
import static dev.fenceguard.jooq.internal.FencedStatements.MARK;
import static dev.fenceguard.jooq.internal.FencedStatements.slot;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.jdbc.internal.MySqlErrors;
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
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
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
 * one round trip, whatever the update count means. Ids a table generates stay far below 2^62. An admitted
 * update reports the statement's mark ({@link FencedStatements#MARK}) the same way, so with changed-row
 * counts, where a row left as it was counts 0 and the drivers then hand out no insert id, the session's
 * {@code LAST_INSERT_ID()} tells the two apart in a second statement (on that path only).
 *
 * <p><b>Update, claim, delete: whether the {@code UPDATE} matched.</b> With found rows (both drivers'
 * default) a count of 1 says so; with changed rows ({@code useAffectedRows=true}) a row that already held
 * the values counts 0, like a row the rule refused or a key without a row. So the fence is assigned as
 * {@code IF(LAST_INSERT_ID(:mark) = 0, NULL, :f)}: MySQL evaluates the assignment only on a row the
 * statement matched, which sets the session's {@code LAST_INSERT_ID()} to {@code :mark}, a number
 * unique to the statement. When the count is 0, the read that tells {@code Stale} from {@code NotFound}
 * also reads {@code LAST_INSERT_ID() = :mark}: true only if this very statement matched (an earlier
 * statement on the connection cannot have left that number). Nothing is guessed from the row, which may
 * have changed in between.
 *
 * <p><b>Claim and delete of an absent or deleted row</b>: after the {@code UPDATE} matched nothing, the
 * row is read; a key with no row gets a plain {@code INSERT} of the tombstone (a concurrent insert of
 * the key makes it fail on the key, and the write is tried again), a deleted row that a claim admits
 * gets its fence raised by {@code UPDATE .. WHERE <rule> AND tombstone}. The insert takes no gap lock
 * before it inserts, unlike {@code INSERT .. SELECT .. WHERE NOT EXISTS}, whose shared gap locks made two
 * concurrent deletes of one absent key deadlock.
 *
 * <p><b>Multi-row update</b>: one fenced {@code UPDATE} per key, each judged by its own count (and the
 * mark, when it counted 0); no statement can both update several rows and say which it changed.
 */
public final class MySqlFencing implements FencingDialect {

    /** The one instance; it holds nothing. */
    public static final MySqlFencing INSTANCE = new MySqlFencing();

    /** Added to a refusing fence in {@code LAST_INSERT_ID(..)}; above any id a table generates, fences stay below 2^50. */
    static final long STALE_MARK = 1L << 62;

    /** MySQL's duplicate key error: a concurrent insert of the same key won. */
    private static final int DUPLICATE_KEY = 1062;

    /**
     * The marks of {@code UPDATE}s ({@link FencedStatements#MARK}): each statement takes the next, so no
     * earlier statement of this process left the same value in a session. They lie in [2^60, 2^61), apart
     * from fences (below 2^50), the lock backends' answers (2^61 and up) and ids a table generates.
     */
    private static final AtomicLong MARKS = new AtomicLong((1L << 60) + ThreadLocalRandom.current().nextLong(1L << 58));

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

    /** {@code IF(LAST_INSERT_ID(:mark) = 0, NULL, :f)}: the presented fence, evaluated only on a matched row. */
    @Override
    public Field<?> assignedFence(FencedStatements t) {
        Field<Long> report = DSL.field("last_insert_id({0})", SQLDataType.BIGINT, FencedStatements.markSlot());
        return DSL.when(report.eq(DSL.inline(0L)), DSL.inline(null, t.fence())).otherwise(slot(FENCE, t.fence()));
    }

    @Override
    public boolean runUpdate(Session session, StatementShape update, Object[] binds) throws SQLException {
        binds[MARK] = MARKS.incrementAndGet();
        return applied(session.execute(update, binds));
    }

    /** {@code SELECT LAST_INSERT_ID() = :mark, key, fence[, tombstone] FROM (SELECT 1) LEFT JOIN t ON key = :k}. */
    @Override
    public Read readAfterMiss(Session session, FencedStatements t, Object[] binds, FencedStatements.Rendering r) throws SQLException {
        StatementShape read = t.custom("read_after_miss", List.of(), 0, r, () -> {
            List<Field<?>> fields = new ArrayList<>(List.of(DSL.field("last_insert_id() = {0}", SQLDataType.BIGINT,
                    FencedStatements.markSlot()), t.key(), t.fence()));
            t.tombstone().ifPresent(fields::add);
            return DSL.select(fields).from(DSL.selectOne().asTable("fg_one")).leftJoin(t.table()).on(t.key().eq(slot(KEY, t.key())));
        });
        Object[] row = session.fetch(read, binds).getFirst();
        return new Read(t.row(row, 1), row[0] != null && ((Number) row[0]).longValue() == 1);
    }

    /**
     * {@code INSERT INTO t (..) VALUES (..) ON DUPLICATE KEY UPDATE c1 = IF(<rule>, :c1, c1), ..,
     * fence = IF(<rule>, IF(LAST_INSERT_ID(:mark) = 0, NULL, :f),
     * IF(LAST_INSERT_ID(CAST(COALESCE(fence, 0) AS UNSIGNED) + 2^62) = 0, NULL, fence))}.
     * The inner {@code IF}s never yield NULL (their conditions are never true); they only report the mark
     * (admitted) or the stored fence (refused) while assigning.
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
        @SuppressWarnings("unchecked")
        Field<Object> admitted = (Field<Object>) assignedFence(t); // :f, reporting :mark
        guarded.put(t.fence(), DSL.when(admits, admitted).otherwise(keep)); // last: the guards above read the stored fence
        if (t.horizon().isEmpty()) {
            return DSL.insertInto(t.table()).set(insert).onDuplicateKeyUpdate().set(guarded);
        }
        // Rule 1 on the insert arm. LAST_INSERT_ID(0) adds nothing; it clears what an earlier statement of the session
        // left there, so that after this one the session's LAST_INSERT_ID() is the mark, a refusal, or 0 (or a
        // generated id) for an insert or for no row at all (runHorizonUpsert).
        List<Field<?>> columns = new ArrayList<>(insert.keySet());
        List<Field<?>> values = new ArrayList<>();
        insert.values().forEach(v -> values.add((Field<?>) v));
        Condition gate = DSL.condition("{0} > {1} + last_insert_id(0)", f, horizonNow(t.horizon().get().ageMicros()));
        return DSL.insertInto(t.table()).columns(columns).select(DSL.select(values).where(gate)).onDuplicateKeyUpdate().set(guarded);
    }

    /** {@code TIMESTAMPDIFF(MICROSECOND, epoch, UTC_TIMESTAMP(6))}: Unix microseconds at the statement's start, exact. */
    private static final String STATEMENT_MICROS = "timestampdiff(microsecond, timestamp '1970-01-01 00:00:00', utc_timestamp(6))";

    /**
     * Unix microseconds by the server's clock when the expression runs, after any wait of the statement: the
     * statement's start in UTC plus the time since, {@code TIMESTAMPDIFF(MICROSECOND, NOW(6), SYSDATE(6))}.
     * MySQL has no UTC {@code SYSDATE()}; the difference of two readings in the session's zone is the time
     * elapsed, so no session zone is set or assumed (as the MySQL lock backend reads its clock). One
     * {@code SYSDATE(6)} reading per evaluation; {@code NOW(6)} and {@code UTC_TIMESTAMP(6)} are the statement's start.
     */
    private static final String WALL_MICROS = "(" + STATEMENT_MICROS + " + timestampdiff(microsecond, now(6), sysdate(6)))";

    /**
     * {@code tick(clock - micros)} as {@link ClockFloor#floorAtMicros} computes it (10 µs ticks since 2025-01-01,
     * never below 0; {@code DIV} of a non-negative integer is the floor), from {@code clock}, an integer of
     * Unix microseconds.
     */
    private static Field<Long> tickAgo(String clock, long micros) {
        return DSL.field("greatest(0, " + clock + " - " + (ClockFloor.EPOCH_MILLIS * 1000 + micros) + ") div "
                + ClockFloor.MICROS_PER_FENCE, SQLDataType.BIGINT);
    }

    /** Rule 1's horizon, {@code tick(now - micros)}, with now read when it is evaluated ({@link #WALL_MICROS}). */
    static Field<Long> horizonNow(long micros) {
        return tickAgo(WALL_MICROS, micros);
    }

    /**
     * A purge's horizon, {@code tick(start - micros)}, with {@code start} the statement's start: constant in
     * the statement, so InnoDB can use it as an index range, and read no later than the rows are deleted, so
     * a tombstone is judged old a moment late, never early.
     */
    static Field<Long> purgeHorizon(long micros) {
        return tickAgo(STATEMENT_MICROS, micros);
    }

    /**
     * The upsert of a table with a horizon ({@link #upsertQuery}): its insert arm gated by rule 1, its update arm
     * guarded by the write rule as without a horizon. What it did is told by the insert id (or the session's
     * {@code LAST_INSERT_ID()}, which the gate clears first): the mark (an admitted update), a refusal, or
     * neither, an insert when it counted a row, else no row at all. An insert is followed by a second reading
     * of the horizon ({@code SELECT}, after the insert and any wait on the key, which the gate's reading in the
     * {@code INSERT} preceded); the caller rolls it back if the fence is at or below it. When the gate refused
     * the insert, the key may still have a record, which the write rule alone judges: a fenced {@code UPDATE}
     * of it (the upsert's assignments, the tombstone cleared) applies the write there.
     */
    @Override
    public Optional<Created> runHorizonUpsert(Session session, FencedStatements t, List<Field<?>> columns, StatementShape upsert,
            Object[] binds, FencedStatements.Rendering r) throws SQLException {
        long mark = MARKS.incrementAndGet();
        binds[MARK] = mark;
        long[] result = session.executeWithInsertId(upsert, binds);
        long reported = result[1];
        if (reported < 0 || (result[0] == 0 && reported == 0)) {
            // Run through jOOQ (no insert id), or a count of 0, for which MySQL Connector/J hands out none: the session has it.
            reported = lastInsertId(session, binds);
        }
        if (reported >= STALE_MARK) {
            return Optional.empty(); // a record refused the fence; the read that follows tells its fence
        }
        if (reported == mark) {
            return Optional.of(new Created(false, -1)); // the record admitted it (changed, or already these values)
        }
        if (result[0] > 0) {
            return Optional.of(new Created(true, horizon(session, t, r)));
        }
        // The gate refused the insert: a fence at or below the horizon. A record the write rule admits takes it.
        if (session.execute(reviveUpdate(t, columns, r), binds) == 1 || lastInsertId(session, binds) == mark) {
            return Optional.of(new Created(false, -1));
        }
        return Optional.empty();
    }

    /** {@code SELECT LAST_INSERT_ID()}. */
    private static long lastInsertId(Session session, Object[] binds) throws SQLException {
        return ((Number) session.fetch(LAST_INSERT_ID, binds).getFirst()[0]).longValue();
    }

    /** {@code SELECT <horizon>}: rule 1's horizon now, read after the statements before it. */
    private static long horizon(Session session, FencedStatements t, FencedStatements.Rendering r) throws SQLException {
        StatementShape read = t.custom("horizon_now", List.of(), 0, r,
                () -> DSL.select(horizonNow(t.horizon().orElseThrow().ageMicros())));
        return ((Number) session.fetch(read, new Object[FencedStatements.FIRST_VALUE]).getFirst()[0]).longValue();
    }

    /**
     * {@code UPDATE t SET <columns>[, tombstone = false], fence = IF(LAST_INSERT_ID(:mark) = 0, NULL, :f)
     * WHERE key = :k AND <rule>}: an upsert of a key that has a record (live or a tombstone), by the write rule alone.
     */
    private static StatementShape reviveUpdate(FencedStatements t, List<Field<?>> columns, FencedStatements.Rendering r) {
        return t.custom("horizon_revive", columns, 0, r, () -> {
            Map<Field<?>, Object> set = t.assign(columns, FencedStatements.FIRST_VALUE, false);
            t.tombstone().ifPresent(d -> set.put(d, DSL.inline(false, d)));
            set.put(t.fence(), INSTANCE.assignedFence(t));
            return DSL.update(t.table()).set(set).where(t.key().eq(slot(KEY, t.key()))).and(t.admits(slot(FENCE, t.fence())));
        });
    }

    /** {@code SELECT <horizon>, key, fence[, tombstone] FROM (SELECT 1) LEFT JOIN t ON key = :k}: one statement, one clock reading. */
    @Override
    public HorizonRead readWithHorizon(Session session, FencedStatements t, Object[] binds, FencedStatements.Rendering r)
            throws SQLException {
        StatementShape read = t.custom("read_with_horizon", List.of(), 0, r, () -> {
            List<Field<?>> fields = new ArrayList<>(List.of(horizonNow(t.horizon().orElseThrow().ageMicros()), t.key(), t.fence()));
            t.tombstone().ifPresent(fields::add);
            return DSL.select(fields).from(DSL.selectOne().asTable("fg_one")).leftJoin(t.table()).on(t.key().eq(slot(KEY, t.key())));
        });
        Object[] row = session.fetch(read, binds).getFirst();
        return new HorizonRead(t.row(row, 1), ((Number) row[0]).longValue());
    }

    /** The most keys one purge {@code DELETE .. IN (..)} names (padded to a power of two): a batch may hold up to 100,000. */
    static final int KEYS_PER_DELETE = 1024;

    /**
     * One batch, in one transaction (on an auto-commit connection, of its own at read committed: under
     * repeatable read the locking scan would also lock the gaps it passes, holding up inserts of new keys there):
     * <pre>
     * SELECT key FROM t WHERE tombstone AND fence &lt; &lt;purge horizon&gt; [AND key &gt; :cursor] ORDER BY key LIMIT n
     *   FOR UPDATE SKIP LOCKED
     * DELETE FROM t WHERE key IN (..) AND tombstone AND fence &lt; &lt;purge horizon&gt;     -- per 1024 keys
     * </pre>
     * InnoDB's locking reads judge each row's newest version: a tombstone a write holds is skipped (left for a
     * later purge); one it revived or raised and committed before the {@code SELECT} no longer matches; the
     * {@code DELETE} checks the condition again on the rows the {@code SELECT} locked, which no write can change
     * in between. The purge horizon is the statement's start ({@link #purgeHorizon}). MariaDB 10.6+, MySQL 8.0+
     * ({@code SKIP LOCKED}).
     */
    @Override
    public PurgeBatch purgeBatch(Session session, FencedStatements t, Object cursor, int batchSize, FencedStatements.Rendering r)
            throws SQLException {
        boolean after = cursor != null;
        long micros = t.horizon().orElseThrow().purgeMicros();
        Field<Boolean> tombstone = t.tombstone().orElseThrow();
        Condition purgeable = tombstone.isTrue().and(DSL.condition("{0} < {1}", t.fence(), purgeHorizon(micros)));
        StatementShape select = t.custom(after ? "purge_select_after" : "purge_select_first", List.of(), batchSize, r, () -> DSL
                .select(t.key()).from(t.table()).where(after ? purgeable.and(t.key().gt(slot(KEY, t.key()))) : purgeable)
                .orderBy(t.key()).limit(DSL.inline(batchSize)).forUpdate().skipLocked());
        Object[] binds = new Object[FencedStatements.FIRST_VALUE];
        binds[KEY] = cursor;
        return session.inTransaction(java.sql.Connection.TRANSACTION_READ_COMMITTED, s -> {
            List<Object> keys = new ArrayList<>();
            for (Object[] row : s.fetch(select, binds)) {
                keys.add(t.readKey(row[0]));
            }
            int removed = 0;
            for (int from = 0; from < keys.size(); from += KEYS_PER_DELETE) {
                List<Object> chunk = keys.subList(from, Math.min(keys.size(), from + KEYS_PER_DELETE));
                int padded = FencedStatements.padded(chunk.size());
                StatementShape delete = t.custom("purge_delete", List.of(), padded, r, () -> DSL.deleteFrom(t.table())
                        .where(t.key().in(t.keySlots(FencedStatements.FIRST_VALUE, padded))).and(purgeable));
                Object[] named = new Object[FencedStatements.FIRST_VALUE + padded];
                for (int i = 0; i < padded; i++) {
                    named[FencedStatements.FIRST_VALUE + i] = chunk.get(Math.min(i, chunk.size() - 1)); // padding repeats the last key
                }
                removed += s.execute(delete, named);
            }
            return new PurgeBatch(keys.size(), keys.isEmpty() ? null : keys.getLast(), removed);
        });
    }

    @SuppressWarnings("unchecked")
    private static Field<Object> guard(Condition admits, Field<?> value, Field<?> column) {
        return DSL.when(admits, (Field<Object>) value).otherwise((Field<Object>) column);
    }

    @Override
    public Upserted runUpsert(Session session, StatementShape upsert, Object[] binds) throws SQLException {
        binds[MARK] = MARKS.incrementAndGet();
        long[] result = session.executeWithInsertId(upsert, binds);
        long insertId = result[1];
        if (insertId >= STALE_MARK) {
            return new Upserted(false, insertId - STALE_MARK);
        }
        if (insertId == (Long) binds[MARK]) {
            return new Upserted(true, -1); // an admitted update of the row
        }
        if (result[0] == 0) {
            // Changed-row counts: the key's row was there and kept its values, admitted as they were or refused. Both
            // ways the statement set the session's LAST_INSERT_ID() (to the mark, or to the refusing fence + 2^62),
            // but MySQL Connector/J hands out no generated key for a count of 0: read it.
            long reported = ((Number) session.fetch(LAST_INSERT_ID, binds).getFirst()[0]).longValue();
            if (reported >= STALE_MARK) {
                return new Upserted(false, reported - STALE_MARK);
            }
            return new Upserted(reported == (Long) binds[MARK], -1);
        }
        if (insertId >= 0) {
            return new Upserted(true, -1); // counted, no refusal reported: inserted, updated, or already these values
        }
        // Run through jOOQ, no insert id: 2 is an update; 1 may be a refusal, read the row to tell.
        return new Upserted(result[0] == 2, -1);
    }

    /** {@code SELECT LAST_INSERT_ID()}: what the statement before it reported. */
    private static final StatementShape LAST_INSERT_ID = new StatementShape("select last_insert_id()", new int[0], List.of(), true);

    /**
     * One single-key fenced {@code UPDATE} per key; one that counted 0 is followed by a read of the mark,
     * since with changed-row counts it may have matched a row that already held the values.
     */
    @Override
    public Set<Object> updateAll(Session session, FencedStatements t, List<Field<?>> columns, Collection<Object> keys, int padded,
            Object[] binds, FencedStatements.Rendering r) throws SQLException {
        StatementShape update = t.update(columns, r);
        StatementShape marked = t.custom("marked", List.of(), 0, r,
                () -> DSL.select(DSL.field("last_insert_id() = {0}", SQLDataType.BIGINT, FencedStatements.markSlot())));
        Object[] one = binds.clone();
        Set<Object> applied = new HashSet<>();
        for (Object key : keys) {
            one[KEY] = key;
            if (runUpdate(session, update, one) || ((Number) session.fetch(marked, one).getFirst()[0]).longValue() == 1) {
                applied.add(key);
            }
        }
        return applied;
    }

    @Override
    public TombstoneWrite recordTombstone(Session session, FencedStatements t, boolean delete, List<Field<?>> placeholders,
            Object[] binds, FencedStatements.Rendering r) throws SQLException {
        Read read = readAfterMiss(session, t, binds, r);
        FencedStatements.Row seen = read.row();
        if (read.matched()) { // the claim's or delete's UPDATE matched a row that already held these values
            return new TombstoneWrite(true, delete, false, seen);
        }
        if (seen == null) {
            return insertTombstone(session, t, placeholders, binds, r);
        }
        long presented = dev.fenceguard.core.spi.WriteRule.decode(binds[FENCE]);
        boolean admits = t.rule().policy() == FencePolicy.SAME_OR_NEWER ? seen.fence() <= presented : seen.fence() < presented;
        if (!admits || delete || !seen.deleted()) {
            // Refused; or the row changed after the UPDATE, which would have matched it as it is now: try again.
            return new TombstoneWrite(false, false, false, seen);
        }
        // A claim of a deleted row: raise its fence. A tombstone that already holds this fence needs nothing; any
        // other admitted one changes, so the count says whether it matched, whichever way rows are counted.
        boolean raised = seen.fence() == presented || session.execute(raiseTombstone(t, r), binds) == 1;
        return new TombstoneWrite(false, false, raised, seen);
    }

    /**
     * A plain {@code INSERT} of the tombstone row of a key the read found without one. A concurrent insert of
     * the key makes it fail on the key (1062), or, in a table that refuses the tombstone row (a column without
     * a default), fail on that before the key is checked: then the row is read again and the write tried
     * again, rather than reported as refused, since a key with a row never needs the insert.
     */
    private static TombstoneWrite insertTombstone(Session session, FencedStatements t, List<Field<?>> placeholders, Object[] binds,
            FencedStatements.Rendering r) throws SQLException {
        try {
            if (session.execute(insertTombstone(t, placeholders, r), binds) == 1) {
                // Under a horizon the gate read the clock before the insert's wait on the key: read it again after.
                return t.horizon().isEmpty() ? new TombstoneWrite(true, true, false, null)
                        : new TombstoneWrite(true, true, false, null, true, horizon(session, t, r));
            }
        } catch (SQLException e) {
            if (SqlCauses.of(e).map(SQLException::getErrorCode).orElse(0) != DUPLICATE_KEY) {
                if (!MySqlErrors.rowRefused(e)) {
                    throw e;
                }
                List<Object[]> rows = session.fetch(t.readRow(r), binds);
                if (rows.isEmpty()) {
                    throw e; // the table refuses the tombstone row itself
                }
                return new TombstoneWrite(false, false, false, t.row(rows.getFirst(), 0));
            }
        }
        // The key appeared meanwhile (try again); or, under a horizon, the gate refused the fence (the read tells).
        return new TombstoneWrite(false, false, false, null);
    }

    /**
     * {@code INSERT INTO t (key, fence, tombstone[, placeholders]) VALUES (:k, :f, true[, ..])}; under a horizon
     * {@code INSERT .. SELECT :k, :f, true[, ..] FROM DUAL WHERE :f > <horizon>} (rule 1: it inserts nothing at
     * or below the horizon).
     */
    private static StatementShape insertTombstone(FencedStatements t, List<Field<?>> placeholders, FencedStatements.Rendering r) {
        return t.custom("insert_tombstone", placeholders, 0, r, () -> {
            Field<Boolean> tombstone = t.tombstone().orElseThrow();
            List<Field<?>> columns = new ArrayList<>(List.of(t.key(), t.fence(), tombstone));
            List<Field<?>> values = new ArrayList<>(List.of(slot(KEY, t.key()), slot(FENCE, t.fence()), DSL.inline(true, tombstone)));
            t.assign(placeholders, FencedStatements.FIRST_VALUE, false).forEach((column, value) -> {
                columns.add(column);
                values.add((Field<?>) value);
            });
            if (t.horizon().isEmpty()) {
                return DSL.insertInto(t.table()).columns(columns).values(values);
            }
            Condition gate = DSL.condition("{0} > {1}", slot(FENCE, t.fence()), horizonNow(t.horizon().get().ageMicros()));
            return DSL.insertInto(t.table()).columns(columns).select(DSL.select(values).where(gate));
        });
    }

    /** {@code UPDATE t SET fence = :f WHERE key = :k AND <rule> AND tombstone}: a claim raising a tombstone's fence. */
    private static StatementShape raiseTombstone(FencedStatements t, FencedStatements.Rendering r) {
        return t.custom("raise_tombstone", List.of(), 0, r, () -> DSL.update(t.table()).set(Map.<Field<?>, Object>of(t.fence(), slot(FENCE, t.fence())))
                .where(t.key().eq(slot(KEY, t.key()))).and(t.admits(slot(FENCE, t.fence())))
                .and(DSL.coalesce(t.tombstone().orElseThrow(), DSL.inline(false)).isTrue()));
    }

    /**
     * The read after a miss and, with a tombstone column, the tombstone insert (no placeholder columns) and the
     * claim's raise of a tombstone; with a horizon, the upsert's update of a record it found; the per-key
     * {@code UPDATE} of {@code updateAll} is the update's own.
     */
    @Override
    public List<StatementShape> warmUpShapes(FencedStatements t, List<Field<?>> columns, FencedStatements.Rendering r) {
        List<StatementShape> shapes = new ArrayList<>();
        if (t.tombstone().isPresent()) {
            shapes.add(insertTombstone(t, List.of(), r));
            shapes.add(raiseTombstone(t, r));
        }
        if (t.horizon().isPresent()) {
            shapes.add(reviveUpdate(t, columns, r));
        }
        return shapes;
    }

    /** {@link Session#explain}: both drivers prepare on the client, where describing reaches no server. */
    @Override
    public void describe(Session session, StatementShape shape) throws SQLException {
        session.explain(shape);
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
