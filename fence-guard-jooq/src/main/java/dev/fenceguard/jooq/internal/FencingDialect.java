package dev.fenceguard.jooq.internal;

import dev.fenceguard.core.FenceGuardException;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jooq.Field;
import org.jooq.Query;
import org.jooq.SQLDialect;

/**
 * The part of fenced writes that differs between databases: the statements that standard SQL has no
 * one-statement form for (an upsert whose update is conditional, an update that reports which rows it
 * changed, recording a tombstone atomically against a concurrent insert), how an update count reads,
 * and the database's errors. Everything else, the fenced {@code UPDATE}s, the reads that tell
 * {@code Stale} from {@code NotFound}, rendering, caching, binding and judging, is shared
 * ({@link FencedStatements}, {@link Session}, {@code FencedWriter}).
 *
 * <p>Statements are built with the slot parameters of {@link FencedStatements#slot} so that they can
 * be rendered once and cached. One implementation per database family: {@link PostgresFencing} and
 * {@link MySqlFencing} (MySQL and MariaDB).
 */
public interface FencingDialect {

    /** The database, as the stale-write metric tags resources: {@code postgres}, {@code mysql}. */
    String resourceType();

    /** The jOOQ dialect statements are rendered in, and run in when they go through jOOQ. */
    SQLDialect jooqDialect();

    /** Whether a caller's {@code DSLContext} of {@code dialect} speaks this database. */
    default boolean accepts(SQLDialect dialect) {
        return dialect.family() == jooqDialect().family();
    }

    /**
     * Whether {@code rows}, the update count of a single-key fenced statement, means it wrote the row: one row.
     * A count of 0 is not a verdict; {@link #readAfterMiss} reads why.
     */
    default boolean applied(int rows) {
        return rows == 1;
    }

    /**
     * The value a fenced {@code UPDATE} (an update, a claim, a delete's mark) assigns to the fence column:
     * the presented fence, in a form that lets {@link #readAfterMiss} tell whether the statement matched
     * the row. Plain {@code :f} by default.
     */
    default Field<?> assignedFence(FencedStatements t) {
        return FencedStatements.slot(FencedStatements.FENCE, t.fence());
    }

    /**
     * Runs a single-key fenced {@code UPDATE} built by {@link FencedStatements#update} or
     * {@link FencedStatements#markDeleted}.
     *
     * @return whether its count says it matched the row; when false, {@link #readAfterMiss} is next
     */
    default boolean runUpdate(Session session, StatementShape update, Object[] binds) throws SQLException {
        return applied(session.execute(update, binds));
    }

    /**
     * After {@link #runUpdate} returned false: the row of the key, and whether that {@code UPDATE} matched
     * it after all (a database that counts changed rows counts 0 for a row that already held the values).
     * By default the row alone, read by {@link FencedStatements#readRow}: a count of 0 is a miss.
     */
    default Read readAfterMiss(Session session, FencedStatements t, Object[] binds, FencedStatements.Rendering r) throws SQLException {
        List<Object[]> rows = session.fetch(t.readRow(r), binds);
        return new Read(rows.isEmpty() ? null : t.row(rows.getFirst(), 0), false);
    }

    /**
     * What {@link #readAfterMiss} found.
     *
     * @param row the row as read, or null if the key has none
     * @param matched the {@code UPDATE} before the read matched the row (it is applied)
     */
    record Read(FencedStatements.Row row, boolean matched) {}

    /**
     * Inserts {@code insert}, or on a conflict of the key replaces the row with {@code update} if
     * {@code t.admits} the presented fence; one statement, atomic. Built once per shape.
     */
    Query upsertQuery(FencedStatements t, Map<Field<?>, Object> insert, Map<Field<?>, Object> update);

    /**
     * Runs the upsert shape {@code upsert} ({@link #upsertQuery}) with {@code binds}.
     *
     * @return whether it was applied, and when the statement itself reported a refusal, the fence that refused it
     */
    Upserted runUpsert(Session session, StatementShape upsert, Object[] binds) throws SQLException;

    /**
     * The fenced update of {@code columns} on each of {@code keys} (at most {@code padded}, the values in
     * {@code binds} from {@link FencedStatements#FIRST_VALUE}); returns the keys it changed.
     */
    Set<Object> updateAll(Session session, FencedStatements t, List<Field<?>> columns, Collection<Object> keys, int padded,
            Object[] binds, FencedStatements.Rendering r) throws SQLException;

    /**
     * What a claim or delete runs when its {@code UPDATE} matched nothing: records the fence on a
     * tombstone if the rule admits it (inserting a tombstoned row, with the {@code placeholders}, for a
     * key without one), atomically against a concurrent insert of the key, and tells what it found.
     */
    TombstoneWrite recordTombstone(Session session, FencedStatements t, boolean delete, List<Field<?>> placeholders,
            Object[] binds, FencedStatements.Rendering r) throws SQLException;

    /** Whether {@code e} is the table refusing a row fence-guard inserted (a constraint, a missing value). */
    boolean rowRefused(SQLException e);

    /** {@code e} as a {@link FenceGuardException}, mapped by the database's error code in its cause chain. */
    FenceGuardException map(Throwable e, String resource, String operation);

    /** The column a refused row violated, as the database named it, if it did. */
    Optional<String> column(SQLException e);

    /** The constraint a refused row violated, as the database named it, if it did. */
    Optional<String> constraint(SQLException e);

    /**
     * What the tombstone statement did.
     *
     * @param recorded the tombstone now holds the presented fence (inserted, or an admitted conflict updated)
     * @param deletedAfter when recorded: whether the row it wrote is a tombstone
     * @param raised a claim raised the fence of an existing tombstone
     * @param seen the row as the statement found it, or null if there was none
     */
    record TombstoneWrite(boolean recorded, boolean deletedAfter, boolean raised, FencedStatements.Row seen, boolean inserted,
            long horizonAfter) {

        /** Without a horizon: nothing to re-check. */
        public TombstoneWrite(boolean recorded, boolean deletedAfter, boolean raised, FencedStatements.Row seen) {
            this(recorded, deletedAfter, raised, seen, false, -1);
        }
    }

    /**
     * Runs the upsert shape of a table with a horizon ({@link #upsertQuery} of {@code columns}), whose insert
     * arm admits only a fence above the horizon, while a key that has a record is judged by the write rule
     * alone; reports what it wrote. Runs under {@link Session#undoable}: the caller rolls back a row it
     * inserted at or below {@link Created#horizonAfter}.
     *
     * @return empty if it wrote nothing; else whether it inserted the row and the horizon read after any wait
     */
    Optional<Created> runHorizonUpsert(Session session, FencedStatements t, List<Field<?>> columns, StatementShape upsert,
            Object[] binds, FencedStatements.Rendering r) throws SQLException;

    /**
     * What a write that may create a record wrote.
     *
     * @param inserted it inserted the row (the key had none)
     * @param horizonAfter the horizon, read from the clock after the statement's last wait
     */
    record Created(boolean inserted, long horizonAfter) {}

    /**
     * The row of the key (or null) and the horizon now, in one statement: what a write of a table with a
     * horizon reads when its statement wrote nothing.
     */
    HorizonRead readWithHorizon(Session session, FencedStatements t, Object[] binds, FencedStatements.Rendering r)
            throws SQLException;

    /**
     * What {@link #readWithHorizon} read.
     *
     * @param row the row, or null
     * @param horizon the horizon (the clock floor of now minus the horizon age)
     */
    record HorizonRead(FencedStatements.Row row, long horizon) {}

    /**
     * One batch of a purge: removes tombstones below the purge horizon with a key after {@code cursor}
     * (null: from the first key), at most {@code batchSize}, skipping rows locked by writes.
     */
    PurgeBatch purgeBatch(Session session, FencedStatements t, Object cursor, int batchSize, FencedStatements.Rendering r)
            throws SQLException;

    /**
     * What one purge batch did.
     *
     * @param examined tombstones it locked (at most the batch size; fewer means it reached the last key)
     * @param last the greatest key it locked, or null if none
     * @param removed tombstones it removed
     */
    record PurgeBatch(int examined, Object last, int removed) {}

    /**
     * What an upsert's statement said.
     *
     * @param applied it wrote the row
     * @param staleFence when not applied and the statement reported it: the fence that refused the write,
     *     else -1 (the row is read to tell)
     */
    record Upserted(boolean applied, long staleFence) {}

    /**
     * Has the database check {@code shape} without running it, for a warm-up: JDBC's
     * {@link Session#describe} by default.
     */
    default void describe(Session session, StatementShape shape) throws SQLException {
        session.describe(shape);
    }

    /**
     * The dialect's own statements a warm-up should have the database describe for {@code columns}
     * (the shared ones, such as the upsert and the row reads, are described anyway). None by default.
     */
    default List<StatementShape> warmUpShapes(FencedStatements t, List<Field<?>> columns,
            FencedStatements.Rendering r) {
        return List.of();
    }
}
