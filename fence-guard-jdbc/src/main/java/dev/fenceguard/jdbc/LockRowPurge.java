package dev.fenceguard.jdbc;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.PurgeLoop;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.TableSettings;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The purge of free lock rows of one SQL lock backend, one batch at a time ({@code docs/fence-lifecycle.md}):
 * {@link FenceGuardJdbc#purgeLocks} runs the batches, meters them and keeps the cursor.
 */
interface LockRowPurge {

    /** The floor table, one row per lock table, created by the lock table's second migration (fence-guard-migrations). */
    String FLOOR_TABLE = "fence_guard_lock_floors";

    /**
     * The tables a lock backend's statements use, for the hint of an undefined-table error: a lock table made
     * by hand before the floor table existed fails on its first new key with only the floor table missing.
     *
     * @param quote {@code "} (PostgreSQL) or {@code `} (MariaDB, MySQL)
     */
    static String tablesUsed(TableSettings b, char quote) {
        String schema = quote + b.schema() + quote + ".";
        return "the lock table " + schema + quote + b.table() + quote + " and its floor table " + schema + quote + FLOOR_TABLE
                + quote + " (the lock table's second migration)";
    }

    /** The failure of a purge that found no floor row for its table: it removed nothing. */
    static FenceGuardException missingFloor(String table, String tableName) {
        return new FenceGuardException(ErrorCode.INVALID_ARGUMENT, null, "purge of lock rows on " + table + " needs the row '"
                + tableName + "' in " + FLOOR_TABLE + " (the lock table's second migration, FenceGuardMigrations, adds it): "
                + "without it an acquisition could not see what a purge removed; nothing was removed");
    }

    /** The name of the backend's store, for the meter ({@code store} tag). */
    String name();

    /**
     * One batch, in one transaction: locks the table's floor row, removes at most {@code size} free rows
     * whose key sorts after {@code after} (whose fence is also below {@code tick(clock - margin)} under
     * {@code CLOCK_FLOORED}), and raises the floor to the highest fence removed.
     *
     * @param after the key to start after, or {@code ""} for the first key (no lock key is empty)
     * @return the free rows it locked and looked at, the last key among them, and the rows it removed
     */
    CompletableFuture<PurgeLoop.Batch<String>> purgeBatch(String after, int size, long marginMicros, Duration timeout);

    /**
     * {@code work} in one transaction of its own: begun here on an auto-commit connection (and committed,
     * or rolled back on failure, here); on a connection whose auto-commit is off, the caller's
     * ({@link BoundedJdbc} commits it, or rolls it back).
     */
    static <T> BoundedJdbc.Work<T> inTransaction(BoundedJdbc.Work<T> work) {
        return (c, left) -> {
            if (!c.getAutoCommit()) {
                return work.apply(c, left);
            }
            c.setAutoCommit(false);
            try {
                T result = work.apply(c, left);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c);
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        };
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException e) {
            // The connection is likely broken; the original failure says more.
        }
    }
}
