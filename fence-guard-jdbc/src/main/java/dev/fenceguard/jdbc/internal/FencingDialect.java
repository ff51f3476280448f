package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.FenceGuardException;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import org.jooq.Field;
import org.jooq.Query;
import org.jooq.ResultQuery;
import org.jooq.SQLDialect;
import org.jooq.UpdateConditionStep;

/**
 * The part of fenced writes that differs between databases: the statements that standard SQL has no
 * one-statement form for (an upsert whose update is conditional, an update that reports which rows it
 * changed, recording a tombstone atomically against a concurrent insert), how an update count reads,
 * and the database's errors. Everything else, the fenced {@code UPDATE}s, the reads that tell
 * {@code Stale} from {@code NotFound}, rendering, caching, binding and judging, is shared
 * ({@link FencedStatements}, {@link Session}, {@code FencedWriter}).
 *
 * <p>Statements are built with the slot parameters of {@link FencedStatements#slot} so that they can
 * be rendered once and cached. One implementation per database; {@link PostgresFencing} is the only
 * one so far.
 */
public interface FencingDialect {

    /** The database, as the stale-write metric tags resources: {@code postgres}, ... */
    String resourceType();

    /** The jOOQ dialect statements are rendered in, and run in when they go through jOOQ. */
    SQLDialect jooqDialect();

    /** Whether a caller's {@code DSLContext} of {@code dialect} speaks this database. */
    default boolean accepts(SQLDialect dialect) {
        return dialect.family() == jooqDialect().family();
    }

    /** Whether {@code rows}, the update count of a single-key fenced statement, means it wrote the row. */
    boolean applied(int rows);

    /**
     * Inserts {@code insert}, or on a conflict of the key replaces the row with {@code update} if
     * {@code t.admits} the presented fence; one statement, atomic.
     */
    Query upsert(FencedStatements t, Map<Field<?>, Object> insert, Map<Field<?>, Object> update);

    /** {@code update}, returning the key of each row it changed. */
    ResultQuery<?> returningKeys(FencedStatements t, UpdateConditionStep<?> update);

    /**
     * The statement a claim or delete runs when its {@code UPDATE} matched nothing: records the fence on
     * a tombstone if the rule admits it (inserting a tombstoned row, with {@code placeholders}, for a
     * key without one) and reads the row as it found it; its one result row is read by
     * {@link #tombstoneWrite}.
     */
    ResultQuery<?> recordTombstone(FencedStatements t, boolean delete, Map<Field<?>, Object> placeholders);

    /** What {@link #recordTombstone}'s result row says happened. */
    TombstoneWrite tombstoneWrite(FencedStatements t, Object[] row);

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
    record TombstoneWrite(boolean recorded, boolean deletedAfter, boolean raised, FencedStatements.Row seen) {}
}
