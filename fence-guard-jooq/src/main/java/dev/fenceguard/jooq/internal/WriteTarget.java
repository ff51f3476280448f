package dev.fenceguard.jooq.internal;

import dev.fenceguard.jdbc.internal.SqlCauses;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;

/**
 * Where a fenced write runs: on the connection of a caller's {@code DSLContext} or {@code Connection},
 * inside whatever transaction it is in, or on a connection of its own from a {@code DataSource}. Every
 * database error comes out as a {@code FenceGuardException} mapped by the dialect, whichever way it was
 * raised (by the driver, or wrapped by jOOQ or by a framework's exception translator).
 */
public abstract class WriteTarget {

    /** A write's statements, run in one {@link Session}. */
    public interface Work<T> {
        T apply(Session session) throws SQLException;
    }

    private final FencingDialect dialect;

    private WriteTarget(FencingDialect dialect) {
        this.dialect = dialect;
    }

    /** The statements of a write on the connection {@code ctx} provides, with {@code ctx}'s configuration for jOOQ. */
    public static WriteTarget of(DSLContext ctx, FencingDialect dialect) {
        return new WriteTarget(dialect) {
            @Override
            <T> T onConnection(Work<T> work) {
                return ctx.connectionResult(c -> work.apply(new Session(c, ctx, dialect.jooqDialect())));
            }
        };
    }

    /** The statements of a write on {@code connection}; never commits or rolls back. */
    public static WriteTarget of(Connection connection, FencingDialect dialect) {
        return new WriteTarget(dialect) {
            @Override
            <T> T onConnection(Work<T> work) throws SQLException {
                return work.apply(new Session(connection, null, dialect.jooqDialect()));
            }
        };
    }

    /**
     * The statements of a write on a connection of their own from a pool, committed before it returns. Some
     * pools hand connections out with auto-commit off; the work is then committed (or rolled back on failure)
     * here, so that a write never stays pending in a connection that goes back to the pool.
     */
    public static WriteTarget of(DataSource dataSource, FencingDialect dialect) {
        return new WriteTarget(dialect) {
            @Override
            <T> T onConnection(Work<T> work) throws SQLException {
                try (Connection c = dataSource.getConnection()) {
                    boolean autoCommit = c.getAutoCommit();
                    try {
                        T result = work.apply(new Session(c, null, dialect.jooqDialect()));
                        if (!autoCommit) {
                            c.commit();
                        }
                        return result;
                    } catch (SQLException | RuntimeException e) {
                        if (!autoCommit) {
                            c.rollback();
                        }
                        throw e;
                    }
                }
            }
        };
    }

    abstract <T> T onConnection(Work<T> work) throws SQLException;

    /**
     * Runs {@code work}.
     *
     * @param resource what the write concerns, for errors
     * @param operation what it does, for errors
     */
    public <T> T run(String resource, String operation, Work<T> work) {
        try {
            return onConnection(work);
        } catch (SQLException e) {
            throw dialect.map(e, resource, operation);
        } catch (RuntimeException e) {
            if (e instanceof DataAccessException || SqlCauses.of(e).isPresent()) {
                throw dialect.map(e, resource, operation);
            }
            throw e; // fence-guard's own (already a FenceGuardException), or a bug that should show as it is
        }
    }
}
