package dev.fenceguard.jooq.internal;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Runs work on a connection of its own from a pool. Some pools hand connections out with auto-commit
 * off; the work is then committed (or rolled back on failure) here, so that a write never stays
 * pending in a connection that goes back to the pool.
 */
public final class OwnConnection {

    /** Work on a connection. */
    public interface Work<T> {
        T apply(Connection c) throws SQLException;
    }

    private OwnConnection() {}

    public static <T> T run(DataSource dataSource, Work<T> work) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            try {
                T result = work.apply(c);
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
}
